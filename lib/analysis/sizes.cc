// Cardinality propagation and dataset-size estimates; see sizes.h.
#include "analysis/sizes.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace plumber::analysis {
namespace {

using Kind = Cardinality::Kind;

// Two-sided 95% quantile of Student's t with `df` degrees of freedom: the
// spread of a handful of files is itself uncertain, so with 3 files the
// interval must be wider than the normal 1.96 standard errors.
double T975(int64_t df) {
  static constexpr double kTable[] = {12.706204736175, 4.302652729749, 3.182446305284, 2.776445105198, 2.570581835636,
                                      2.446911851145,  2.364624251593, 2.306004135204, 2.262157162798, 2.228138851986,
                                      2.200985160092,  2.178812829667, 2.160368656463, 2.144786687918, 2.131449545560,
                                      2.119905299221,  2.109815577833, 2.100922040241, 2.093024054408, 2.085963447266,
                                      2.079613844728,  2.073873067904, 2.068657610419, 2.063898561628, 2.059538552753,
                                      2.055529438643,  2.051830516480, 2.048407141795, 2.045229642133, 2.042272456301};
  if (df < 1) return kTable[0];
  if (df <= 30) return kTable[df - 1];
  // Cornish-Fisher expansion around the normal quantile; < 0.1% off past 30.
  const double z = 1.959963984540;
  const double d = static_cast<double>(df);
  return z + (z * z * z + z) / (4 * d) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

class Sizer {
 public:
  Sizer(const ProgramGraph& g, const std::vector<NodeWindow>& stats, Analysis* a)
      : g_(g), stats_(stats), a_(*a), card_memo_(g.size()), random_memo_(g.size(), -1) {}

  void Run();

 private:
  // What an op's cardinality rule sees of node i.
  class Inputs final : public CardinalityInputs {
   public:
    Inputs(Sizer* s, int i) : s_(s), i_(i) {}
    Cardinality Input(int k) override {
      const auto& in = s_->g_.inputs(i_);
      return k < static_cast<int>(in.size()) ? s_->Card(in[k]) : Cardinality::Unknown("no input");
    }
    Cardinality Function() override {
      const int root = s_->g_.function(i_);
      return root >= 0 ? s_->Card(root) : Cardinality::Unknown("no function");
    }
    Cardinality FromFiles() override { return s_->ReaderCard(i_); }
    std::optional<Flow> MeasuredFlow() override {
      const schema::NodeStats* st = s_->stats_[i_].end;
      const double in = st ? static_cast<double>(st->elements_consumed()) : 0;
      if (in <= 0) return std::nullopt;
      return Flow{static_cast<double>(st->elements_produced()), in};
    }

   private:
    Sizer* s_;
    int i_;
  };

  Cardinality Card(int i);  // per opened dataset for function nodes
  Cardinality Total(int i);
  Cardinality ReaderCard(int i);
  int RandomBelow(int i);

  const ProgramGraph& g_;
  const std::vector<NodeWindow>& stats_;
  Analysis& a_;
  std::vector<std::optional<Cardinality>> card_memo_;
  std::vector<int> random_memo_;  // -1 unknown, else index of a random node or n
};

Cardinality Sizer::ReaderCard(int i) {
  const schema::Node& node = g_.node(i);
  const OpDef& op = g_.op(i);
  static const NodeFiles kNoFiles;
  const NodeFiles& files = op.files != nullptr ? *op.files(node) : kNoFiles;
  const int owner = g_.enclosing_interleave(i);
  // Files per pass of this node (per opened dataset inside a function), and
  // the population the completed files were sampled from.
  Cardinality nfiles;
  std::optional<double> population;
  if (!files.empty()) {
    nfiles = Cardinality::Exact(files.size());
  } else if (!g_.inputs(i).empty()) {
    nfiles = Card(g_.inputs(i)[0]);
  } else if (owner >= 0) {
    nfiles = Cardinality::Exact(1);  // the file name the interleave hands it
  } else {
    return Cardinality::Unknown("the reader names no files");
  }
  if (nfiles.finite()) {
    population = nfiles.value;
    if (owner >= 0) {
      const Cardinality opened =
          g_.inputs(owner).empty() ? Cardinality::Unknown("") : Total(g_.inputs(owner)[0]);
      population = opened.finite() ? std::optional<double>(nfiles.value * opened.value) : std::nullopt;
    }
  }
  SourceEstimate est;
  est.node = node.name();
  if (population) est.files = static_cast<int64_t>(std::llround(*population));
  const schema::NodeStats* s = stats_[i].end;
  const int64_t k = s ? s->files_completed() : 0;
  est.files_completed = k;
  Cardinality out;
  if (k <= 0) {
    out = Cardinality::Unknown("no file of '" + node.name() + "' was read to its end, so records per file are unknown");
  } else if (!nfiles.finite()) {
    out = nfiles;
  } else {
    const double kd = static_cast<double>(k);
    // Sampling without replacement from `population` files: the finite
    // population correction shrinks the error to zero when all were read.
    const double fpc = population && *population > 0 ? std::sqrt(std::max(0.0, 1.0 - kd / *population)) : 1.0;
    auto spread = [&](double sum, double sumsq) {
      if (k < 2) return 0.0;
      return std::sqrt(std::max(0.0, (sumsq - sum * sum / kd) / (kd - 1)));
    };
    const double rec_mean = static_cast<double>(s->completed_file_records()) / kd;
    const double rec_se =
        spread(static_cast<double>(s->completed_file_records()), s->completed_file_records_sq()) / std::sqrt(kd) * fpc;
    const double t = T975(k - 1);
    const double half = t * rec_se;
    out.kind = Kind::kFinite;
    out.value = nfiles.value * rec_mean;
    out.lo = nfiles.lo * std::max(0.0, rec_mean - half);
    out.hi = nfiles.hi * (rec_mean + half);
    out.exact = nfiles.exact && population && kd >= *population;
    out.interval_known = out.exact || (k >= 2 && nfiles.interval_known);
    est.mean_records_per_file = rec_mean;
    est.mean_file_bytes = static_cast<double>(s->completed_file_bytes()) / kd;
    if (population) {
      const double bytes_se =
          spread(static_cast<double>(s->completed_file_bytes()), s->completed_file_bytes_sq()) / std::sqrt(kd) * fpc;
      est.dataset_bytes = *population * est.mean_file_bytes;
      est.dataset_bytes_stderr = *population * bytes_se;
      est.interval_multiplier = t;
      est.dataset_bytes_lo = std::max(0.0, *est.dataset_bytes - t * est.dataset_bytes_stderr);
      est.dataset_bytes_hi = *est.dataset_bytes + t * est.dataset_bytes_stderr;
      est.exact = out.exact;
      est.interval_known = out.exact || k >= 2;
    }
  }
  a_.sources.push_back(est);
  return out;
}

Cardinality Sizer::Card(int i) {
  if (card_memo_[i]) return *card_memo_[i];
  const schema::Node& node = g_.node(i);
  const schema::NodeStats* s = stats_[i].end;
  Cardinality c;
  if (s && s->has_cardinality() && g_.enclosing_interleave(i) < 0) {
    // The runtime knew it (a resolved glob, a range): exact by definition.
    c = s->cardinality() < 0 ? Cardinality::Infinite("the runtime reports '" + node.name() + "' as infinite")
                             : Cardinality::Exact(static_cast<double>(s->cardinality()));
  } else {
    Inputs inputs(this, i);
    c = g_.op(i).cardinality(node, inputs);
  }
  card_memo_[i] = c;
  return c;
}

Cardinality Sizer::Total(int i) {
  Cardinality c = Card(i);
  const int il = g_.enclosing_interleave(i);
  if (il < 0) return c;
  return MultiplyCardinalities(g_.inputs(il).empty() ? Cardinality::Unknown("no input") : Total(g_.inputs(il)[0]), c);
}

// Index of a random node at or below i (n when none): memoised so a
// 2,000-node chain stays linear.
int Sizer::RandomBelow(int i) {
  const int n = g_.size();
  if (random_memo_[i] >= 0) return random_memo_[i];
  random_memo_[i] = n;
  // The model's flag: the op table's, and a DataLoader's random transforms.
  int found = NodeIsRandom(g_.node(i)) || a_.nodes[i].random ? i : n;
  for (int j : g_.children(i)) {
    if (found != n) break;
    found = RandomBelow(j);
  }
  random_memo_[i] = found;
  return found;
}

void Sizer::Run() {
  const int n = g_.size();
  // Children first, so every memo the recursion needs is already filled
  // and long chains do not recurse deeply.
  const std::vector<int>& order = g_.topological_order();
  for (int i : order) {
    RandomBelow(i);
    Card(i);
  }
  for (int i : order) {
    NodeModel& m = a_.nodes[i];
    m.cardinality = Total(i);
    if (m.cardinality.finite() && m.bytes_per_element) {
      m.materialized_bytes = m.cardinality.value * *m.bytes_per_element;
      m.materialized_lo = m.cardinality.lo * *m.bytes_per_element;
      m.materialized_hi = m.cardinality.hi * *m.bytes_per_element;
    }
    const int rnd = RandomBelow(i);
    if (rnd != n) m.random_below = g_.name(rnd);
    m.cacheable = m.cardinality.finite() && m.random_below.empty();
  }
  std::sort(a_.sources.begin(), a_.sources.end(),
            [&](const SourceEstimate& a, const SourceEstimate& b) { return g_.Find(a.node) < g_.Find(b.node); });
}

}  // namespace

void ModelSizes(const ProgramGraph& graph, const std::vector<NodeWindow>& stats, Analysis* analysis) {
  Sizer(graph, stats, analysis).Run();
}

}  // namespace plumber::analysis
