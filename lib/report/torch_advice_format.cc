// The DataLoader advice's text and JSON; see torch_advice_format.h.
#include "report/torch_advice_format.h"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/number_format.h"
#include "base/units.h"

namespace plumber::report {
namespace {

using analysis::DataLoaderSetting;

const char* PyBool(bool b) { return b ? "True" : "False"; }

std::string Call(const analysis::DataLoaderMeasured& m, const DataLoaderSetting& s) {
  std::string call = "DataLoader(dataset, batch_size=" + std::to_string(m.batch_size) +
                     ", num_workers=" + std::to_string(s.num_workers);
  // torch refuses both without workers.
  if (s.num_workers > 0) {
    call += ", prefetch_factor=" + std::to_string(s.prefetch_factor) +
            ", persistent_workers=" + PyBool(s.persistent_workers);
  }
  call += ", pin_memory=" + std::string(PyBool(m.pin_memory)) + ", ...)";
  return call;
}

std::string Rate(const analysis::Analysis& a, const std::optional<double>& batches) {
  if (!batches) return "unbounded";
  std::string s = FormatNumber(*batches) + " batches/s";
  if (a.dataloader && a.dataloader->batch_size > 0) {
    s += " (" + FormatNumber(*batches * static_cast<double>(a.dataloader->batch_size)) + " samples/s)";
  }
  return s;
}

std::string CacheCode(const rewrite::PrefixCache& c) {
  return "dataset = plumber_torch.CachedPrefix(dataset, " + std::to_string(c.transforms) + ")";
}

// The best candidates first, the simplest first on a tie.
std::vector<rewrite::DataLoaderCandidate> Ranked(const rewrite::TorchAdvice& adv) {
  std::vector<rewrite::DataLoaderCandidate> c = adv.candidates;
  std::stable_sort(c.begin(), c.end(), [](const auto& x, const auto& y) {
    return x.throughput.value_or(0.0) > y.throughput.value_or(0.0);
  });
  return c;
}

nlohmann::json SettingJson(const DataLoaderSetting& s, bool pin_memory) {
  return {{"num_workers", s.num_workers},
          {"prefetch_factor", s.prefetch_factor},
          {"persistent_workers", s.persistent_workers},
          {"pin_memory", pin_memory}};
}

nlohmann::json Optional(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

std::string TorchAdviceText(const analysis::Analysis& a, const rewrite::TorchAdvice& adv) {
  std::ostringstream o;
  const auto& m = adv.measured;
  o << "DataLoader advice for " << a.source << "\n";
  o << "  traced:     " << Call(m, m.traced) << "\n";
  o << "  cores:      " << a.cores << " (" << a.cores_source << ")\n";
  if (a.observed_throughput) o << "  observed:   " << Rate(a, a.observed_throughput) << "\n";
  o << "  predicted:  " << Rate(a, adv.traced_prediction) << " as traced\n";
  if (m.worker_start_seconds) {
    o << "  measured:   a worker's restart " << units::FormatSeconds(*m.worker_start_seconds);
    if (m.crossing_seconds) o << ", a batch's crossing " << units::FormatSeconds(*m.crossing_seconds);
    o << "\n";
  }
  o << "\nwrite:\n  " << Call(m, adv.advised) << "\n";
  o << "  predicted:  " << Rate(a, adv.advised_prediction) << " (limit: " << adv.advised_limit;
  if (!adv.advised_bottleneck.empty()) o << ", " << adv.advised_bottleneck;
  o << ")\n";
  if (adv.changes.empty()) {
    o << "  no change: the traced setting is the best of the " << adv.candidates.size()
      << " settings the evaluator priced\n";
  }
  for (const auto& c : adv.changes) {
    o << "  " << c.argument << " " << c.before << " -> " << c.after << ": " << c.why << "\n";
    o << "    predicted with it: " << Rate(a, c.predicted_after) << "\n";
  }
  if (adv.cache) {
    const auto& c = *adv.cache;
    o << "\ncache of the deterministic prefix (up to " << c.last_node
      << (c.first_random.empty() ? "" : ", before " + c.first_random) << "): "
      << units::FormatBytes(c.bytes) << ", budget " << units::FormatBytes(a.cache_budget_bytes) << "\n";
    if (c.fits) {
      o << "  " << CacheCode(c) << "   # before the DataLoader; built once in the main process\n";
      o << "  predicted:  " << Rate(a, c.throughput) << " once built\n";
    } else {
      o << "  not advised: it does not fit the memory budget (--mem)\n";
    }
  }
  o << "\nbest settings priced (of " << adv.candidates.size() << "):\n";
  const auto ranked = Ranked(adv);
  for (size_t i = 0; i < ranked.size() && i < 5; ++i) {
    const auto& c = ranked[i];
    o << "  num_workers=" << c.setting.num_workers;
    if (c.setting.num_workers > 0) {
      o << ", prefetch_factor=" << c.setting.prefetch_factor
        << ", persistent_workers=" << PyBool(c.setting.persistent_workers);
    }
    o << ": " << Rate(a, c.throughput) << " (" << c.limit << ")\n";
  }
  if (!adv.notes.empty() || !a.source_limits.empty()) o << "\nnotes:\n";
  for (const auto& n : adv.notes) o << "  - " << n << "\n";
  for (const auto& n : a.source_limits) o << "  - " << n << "\n";
  return o.str();
}

std::string TorchAdviceJson(const analysis::Analysis& a, const rewrite::TorchAdvice& adv) {
  const auto& m = adv.measured;
  nlohmann::json d;
  d["traced"] = SettingJson(m.traced, m.pin_memory);
  d["advised"] = SettingJson(adv.advised, m.pin_memory);
  d["call"] = Call(m, adv.advised);
  d["batch_size"] = m.batch_size;
  d["observed_batches_per_s"] = Optional(a.observed_throughput);
  d["traced_prediction_batches_per_s"] = Optional(adv.traced_prediction);
  d["advised_prediction_batches_per_s"] = Optional(adv.advised_prediction);
  d["limit"] = adv.advised_limit;
  d["bottleneck"] = adv.advised_bottleneck;
  d["worker_start_seconds"] = Optional(m.worker_start_seconds);
  d["crossing_seconds"] = Optional(m.crossing_seconds);
  d["changes"] = nlohmann::json::array();
  for (const auto& c : adv.changes) {
    d["changes"].push_back({{"argument", c.argument}, {"before", c.before}, {"after", c.after}, {"why", c.why},
                            {"predicted_after_batches_per_s", Optional(c.predicted_after)}});
  }
  if (adv.cache) {
    const auto& c = *adv.cache;
    d["cache"] = {{"transforms", c.transforms},         {"last_node", c.last_node},
                  {"first_random", c.first_random},     {"bytes", c.bytes},
                  {"fits", c.fits},                     {"budget_bytes", a.cache_budget_bytes},
                  {"prediction_batches_per_s", Optional(c.throughput)},
                  {"code", c.fits ? CacheCode(c) : ""}};
  } else {
    d["cache"] = nullptr;
  }
  d["candidates"] = nlohmann::json::array();
  for (const auto& c : Ranked(adv)) {
    d["candidates"].push_back({{"num_workers", c.setting.num_workers},
                               {"prefetch_factor", c.setting.prefetch_factor},
                               {"persistent_workers", c.setting.persistent_workers},
                               {"prediction_batches_per_s", Optional(c.throughput)},
                               {"limit", c.limit}});
  }
  d["notes"] = adv.notes;
  nlohmann::json j;
  j["trace"] = a.source;
  j["imported_from"] = a.imported_from;
  j["cores"] = a.cores;
  j["memory_bytes"] = a.memory_bytes;
  j["limits"] = a.source_limits;
  j["dataloader"] = std::move(d);
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
