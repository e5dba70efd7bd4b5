// Calibrations of the machine. The hand-off: what handing one element
// between threads costs a pooled stage (CPU, summed over the threads
// involved, and latency), measured on a cheap op so that the hand-off is
// nearly all there is; and what an element that waits costs a pool of many
// threads. `plumber run` records them in the trace's machine section for
// the model's price of parallelism (docs/optimizer.md).
//
// The source: how much storage bandwidth the pipeline's
// reader gets at read parallelism 1, 2, 4, 8, 16 under the storage settings
// in force (throttle, latency). The paper benchmarks this curve by rewriting
// the source; so does this: the interleave that holds the reader is run
// alone, repeated, at each parallelism for a short while. The caller fits
// the points (lp/bandwidth_curve.h) and stores the curve in the trace.
#pragma once

#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "pipeline/program_graph.h"
#include "runtime/storage.h"

namespace plumber::runtime {

struct CalibrationPoint {
  int parallelism = 1;
  double bytes_per_s = 0;
};

struct HandoffCost {
  int parallelism = 2;
  // Each element handed over on its own (a chunk of one), as a pool hands
  // over costly elements: extra CPU per element over running the same op
  // inline, summed over the workers and the consumer, nanoseconds.
  double cpu_ns = 0;
  // Round trip of one element through a pool with one slot: the consumer
  // asks, a worker makes it and hands it back; nanoseconds beyond the
  // inline cost.
  double latency_ns = 0;
  // Extra CPU per element when the pool groups cheap elements into chunks,
  // as it does in runs; nanoseconds (near zero when chunking works).
  double chunked_cpu_ns = 0;
  // The same, for elements as real ops make them: a payload in a buffer of
  // its own, allocated by the worker that made it, read and freed by the
  // consumer. Per element at 128 bytes, and per byte beyond. The scalars
  // above live inside their tensor and are recycled, which real outputs
  // are not: a pooled map of 128-byte elements paid 200-250 ns of CPU per
  // element more than inline where the scalars paid 20-50 (the memory
  // crosses cores, and the allocator frees it on a thread that did not
  // allocate it). Zero when not measured.
  double payload_cpu_ns = 0;
  double payload_cpu_ns_per_byte = 0;
  // The same payloads made and read on one thread, no hand-off: what a
  // cache's replay pays to copy an element out (per element at 128 bytes,
  // per byte beyond). The hand-off's per-byte figure is no price for that:
  // the bench's cached workload replayed 49 KB elements at 8,300
  // minibatches/s of 32 where that figure predicted 1,445.
  double copy_cpu_ns = 0;
  double copy_cpu_ns_per_byte = 0;
  // What each byte of an output stacked from many elements (a batch's)
  // costs more to write when the thread makes a millisecond of other work
  // between elements, so that the output buffer, zeroed when allocated,
  // has left the core's caches: a 1 ms burn before each of 32 elements of
  // 48 KiB, against none. Measured here: 0.88 us an element back to back,
  // 1.85 after the burns; the cached example's batch cost 121 us a
  // minibatch inline over its decode and 56 once the cache served it.
  // Zero when not measured.
  double cold_stacking_cpu_ns_per_byte = 0;
  // Extra CPU per chunk when the threads park between chunks and are woken
  // for the next (a consumer waiting on a pool whose chunks take a
  // millisecond, as they are sized to): cpu_ns above never parks, its
  // elements following each other within the spin. Measured here: 15-25
  // us a chunk against cpu_ns's 5-8; a pooled map of burns paid 30-60 us a
  // chunk more CPU than inline, and the image example's decode 47 us an
  // element (one a chunk). Zero when not measured.
  double parked_chunk_cpu_ns = 0;
  // How far apart the trials behind payload_cpu_ns (the highest of three)
  // and parked_chunk_cpu_ns (the median of three) came: highest less
  // lowest, ns. A pool the rewrite adds must gain even at the price plus
  // this spread: across 7 traces of the text example the parked figure
  // ran from 4.5 to 30 us, and whether tokenize got a pool followed it.
  double payload_cpu_ns_spread = 0;
  double parked_chunk_cpu_ns_spread = 0;
};

// What an element that waits costs the machine in a pool of many threads,
// beyond what its op costs on a thread alone (which is what a naive trace
// charges its node). Measured on the remote example at 117 workers on 2
// cores: its node's CPU per element rose from about 50 us inline to 82
// (the sleep and its wake-up, partly on the thread's own clock, with 117
// threads to schedule), and 18 us more per element no thread's clock saw.
struct WaitCost {
  // Process CPU per element in the pool less the op's CPU inline, ns.
  double cpu_ns = 0;
  // Of it, what the op's own thread clock saw more than inline, ns: a
  // trace taken at many threads already holds this in its node's CPU.
  double thread_cpu_ns = 0;
};

// What replaying a cache costs its consumer's thread, and what a file
// cache costs beyond replaying the same elements from memory: reading the
// file back from the page cache, its framing and CRCs, parsing each record
// into a fresh element, the colder stacking of those elements into the
// batch after it, and reopening the file every epoch. A one-shot rewrite that put a file cache under the io
// example predicted 2.09x and the cached example 2.5x what the cached
// pipelines ran at, having priced a file replay as a copy out of memory.
struct CacheReplayCost {
  // A memory cache's replay drained through a batch: the copy out of the
  // cache, the repeat and the stacking, per element at no bytes and per
  // byte, nanoseconds. The copy calibration alone (HandoffCost::copy_cpu_ns)
  // put the cached example's rewrite at 0.80 of its run: it reads each
  // copy once more than a replay whose batch stacks it.
  double memory_ns = 0;
  double memory_ns_per_byte = 0;
  // The file over memory: per element at no bytes, and per byte,
  // nanoseconds.
  double file_ns = 0;
  double file_ns_per_byte = 0;
  // Per epoch: opening the file again.
  double file_epoch_ns = 0;
  // The wall time per byte of a file replay that a pool's workers pull in
  // turns (a batch of 2 workers over the cache), everything included: the
  // pace of the pool's input when the replay holds it. The cached
  // example's batch pooled over a file cache ran at 0.87-0.97 of the same
  // batch inline, where the replay's CPU inline predicted it 1.19x.
  double file_pooled_wall_ns_per_byte = 0;
};

// Measures CacheReplayCost with the runtime's own ops: 64 JPEGs decoded
// into elements of about 12 and 48 KiB, cached in memory and in a file
// under a temporary directory of `env`, then repeated into batches of 32
// (the large file cache also under a batch of 2 workers), each timed over
// epochs after one that warms it; the median of three alternated trials.
// About 0.4 s; seconds in an ASan build, whose copies and CRCs check every
// byte (8 s with five trials of twelve epochs). Zero when it could not
// run (no temporary directory).
CacheReplayCost MeasureCacheReplay(Env* env);

// Measures WaitCost by running a map that sleeps 1 ms and does 50 us of
// cpu_burn's work per element, traced as `plumber run` traces, inline and
// at `threads` (about `seconds` of wall time in all). Zero when the runs
// failed.
WaitCost MeasureWaitCost(int threads, double seconds);

// Measures HandoffCost at `parallelism` workers for about `seconds` in all
// (a tenth of a second is plenty). Figures are floored at 1 ns: a
// measurement noisier than the cost itself still reports a positive price.
HandoffCost MeasureHandoff(int parallelism, double seconds);

// FailedPrecondition when the pipeline has no reader inside an interleave
// function (nothing whose read parallelism can change).
StatusOr<std::vector<CalibrationPoint>> MeasureSourceBandwidth(Env* env, const ProgramGraph& program,
                                                               const std::string& base_dir,
                                                               const StorageOptions& storage, double seconds_per_point,
                                                               const std::vector<int>& parallelisms = {1, 2, 4, 8, 16});

}  // namespace plumber::runtime
