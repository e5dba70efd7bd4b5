// Builds the model of model.h from a trace header and the window's two
// snapshots: graph facts (interleave functions, caches, depth), per-node
// rates, cardinality propagation, bounds, ranking, cache choice, findings.
#include "analysis/model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "base/units.h"
#include "traceio/op_registry.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

namespace plumber::analysis {
namespace {

using Kind = Cardinality::Kind;
using PC = schema::Node::ParamsCase;

// The params message an op takes, from the op table: a node may omit its
// params (every default wanted), leaving its own params_case unset.
PC OpParams(const schema::Node& node) {
  const OpDef* def = FindOp(node.op());
  return def != nullptr ? def->params_case : node.params_case();
}

// Facts about the program's graph that the model needs more than once.
struct Graph {
  std::vector<const schema::Node*> nodes;
  std::unordered_map<std::string, int> index;
  std::vector<std::vector<int>> inputs;  // resolved input indices
  std::vector<int> function_root;        // interleave -> its function's root
  std::vector<int> owner;                // function node -> enclosing interleave
  std::vector<int> depth;                // hops from the output
  std::vector<bool> under_cache;
  int output = -1;

  int Find(const std::string& name) const {
    auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
  }
  // Inputs plus the function root: what a node's output depends on.
  std::vector<int> Children(int i) const {
    std::vector<int> out = inputs[i];
    if (function_root[i] >= 0) out.push_back(function_root[i]);
    return out;
  }
};

StatusOr<Graph> BuildGraph(const schema::Pipeline& p, const std::string& source) {
  Graph g;
  const int n = p.nodes_size();
  for (int i = 0; i < n; ++i) {
    g.nodes.push_back(&p.nodes(i));
    if (!g.index.emplace(p.nodes(i).name(), i).second) {
      return Status::InvalidArgument(source + ": the traced program has two nodes named '" + p.nodes(i).name() + "'");
    }
  }
  g.inputs.resize(n);
  g.function_root.assign(n, -1);
  g.owner.assign(n, -1);
  g.depth.assign(n, -1);
  g.under_cache.assign(n, false);
  for (int i = 0; i < n; ++i) {
    for (const auto& in : p.nodes(i).inputs()) {
      const int j = g.Find(in);
      if (j < 0) {
        return Status::InvalidArgument(source + ": node '" + p.nodes(i).name() + "': input '" + in +
                                       "' is not a node of the traced program");
      }
      g.inputs[i].push_back(j);
    }
    if (OpParams(p.nodes(i)) == PC::kInterleave) {
      g.function_root[i] = g.Find(p.nodes(i).interleave().function());
    }
  }
  g.output = g.Find(OutputNodeName(p));
  if (g.output < 0) return Status::InvalidArgument(source + ": the traced program has no single output node");

  // Function membership: everything reachable from a function's root
  // through inputs belongs to that interleave (the innermost one wins since
  // nested functions are entered through their own interleave only).
  for (int i = 0; i < n; ++i) {
    if (g.function_root[i] < 0) continue;
    std::vector<int> stack = {g.function_root[i]};
    std::vector<bool> seen(n, false);
    while (!stack.empty()) {
      const int j = stack.back();
      stack.pop_back();
      if (seen[j]) continue;
      seen[j] = true;
      if (g.owner[j] < 0) g.owner[j] = i;
      for (int k : g.inputs[j]) stack.push_back(k);
    }
  }
  // Breadth-first from the output: depth decides which cache candidate is
  // "nearest the root".
  std::vector<int> queue = {g.output};
  g.depth[g.output] = 0;
  for (size_t q = 0; q < queue.size(); ++q) {
    const int i = queue[q];
    for (int j : g.Children(i)) {
      if (g.depth[j] < 0) {
        g.depth[j] = g.depth[i] + 1;
        queue.push_back(j);
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    if (OpParams(*g.nodes[i]) != PC::kCache) continue;
    std::vector<int> stack = g.Children(i);
    while (!stack.empty()) {
      const int j = stack.back();
      stack.pop_back();
      if (g.under_cache[j]) continue;
      g.under_cache[j] = true;
      for (int k : g.Children(j)) stack.push_back(k);
    }
  }
  return g;
}

Cardinality Exact(double v) {
  Cardinality c;
  c.kind = Kind::kFinite;
  c.value = c.lo = c.hi = v;
  c.exact = true;
  return c;
}
Cardinality Infinite(std::string why) {
  Cardinality c;
  c.kind = Kind::kInfinite;
  c.why = std::move(why);
  return c;
}
Cardinality Unknown(std::string why) {
  Cardinality c;
  c.why = std::move(why);
  return c;
}
// Applies a monotone map to the value and both ends of the interval.
Cardinality Map(const Cardinality& in, const std::function<double(double)>& f) {
  if (!in.finite()) return in;
  Cardinality c = in;
  c.value = f(in.value);
  c.lo = f(in.lo);
  c.hi = f(in.hi);
  return c;
}
// Product of two cardinalities (interleave: datasets opened x elements each).
Cardinality Product(const Cardinality& a, const Cardinality& b) {
  if ((a.finite() && a.hi == 0) || (b.finite() && b.hi == 0)) return Exact(0);
  if (a.kind == Kind::kUnknown) return a;
  if (b.kind == Kind::kUnknown) return b;
  if (!a.finite()) return a;
  if (!b.finite()) return b;
  Cardinality c;
  c.kind = Kind::kFinite;
  c.value = a.value * b.value;
  c.lo = a.lo * b.lo;
  c.hi = a.hi * b.hi;
  c.exact = a.exact && b.exact;
  c.interval_known = a.interval_known && b.interval_known;
  return c;
}

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

struct Stats {
  const schema::NodeStats* start = nullptr;
  const schema::NodeStats* end = nullptr;
};

// Four significant digits, as the report's tables print them.
std::string Num(double v) {
  char buf[64];
  if (v != 0 && (std::fabs(v) >= 1e7 || std::fabs(v) < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.3e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

class Modeler {
 public:
  Modeler(const schema::TraceHeader& header, const SelectedWindow& window, const AnalysisOptions& options,
          const std::string& source, const Graph& graph)
      : header_(header), window_(window), opt_(options), source_(source), g_(graph) {}

  StatusOr<Report> Run();

 private:
  Status Window();
  void Machine();
  void Rates();
  void BandwidthFromCurve();
  void Sizes();
  void Bounds();
  void Ranking();
  void Cache();
  void Findings();

  Cardinality Card(int i);  // per opened dataset for function nodes
  Cardinality Total(int i);
  Cardinality ReaderCard(int i);

  const schema::TraceHeader& header_;
  const SelectedWindow& window_;
  const AnalysisOptions& opt_;
  const std::string& source_;
  const Graph& g_;
  Report r_;
  std::vector<Stats> stats_;
  std::vector<std::optional<Cardinality>> card_memo_;
  std::vector<int> random_memo_;  // -1 unknown, else index of a random node or n
};

Status Modeler::Window() {
  const int n = static_cast<int>(g_.nodes.size());
  stats_.assign(n, Stats{});
  for (const auto& s : window_.end.nodes()) {
    const int i = g_.Find(s.name());
    if (i >= 0) stats_[i].end = &s;
  }
  if (window_.start) {
    for (const auto& s : window_.start->nodes()) {
      const int i = g_.Find(s.name());
      if (i >= 0) stats_[i].start = &s;
    }
  }
  const int64_t start_ns = window_.start ? window_.start->wall_ns() : 0;
  r_.window_start_seconds = static_cast<double>(start_ns) * 1e-9;
  r_.window_end_seconds = static_cast<double>(window_.end.wall_ns()) * 1e-9;
  r_.window_seconds = static_cast<double>(window_.end.wall_ns() - start_ns) * 1e-9;
  r_.snapshots = window_.snapshots_seen;
  if (r_.window_seconds <= 0) {
    return Status::InvalidArgument(source_ + ": zero elapsed time in the window; nothing to measure");
  }
  const std::string& out = g_.nodes[g_.output]->name();
  if (std::find(window_.unreliable_nodes.begin(), window_.unreliable_nodes.end(), out) !=
      window_.unreliable_nodes.end()) {
    return Status::InvalidArgument(source_ + ": the output node '" + out +
                                   "' has counters that go backwards in the window; minibatches cannot be counted");
  }
  const Stats& o = stats_[g_.output];
  const int64_t c0 = (o.end ? o.end->elements_produced() : 0) - (o.start ? o.start->elements_produced() : 0);
  if (c0 <= 0) {
    return Status::InvalidArgument(source_ + ": the output node '" + out + "' produced no minibatches between " +
                                   units::FormatSeconds(r_.window_start_seconds) + " and " +
                                   units::FormatSeconds(r_.window_end_seconds) +
                                   "; rates are per minibatch, so nothing can be computed");
  }
  r_.minibatches = c0;
  r_.observed_throughput = static_cast<double>(c0) / r_.window_seconds;
  // What the consumer (the training step) experienced: the paper's measure
  // of an input-bound job.
  const auto& re = window_.end.root();
  const int64_t calls = re.next_calls() - (window_.start ? window_.start->root().next_calls() : 0);
  const int64_t wait = re.wait_ns() - (window_.start ? window_.start->root().wait_ns() : 0);
  if (calls > 0 && wait >= 0) {
    r_.consumer_wait_seconds = static_cast<double>(wait) * 1e-9 / static_cast<double>(calls);
    r_.consumer_wait_fraction = static_cast<double>(wait) * 1e-9 / r_.window_seconds;
  }
  return Status::OK();
}

void Modeler::Machine() {
  const auto& m = header_.machine();
  r_.cores = opt_.cores.value_or(m.cores());
  if (r_.cores <= 0) {
    r_.warnings.push_back("the trace does not record the machine's cores; assuming 1 (give --cores)");
    r_.cores = 1;
  }
  r_.total_memory_bytes = static_cast<uint64_t>(std::max<int64_t>(0, m.memory_bytes()));
  if (opt_.memory_bytes) {
    r_.memory_bytes = *opt_.memory_bytes;
  } else if (m.available_memory_bytes() > 0) {
    // DESIGN.md section 8: the budget is what is free, not what is installed.
    r_.memory_bytes = static_cast<uint64_t>(m.available_memory_bytes());
  } else {
    r_.memory_bytes = r_.total_memory_bytes;
  }
  if (opt_.disk_bandwidth_bytes_per_s) {
    r_.disk_bandwidth = *opt_.disk_bandwidth_bytes_per_s;
    r_.disk_bandwidth_from = "--disk-bandwidth";
  } else if (m.read_bandwidth_bytes_per_s() > 0) {
    r_.disk_bandwidth = m.read_bandwidth_bytes_per_s();
    r_.disk_bandwidth_from = "the trace's read throttle";
  }
}

// Without a throttle or --disk-bandwidth, a calibrated bandwidth-vs-
// parallelism curve says what storage gives at the parallelism the readers
// ran with.
void Modeler::BandwidthFromCurve() {
  const auto& curve = header_.machine().bandwidth_curve();
  if (r_.disk_bandwidth || curve.pieces_size() == 0) return;
  double p = 0;
  for (size_t i = 0; i < r_.nodes.size(); ++i) {
    const OpDef* def = FindOp(g_.nodes[i]->op());
    if (def != nullptr && def->reads_storage) p = std::max(p, r_.nodes[i].cores_now);
  }
  if (p <= 0) return;
  double b = curve.pieces(0).slope() * p + curve.pieces(0).intercept();
  for (const auto& piece : curve.pieces()) b = std::min(b, piece.slope() * p + piece.intercept());
  if (!(b > 0) || !std::isfinite(b)) return;
  r_.disk_bandwidth = b;
  r_.disk_bandwidth_from = "the trace's bandwidth curve at read parallelism " + Num(p);
  r_.disk_bandwidth_from_curve = true;
}

void Modeler::Rates() {
  const int n = static_cast<int>(g_.nodes.size());
  const double c0 = static_cast<double>(r_.minibatches);
  auto delta = [&](int i, int64_t (schema::NodeStats::*f)() const) -> int64_t {
    const Stats& s = stats_[i];
    return (s.end ? (s.end->*f)() : 0) - (s.start ? (s.start->*f)() : 0);
  };
  auto own_parallelism = [&](int i) {
    const Stats& s = stats_[i];
    return s.end && s.end->parallelism() > 0 ? s.end->parallelism() : NodeParallelism(*g_.nodes[i]);
  };
  for (int i = 0; i < n; ++i) {
    const schema::Node& node = *g_.nodes[i];
    NodeModel m;
    m.name = node.name();
    m.op = node.op();
    m.depth = g_.depth[i];
    m.random = NodeIsRandom(node);
    m.parallelism = own_parallelism(i);
    m.reliable = std::find(window_.unreliable_nodes.begin(), window_.unreliable_nodes.end(), m.name) ==
                 window_.unreliable_nodes.end();
    if (m.reliable) {
      m.elements = delta(i, &schema::NodeStats::elements_produced);
      m.bytes = delta(i, &schema::NodeStats::bytes_produced);
      m.cpu_seconds = static_cast<double>(delta(i, &schema::NodeStats::active_cpu_ns)) * 1e-9;
      m.storage_bytes = delta(i, &schema::NodeStats::storage_bytes_read);
      if (m.elements < 0 || m.bytes < 0 || m.cpu_seconds < 0 || m.storage_bytes < 0) {
        // The window's ends were moved (a short trace) across a counter
        // reset that the stream check attributed to no window.
        r_.warnings.push_back("counters of node '" + m.name + "' decrease across the window; its rates are left out");
        m.reliable = false;
        m.elements = m.bytes = m.storage_bytes = 0;
        m.cpu_seconds = 0;
      }
    }
    m.visit_ratio = static_cast<double>(m.elements) / c0;
    m.cpu_seconds_per_minibatch = m.cpu_seconds / c0;
    if (m.cpu_seconds_per_minibatch > 0) m.rate_per_core = 1.0 / m.cpu_seconds_per_minibatch;
    m.cores_used = m.cpu_seconds / r_.window_seconds;
    if (m.elements > 0) {
      m.bytes_per_element = static_cast<double>(m.bytes) / static_cast<double>(m.elements);
    } else if (const auto* e = stats_[i].end; e && e->elements_produced() > 0) {
      // Idle in the window (e.g. under a cache): sizes from the whole run.
      m.bytes_per_element = static_cast<double>(e->bytes_produced()) / static_cast<double>(e->elements_produced());
    }
    m.disk_bytes_per_minibatch = static_cast<double>(m.storage_bytes) / c0;
    m.steady_state_cost = !(g_.under_cache[i] && m.elements == 0 && m.cpu_seconds == 0);

    const OpDef* def = FindOp(node.op());
    const bool parallel = def != nullptr && def->parallelizable;
    const double own_max = parallel ? r_.cores : 1;
    if (g_.owner[i] >= 0) {
      const schema::Node& il = *g_.nodes[g_.owner[i]];
      m.interleave = il.name();
      const int cycle = il.interleave().has_cycle_length() ? il.interleave().cycle_length() : 1;
      // Each open dataset runs this node once; at most cycle_length are open.
      if (own_max * cycle < r_.cores) {
        m.max_cores = own_max * cycle;
        m.cap_reason = "cycle_length " + std::to_string(cycle) + " of " + il.name();
      } else {
        m.max_cores = r_.cores;
        m.cap_reason = "all the machine's cores";
      }
      m.cores_now = std::min(m.max_cores, static_cast<double>(m.parallelism) * own_parallelism(g_.owner[i]));
    } else {
      m.max_cores = own_max;
      m.cap_reason = parallel ? "all the machine's cores" : "sequential op";
      m.cores_now = std::min(m.max_cores, static_cast<double>(m.parallelism));
    }
    r_.nodes.push_back(std::move(m));
  }
}

Cardinality Modeler::ReaderCard(int i) {
  const schema::Node& node = *g_.nodes[i];
  const auto& files = OpParams(node) == PC::kTfrecord ? node.tfrecord().files() : node.text_line().files();
  // Files per pass of this node (per opened dataset inside a function), and
  // the population the completed files were sampled from.
  Cardinality nfiles;
  std::optional<double> population;
  if (!files.empty()) {
    nfiles = Exact(files.size());
  } else if (!g_.inputs[i].empty()) {
    nfiles = Card(g_.inputs[i][0]);
  } else if (g_.owner[i] >= 0) {
    nfiles = Exact(1);  // the file name the interleave hands it
  } else {
    return Unknown("the reader names no files");
  }
  if (nfiles.finite()) {
    population = nfiles.value;
    if (g_.owner[i] >= 0) {
      const Cardinality opened = g_.inputs[g_.owner[i]].empty() ? Unknown("") : Total(g_.inputs[g_.owner[i]][0]);
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
    out = Unknown("no file of '" + node.name() + "' was read to its end, so records per file are unknown");
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
  r_.sources.push_back(est);
  return out;
}

Cardinality Modeler::Card(int i) {
  if (card_memo_[i]) return *card_memo_[i];
  const schema::Node& node = *g_.nodes[i];
  const OpDef* def = FindOp(node.op());
  Cardinality c;
  const schema::NodeStats* s = stats_[i].end;
  auto input = [&]() { return g_.inputs[i].empty() ? Unknown("no input") : Card(g_.inputs[i][0]); };
  if (s && s->has_cardinality() && g_.owner[i] < 0) {
    // The runtime knew it (a resolved glob, a range): exact by definition.
    c = s->cardinality() < 0 ? Infinite("the runtime reports '" + node.name() + "' as infinite")
                             : Exact(static_cast<double>(s->cardinality()));
  } else if (def == nullptr) {
    c = Unknown("op '" + node.op() + "' is unknown to this plumber");
  } else {
    switch (def->cardinality) {
      case CardinalityRule::kPreserves: c = input(); break;
      case CardinalityRule::kFromParams:
        if (OpParams(node) == PC::kRange) {
          const auto& p = node.range();
          const int64_t step = p.has_step() ? p.step() : 1;
          const double span = static_cast<double>(p.stop()) - static_cast<double>(p.start());
          const double count = step == 0 ? 0 : std::ceil(span / static_cast<double>(step));
          c = Exact(std::max(0.0, count));
        } else if (OpParams(node) == PC::kListFiles) {
          if (!node.list_files().pattern().empty()) {
            c = Unknown("the glob '" + node.list_files().pattern() + "' of '" + node.name() +
                        "' is not resolved in the trace (no cardinality recorded)");
          } else {
            c = Exact(node.list_files().files_size());
          }
        } else {
          c = Unknown("no parameters to count '" + node.name() + "' from");
        }
        break;
      case CardinalityRule::kFilesTimesRecords: c = ReaderCard(i); break;
      case CardinalityRule::kMeasuredRatio: {
        const double in = s ? static_cast<double>(s->elements_consumed()) : 0;
        const double out = s ? static_cast<double>(s->elements_produced()) : 0;
        c = input();
        if (c.finite() && c.hi > 0) {
          if (in <= 0) {
            c = Unknown("'" + node.name() + "' consumed nothing, so its pass ratio is unknown");
          } else {
            c = Map(c, [&](double x) { return x * out / in; });
            c.exact = false;
          }
        }
        break;
      }
      case CardinalityRule::kBatches: {
        const bool padded = OpParams(node) == PC::kPaddedBatch;
        const double b = static_cast<double>(padded ? node.padded_batch().batch_size() : node.batch().batch_size());
        const bool drop = padded ? node.padded_batch().drop_remainder() : node.batch().drop_remainder();
        c = Map(input(), [&](double x) { return b < 1 ? x : (drop ? std::floor(x / b) : std::ceil(x / b)); });
        break;
      }
      case CardinalityRule::kTakes: {
        const double count = static_cast<double>(node.take().count());
        c = input();
        if (count >= 0)
          c = c.kind == Kind::kInfinite ? Exact(count) : Map(c, [&](double x) { return std::min(x, count); });
        break;
      }
      case CardinalityRule::kSkips: {
        const double count = static_cast<double>(node.skip().count());
        c = count < 0 ? Exact(0) : Map(input(), [&](double x) { return std::max(0.0, x - count); });
        break;
      }
      case CardinalityRule::kRepeats: {
        const int64_t count = node.repeat().has_count() ? node.repeat().count() : -1;
        c = input();
        if (count < 0) {
          if (!(c.finite() && c.hi == 0)) c = Infinite("'" + node.name() + "' repeats forever");
        } else {
          c = Map(c, [&](double x) { return x * static_cast<double>(count); });
        }
        break;
      }
      case CardinalityRule::kFlattens: {
        const int root = g_.function_root[i];
        c = Product(input(), root >= 0 ? Card(root) : Unknown("no function"));
        break;
      }
    }
  }
  card_memo_[i] = c;
  return c;
}

Cardinality Modeler::Total(int i) {
  Cardinality c = Card(i);
  if (g_.owner[i] < 0) return c;
  const int il = g_.owner[i];
  return Product(g_.inputs[il].empty() ? Unknown("no input") : Total(g_.inputs[il][0]), c);
}

void Modeler::Sizes() {
  const int n = static_cast<int>(g_.nodes.size());
  card_memo_.assign(n, std::nullopt);
  random_memo_.assign(n, -1);
  // Index of a random node at or below i (n when none): memoised so a
  // 2,000-node chain stays linear.
  std::function<int(int)> random_below = [&](int i) {
    if (random_memo_[i] >= 0) return random_memo_[i];
    random_memo_[i] = n;  // guards against revisits; the program has no cycles
    int found = NodeIsRandom(*g_.nodes[i]) ? i : n;
    for (int j : g_.Children(i)) {
      if (found != n) break;
      found = random_below(j);
    }
    random_memo_[i] = found;
    return found;
  };
  // Post-order without deep recursion on long chains: visit from the
  // sources up so every memo the recursion needs is already filled.
  std::vector<int> order;
  std::vector<int> state(n, 0);
  for (int root = 0; root < n; ++root) {
    if (state[root]) continue;
    std::vector<std::pair<int, size_t>> stack = {{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      const std::vector<int> kids = g_.Children(i);
      if (next < kids.size()) {
        const int j = kids[next++];
        if (!state[j]) {
          state[j] = 1;
          stack.push_back({j, 0});
        }
      } else {
        order.push_back(i);
        stack.pop_back();
      }
    }
  }
  for (int i : order) {
    random_below(i);
    Card(i);
  }
  for (int i : order) {
    NodeModel& m = r_.nodes[i];
    m.cardinality = Total(i);
    if (m.cardinality.finite() && m.bytes_per_element) {
      m.materialized_bytes = m.cardinality.value * *m.bytes_per_element;
      m.materialized_lo = m.cardinality.lo * *m.bytes_per_element;
      m.materialized_hi = m.cardinality.hi * *m.bytes_per_element;
    }
    const int rnd = random_below(i);
    if (rnd != n) m.random_below = g_.nodes[rnd]->name();
    m.cacheable = m.cardinality.finite() && m.random_below.empty();
  }
  std::sort(r_.sources.begin(), r_.sources.end(),
            [&](const SourceEstimate& a, const SourceEstimate& b) { return g_.Find(a.node) < g_.Find(b.node); });
}

void Modeler::Bounds() {
  double sum_c = 0;
  for (auto& m : r_.nodes) {
    if (!m.steady_state_cost || !m.reliable) continue;
    sum_c += m.cpu_seconds_per_minibatch;
    r_.disk_bytes_per_minibatch += m.disk_bytes_per_minibatch;
  }
  r_.cpu_seconds_per_minibatch = sum_c;
  if (sum_c > 0) {
    r_.cpu_bound_uncapped = r_.cores / sum_c;
    r_.cpu_bound = r_.cpu_bound_uncapped;
    r_.cpu_bound_limit = "cores";
  }
  // With caps the LP (max X s.t. X <= theta_i R_i, sum theta_i <= cores,
  // theta_i <= max_i) is solved exactly by giving each node the least it
  // needs, theta_i = X c_i: X is then held by the cores or by the tightest
  // max_i R_i.
  for (auto& m : r_.nodes) {
    if (!m.steady_state_cost || !m.reliable || !m.rate_per_core) continue;
    const double cap = m.max_cores * *m.rate_per_core;
    if (!r_.cpu_bound || cap < *r_.cpu_bound) {
      r_.cpu_bound = cap;
      r_.cpu_bound_limit = m.name;
    }
  }
  if (r_.disk_bytes_per_minibatch > 0 && r_.disk_bandwidth && *r_.disk_bandwidth > 0) {
    r_.disk_bound = *r_.disk_bandwidth / r_.disk_bytes_per_minibatch;
  }
  if (r_.cpu_bound) {
    r_.predicted_throughput = r_.cpu_bound;
    r_.predicted_limit = "cpu";
  }
  if (r_.disk_bound && (!r_.predicted_throughput || *r_.disk_bound < *r_.predicted_throughput)) {
    r_.predicted_throughput = r_.disk_bound;
    r_.predicted_limit = "disk";
  }
}

void Modeler::Ranking() {
  for (auto& m : r_.nodes) {
    std::optional<double> cpu;
    if (m.rate_per_core) cpu = m.cores_now * *m.rate_per_core;
    std::optional<double> storage;
    if (m.disk_bytes_per_minibatch > 0 && r_.disk_bandwidth && *r_.disk_bandwidth > 0) {
      storage = *r_.disk_bandwidth / m.disk_bytes_per_minibatch;
    }
    const auto cores = [](double c) { return Num(c) + (c == 1 ? " core" : " cores"); };
    if (!m.reliable) {
      m.limit = Limit::kNone;
      m.limit_text = "counters went backwards: not ranked";
    } else if (!m.steady_state_cost) {
      m.limit = Limit::kCached;
      m.limit_text = "under a cache, idle in the window: no steady-state cost";
    } else if (storage && (!cpu || *storage < *cpu)) {
      m.scaled_rate = storage;
      m.limit = Limit::kStorage;
      m.limit_text = "storage: " + units::FormatBytes(m.disk_bytes_per_minibatch) + " per minibatch at " +
                     units::FormatRate(*r_.disk_bandwidth);
    } else if (!cpu) {
      m.limit = Limit::kNone;
      m.limit_text = "nothing: no CPU cost in the window";
    } else if (m.cores_now >= m.max_cores) {
      m.scaled_rate = cpu;
      m.limit = Limit::kSequential;
      m.limit_text = "at its cap of " + cores(m.max_cores) + " (" + m.cap_reason + ")";
    } else {
      m.scaled_rate = cpu;
      m.limit = Limit::kCpu;
      m.limit_text =
          "CPU at " + cores(m.cores_now) + "; could use up to " + Num(m.max_cores) + " (" + m.cap_reason + ")";
    }
  }
  std::vector<int> order(r_.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  auto key = [&](int i) {
    const NodeModel& m = r_.nodes[i];
    const int tier = !m.reliable ? 3 : !m.steady_state_cost ? 2 : m.scaled_rate ? 0 : 1;
    return std::make_tuple(tier, m.scaled_rate.value_or(0.0), i);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  for (int i : order) r_.ranking.push_back(r_.nodes[i].name);
  if (!order.empty() && r_.nodes[order[0]].scaled_rate) r_.bottleneck = r_.nodes[order[0]].name;
}

void Modeler::Cache() {
  for (const auto& s : window_.end.nodes()) {
    if (g_.Find(s.name()) >= 0)
      r_.buffered_bytes += static_cast<uint64_t>(std::max<int64_t>(0, s.peak_buffered_bytes()));
  }
  const double free_bytes = static_cast<double>(r_.memory_bytes) - static_cast<double>(r_.buffered_bytes);
  r_.cache_budget_bytes = std::max(0.0, free_bytes) * opt_.cache_memory_fraction;
  int best = -1;
  for (size_t i = 0; i < r_.nodes.size(); ++i) {
    const NodeModel& m = r_.nodes[i];
    // A node inside an interleave function is one file's dataset: a cache
    // there would hold one file, not the data.
    if (!m.cacheable || g_.owner[i] >= 0 || !m.materialized_bytes || m.depth < 0) continue;
    if (*m.materialized_bytes > r_.cache_budget_bytes) continue;
    if (best < 0 || m.depth < r_.nodes[best].depth) best = static_cast<int>(i);
  }
  if (best >= 0) {
    r_.cache_node = r_.nodes[best].name;
    r_.cache_bytes = *r_.nodes[best].materialized_bytes;
  }
}

void Modeler::Findings() {
  auto& f = r_.findings;
  auto rate = [](double x) { return Num(x) + " minibatches/s"; };
  f.push_back("Observed " + rate(r_.observed_throughput) + " (" + std::to_string(r_.minibatches) + " minibatches in " +
              units::FormatSeconds(r_.window_seconds) + ", from " + units::FormatSeconds(r_.window_start_seconds) +
              " to " + units::FormatSeconds(r_.window_end_seconds) + ").");
  if (r_.consumer_wait_seconds) {
    // The paper counts a job input-bound once the mean wait per step passes
    // tens of microseconds.
    const bool stalled = *r_.consumer_wait_seconds > 50e-6;
    f.push_back("The consumer waited " + units::FormatSeconds(*r_.consumer_wait_seconds) +
                " per minibatch on average (" + Num(100 * *r_.consumer_wait_fraction) + "% of the window): " +
                (stalled ? "the input pipeline holds training back." : "the input pipeline keeps up."));
  }
  if (const NodeModel* b = r_.Find(r_.bottleneck)) {
    f.push_back(b->name + " (" + b->op + ") is the bottleneck: as configured it keeps up with at most " +
                rate(*b->scaled_rate) + "; limited by " + b->limit_text + ".");
  }
  const NodeModel* top = nullptr;
  for (const auto& m : r_.nodes) {
    if (m.steady_state_cost && (!top || m.cpu_seconds_per_minibatch > top->cpu_seconds_per_minibatch)) top = &m;
  }
  if (top && r_.cpu_seconds_per_minibatch > 0) {
    f.push_back(top->name + " is " + Num(100.0 * top->cpu_seconds_per_minibatch / r_.cpu_seconds_per_minibatch) +
                "% of the CPU per minibatch (" + units::FormatSeconds(top->cpu_seconds_per_minibatch) + " of " +
                units::FormatSeconds(r_.cpu_seconds_per_minibatch) + ").");
  }
  if (r_.cpu_bound) {
    std::string s = "At " + std::to_string(r_.cores) + " cores the CPU bound is " + rate(*r_.cpu_bound);
    if (r_.cpu_bound_limit == "cores") {
      s += " (all cores busy)";
    } else if (const NodeModel* m = r_.Find(r_.cpu_bound_limit)) {
      s += ", held by " + m->name + " at its cap of " + Num(m->max_cores) + " (" + m->cap_reason +
           "); without caps it would be " + rate(*r_.cpu_bound_uncapped);
    }
    f.push_back(s + ".");
  }
  if (r_.disk_bytes_per_minibatch > 0) {
    std::string s = "Storage: " + units::FormatBytes(r_.disk_bytes_per_minibatch) + " read per minibatch, " +
                    Num(100e6 / r_.disk_bytes_per_minibatch) + " minibatches/s per 100 MB/s";
    if (r_.disk_bound) {
      s += "; at " + units::FormatRate(*r_.disk_bandwidth) + " (" + r_.disk_bandwidth_from + ") the storage bound is " +
           rate(*r_.disk_bound);
    } else {
      s += "; the storage bandwidth is unknown (give --disk-bandwidth)";
    }
    f.push_back(s + ".");
  }
  if (r_.predicted_throughput) {
    f.push_back("Predicted " + rate(*r_.predicted_throughput) + " with the best parallelism, " +
                (r_.predicted_limit == "disk" ? "storage-bound" : "CPU-bound") + " (" +
                Num(*r_.predicted_throughput / r_.observed_throughput) + "x observed).");
  }
  for (const auto& s : r_.sources) {
    if (!s.dataset_bytes) continue;
    std::string t = "The files read by node " + s.node + " total " + units::FormatBytes(*s.dataset_bytes);
    if (s.exact) {
      t += " (all " + std::to_string(*s.files) + " files read)";
    } else if (!s.interval_known) {
      t += " (estimated from a single file of " + std::to_string(*s.files) +
           ", which says nothing about their spread: read more files for an interval)";
    } else {
      t += " (95% interval " + units::FormatBytes(s.dataset_bytes_lo) + " to " +
           units::FormatBytes(s.dataset_bytes_hi) + ", estimated from " + std::to_string(s.files_completed) + " of " +
           std::to_string(*s.files) + " files)";
    }
    f.push_back(t + ".");
  }
  std::vector<std::string> random_nodes;
  for (const auto& m : r_.nodes) {
    if (m.random) random_nodes.push_back(m.name);
  }
  for (const auto& name : random_nodes) {
    f.push_back(name + " is random, so nothing at or above it can be cached.");
  }
  for (const auto& m : r_.nodes) {
    if (m.cardinality.kind == Kind::kUnknown && !m.cardinality.why.empty() && g_.Find(m.name) == g_.output) {
      f.push_back("The dataset size is unknown: " + m.cardinality.why + ".");
    }
  }
  if (!r_.cache_node.empty()) {
    f.push_back("The dataset after " + r_.cache_node + " is " + units::FormatBytes(r_.cache_bytes) +
                " and fits the cache budget of " + units::FormatBytes(r_.cache_budget_bytes) +
                ": the place to cache it when the data is read more than once (a repeat above it; see the plan).");
  }
  // The largest finite, deterministic candidate that does not fit says what
  // more memory would buy.
  for (const auto& m : r_.nodes) {
    if (m.cacheable && m.materialized_bytes && *m.materialized_bytes > r_.cache_budget_bytes && m.interleave.empty()) {
      f.push_back("The dataset after " + m.name + " is " + units::FormatBytes(*m.materialized_bytes) +
                  " and does not fit the cache budget of " + units::FormatBytes(r_.cache_budget_bytes) + ".");
    }
  }
  if (r_.cache_node.empty()) f.push_back("Nothing cacheable fits in memory.");
}

StatusOr<Report> Modeler::Run() {
  r_.source = source_;
  r_.program = header_.program().name();
  r_.warnings = window_.warnings;
  PLUMBER_RETURN_IF_ERROR(Window());
  Machine();
  Rates();
  BandwidthFromCurve();
  Sizes();
  Bounds();
  Ranking();
  Cache();
  Findings();
  return std::move(r_);
}

std::vector<std::string> NodeNames(const schema::TraceHeader& header) {
  std::vector<std::string> names;
  for (const auto& n : header.program().nodes()) names.push_back(n.name());
  return names;
}

}  // namespace

const char* LimitName(Limit limit) {
  switch (limit) {
    case Limit::kCpu: return "cpu";
    case Limit::kSequential: return "sequential";
    case Limit::kStorage: return "storage";
    case Limit::kNone: return "none";
    case Limit::kCached: return "cached";
  }
  return "none";
}

const NodeModel* Report::Find(const std::string& name) const {
  auto lookup = [&]() -> const NodeModel* {
    auto it = index_.find(name);
    if (it == index_.end() || it->second >= nodes.size() || nodes[it->second].name != name) return nullptr;
    return &nodes[it->second];
  };
  if (index_.size() == nodes.size()) {
    if (const NodeModel* n = lookup()) return n;
  }
  // Stale, or the name is absent: rebuild and look once more.
  index_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) index_.emplace(nodes[i].name, i);
  return lookup();
}

StatusOr<Report> Analyze(const schema::TraceHeader& header, const SelectedWindow& window,
                         const AnalysisOptions& options, const std::string& source) {
  if (header.program().nodes_size() == 0) {
    return Status::InvalidArgument(source + ": the trace's header has no program to analyse");
  }
  PLUMBER_ASSIGN_OR_RETURN(Graph graph, BuildGraph(header.program(), source));
  Modeler modeler(header, window, options, source, graph);
  return modeler.Run();
}

StatusOr<Report> AnalyzeTrace(const schema::Trace& trace, const AnalysisOptions& options, const std::string& source) {
  if (!trace.has_header()) return Status::InvalidArgument(source + ": the trace has no header");
  WindowSelector selector(options.window, trace.header().options().warmup_seconds(), NodeNames(trace.header()));
  for (const auto& s : trace.snapshots()) {
    schema::Snapshot copy = s;
    selector.Add(&copy);
  }
  auto window = selector.Finish();
  if (!window.ok()) return window.status().WithContext(source);
  return Analyze(trace.header(), *window, options, source);
}

namespace {

// What analysing a trace holds in memory, from /usr/bin/time on synthetic
// chains of 5,000 to 100,000 nodes: parsing JSON holds the text, protobuf's
// intermediate binary and the messages at once (under 3 times the text
// measured); a binary trace is streamed, holding one record's payload, the
// parsed record and the three snapshots the window keeps; the model, the
// reports and the GLPK programs take about 3 kB per node of the program.
constexpr uint64_t kJsonBytesPerInputByte = 8;
constexpr uint64_t kBinaryBytesPerRecordByte = 16;
constexpr uint64_t kModelBytesPerNode = 4096;

std::string Bytes(uint64_t bytes) { return units::FormatBytes(static_cast<double>(bytes)); }

Status CheckModelFits(const schema::TraceHeader& header, uint64_t budget, const std::string& path) {
  const uint64_t nodes = static_cast<uint64_t>(header.program().nodes_size());
  if (nodes <= budget / kModelBytesPerNode) return Status::OK();
  return Status::ResourceExhausted(path + ": modelling its program of " + std::to_string(nodes) +
                                   " nodes takes about " + Bytes(nodes * kModelBytesPerNode) +
                                   ", over the --max-memory of " + Bytes(budget));
}

}  // namespace

StatusOr<Report> AnalyzeTraceFile(Env* env, const std::string& path, const AnalysisOptions& options) {
  PLUMBER_ASSIGN_OR_RETURN(auto probe, env->NewSequentialFile(path));
  char scratch[kTracePreambleBytes];
  std::string_view head;
  PLUMBER_RETURN_IF_ERROR(probe->Read(sizeof scratch, &head, scratch));
  if (head.empty()) return Status::InvalidArgument(path + ": the file is empty");
  const uint64_t budget = options.max_memory_bytes;
  if (!LooksLikeBinaryTrace(head)) {
    PLUMBER_ASSIGN_OR_RETURN(uint64_t size, env->GetFileSize(path));
    if (size > budget / kJsonBytesPerInputByte) {
      return Status::ResourceExhausted(path + ": parsing this " + Bytes(size) + " JSON trace takes about " +
                                       Bytes(size * kJsonBytesPerInputByte) + ", over the --max-memory of " +
                                       Bytes(budget) + "; convert it to a binary trace (plumber convert " + path +
                                       " trace.pb), which is read one record at a time, or raise --max-memory");
    }
    TraceReadReport report;
    PLUMBER_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, path, size));
    if (!IsTraceContent(bytes)) {
      return Status::InvalidArgument(path + ": this is a pipeline definition, not a trace (plumber run makes a trace)");
    }
    PLUMBER_ASSIGN_OR_RETURN(schema::Trace trace, ParseTrace(bytes, path, &report));
    PLUMBER_RETURN_IF_ERROR(CheckModelFits(trace.header(), budget, path));
    return AnalyzeTrace(trace, options, path);
  }
  // Binary: stream, keeping only the window's bounding snapshots.
  PLUMBER_ASSIGN_OR_RETURN(auto reader, TraceFileReader::Open(env, path, budget / kBinaryBytesPerRecordByte));
  schema::TraceRecord record;
  std::optional<schema::TraceHeader> header;
  std::optional<WindowSelector> selector;
  while (reader->Next(&record)) {
    if (record.has_header()) {
      PLUMBER_RETURN_IF_ERROR(CheckModelFits(record.header(), budget, path));
      header = std::move(*record.mutable_header());
      selector.emplace(options.window, header->options().warmup_seconds(), NodeNames(*header));
    } else if (record.has_snapshot() && selector) {
      selector->Add(record.mutable_snapshot());
    }
  }
  std::vector<std::string> warnings;
  if (reader->status().code() == Status::Code::kResourceExhausted) {
    // Unlike corruption, a record over the ceiling is not a reason to
    // analyse only what came before it: the answer would silently change
    // with --max-memory.
    return Status::ResourceExhausted(reader->status().message() + " (--max-memory " + Bytes(budget) +
                                     " allows records up to " + Bytes(budget / kBinaryBytesPerRecordByte) + ")");
  }
  if (!reader->status().ok()) {
    if (!header) return reader->status();
    // Everything before a corrupt record is still good data.
    warnings.push_back(reader->status().message() + "; the analysis uses the records before it");
  }
  if (!reader->report().warning.empty()) warnings.push_back(reader->report().warning);
  if (!header) return Status::InvalidArgument(path + ": the trace has no complete header (the run wrote nothing)");
  auto window = selector->Finish();
  if (!window.ok()) return window.status().WithContext(path);
  auto report = Analyze(*header, *window, options, path);
  if (report.ok()) report->warnings.insert(report->warnings.begin(), warnings.begin(), warnings.end());
  return report;
}

}  // namespace plumber::analysis
