// The advice for a PyTorch DataLoader's trace (python/plumber_torch), said
// in DataLoader terms: the DataLoader(...) call to write. Each candidate
// setting (num_workers from 0 to twice the cores, persistent_workers or
// not, prefetch_factor 2 or 4) is priced by the one evaluator through the
// DataLoader's model (analysis/dataloader_model.h) with the traced costs;
// the fastest is advised, the simplest of those within half a percent of
// it (fewer workers, the smaller prefetch, workers that do not persist:
// each holds memory the others do not). Where the memory budget holds it,
// the deterministic prefix of the transforms (up to the first random one)
// is cached by plumber_torch.CachedPrefix.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"

namespace plumber::rewrite {

struct DataLoaderCandidate {
  analysis::DataLoaderSetting setting;
  std::optional<double> throughput;  // batches/s over whole epochs
  std::string limit;                 // the evaluator's limit
  std::string bottleneck;
};

struct DataLoaderChange {
  std::string argument;  // "num_workers", "persistent_workers", ...
  std::string before;
  std::string after;
  std::string why;
  // The throughput (batches/s) with this change and those before it.
  std::optional<double> predicted_after;
};

struct PrefixCache {
  // The transforms CachedPrefix runs once (how many of the Compose's
  // leading transforms) and the last node it covers.
  int transforms = 0;
  std::string last_node;
  std::string first_random;  // the transform that stops it; empty: none
  double bytes = 0;
  bool fits = false;
  std::optional<double> throughput;  // the advised setting with the cache
};

struct TorchAdvice {
  analysis::DataLoaderMeasured measured;
  analysis::DataLoaderSetting advised;
  std::optional<double> traced_prediction;   // batches/s, as traced
  std::optional<double> advised_prediction;  // batches/s, advised setting
  std::string advised_limit;
  std::string advised_bottleneck;
  std::vector<DataLoaderChange> changes;
  std::vector<DataLoaderCandidate> candidates;
  std::optional<PrefixCache> cache;
  std::vector<std::string> notes;
};

// nullopt when `analysis` is not a DataLoader's trace.
std::optional<TorchAdvice> AdviseDataLoader(const analysis::Analysis& analysis);

}  // namespace plumber::rewrite
