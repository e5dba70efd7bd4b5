// What handing an element between threads costs, as the machine's
// calibration measured it (runtime/calibrate.h, the trace's
// machine.handoff): the price the evaluator's callers charge a program for
// every hand-off, copy, wake-up and cold stack its configuration adds or
// removes. It lives beside the evaluator so that every model that prices a
// configuration (the rewrite's today, the reordering's next) takes it from
// one place.
#pragma once

#include "trace.pb.h"

namespace plumber::analysis {

// What handing one element between threads costs, in CPU seconds, from the
// machine's calibration (runtime/calibrate.h, the trace's machine.handoff):
// elements whose payload lives inside the tensor (up to 15 bytes,
// std::string's inline buffer) at the scalars' chunked price, larger ones
// at the price of a payload of their own (128 bytes, and per byte beyond);
// plus one hand-off with its wake-up per chunk, a pool's chunk holding
// about a millisecond of work. Zero for traces without the calibration.
struct HandoffPrice {
  bool known = false;
  double per_handoff_ns = 0;
  // A chunk's hand-off when its threads park and are woken for it, as they
  // do in runs (calibrated; 0 in older traces, which price every chunk at
  // per_handoff_ns, measured on elements that never let them park).
  double parked_chunk_ns = 0;
  double chunked_ns = 0;
  double payload_ns = 0;
  double per_byte_ns = 0;
  // Copying an element on one thread (calibrated; 0 in older traces).
  double copy_ns = 0;
  double copy_per_byte_ns = 0;
  // A waiting element in a pool of many threads beyond its op's CPU
  // inline, and of that what its own thread's clock sees (calibrated; 0
  // in older traces).
  double wait_ns = 0;
  double wait_thread_ns = 0;

  // The largest payload the calibration measures (runtime/calibrate.cc).
  // Beyond it the per-byte price is charged only for the share of the op's
  // work that is copying (BeyondFittedSeconds): an element larger than a
  // core's cache, made on one core and freed on another, comes back to its
  // maker cold, and writing it again costs the slope per byte when the op
  // does little but write it; an op that computes each byte hides those
  // writes behind its work (the image example's decode, about 500 us per
  // 602 kB element, cost no more pooled than inline; the cached example's
  // 1.57 MB minibatches, a copy each, cost 0.05-0.08 ns per byte more).
  static constexpr double kFittedBytes = 65536;

  // One element of `bytes` crossing threads, without the chunk's hand-off,
  // its bytes counted up to kFittedBytes.
  double ElementSeconds(double bytes) const;
  // The bytes of an element beyond kFittedBytes, made by an op that takes
  // `work_ns` each: the slope times the share of the work a copy of that
  // many bytes would take (CopySeconds over the work, at most 1). None in
  // traces without the copy calibration.
  double BeyondFittedSeconds(double bytes, double work_ns) const;
  // One element of `bytes` copied out of a cache on its consumer's thread:
  // the calibrated copy; traces from before it was measured price it as a
  // hand-off (ElementSeconds), which overstates large elements.
  double CopySeconds(double bytes) const;
  // A memory cache's replay drained through a batch (the copy out, the
  // repeat, the stacking), and what a file cache costs beyond it: per
  // element, per byte, and per epoch (the file opened again). Calibrated;
  // 0 in older traces, which price either replay as CopySeconds.
  double memory_replay_ns = 0;
  double memory_replay_per_byte_ns = 0;
  double file_replay_ns = 0;
  double file_replay_per_byte_ns = 0;
  double file_replay_epoch_ns = 0;
  // One element of `bytes` replayed from a memory cache, on the cache's
  // own account: the calibrated replay less the stacking, which the model
  // charges the batch over the cache at CopySeconds (an element made just
  // before it is stacked); at least nothing. CopySeconds in older traces.
  double MemoryReplaySeconds(double bytes) const;
  // The same from a file cache whose epoch holds `epoch_elements` (0:
  // unknown, no share of the opening): the memory replay plus what the file
  // costs more.
  double FileReplaySeconds(double bytes, double epoch_elements) const;
  // The wall time of one element of `bytes` replayed from a file cache
  // whose pool's workers pull it in turns: the pool's input pace when the
  // replay holds it, lock passes included (calibrated; 0 when unknown).
  double file_pooled_wall_per_byte_ns = 0;
  double PooledFileReplaySeconds(double bytes) const {
    return known ? file_pooled_wall_per_byte_ns * bytes * 1e-9 : 0.0;
  }
  // A thread that waits (a sleep, a remote call, a storage request) parks
  // and is woken when the wait ends: work in the kernel, and on a virtual
  // machine in the hypervisor, that the thread's own CPU clock does not
  // see but the cores pay once the pipeline is CPU-bound; among many
  // threads its own work costs more too. The wait calibration measures
  // all of it for a pooled element at many threads; the hand-off is
  // charged on its own (SecondsPerElement), so a wake-up is the rest, less
  // what the thread's own clock saw when `traced_many` (a trace taken at
  // many threads holds that in its node's CPU). Older traces price it as
  // one more hand-off (cpu_ns), which on the remote example (2 ms sleep and
  // 50 us of CPU per element, 117 threads on 2 cores) charged 5 to 24 us
  // where the cores paid 49 per element more than inline (31 of them on
  // the threads' own clocks).
  double WakeupSeconds(bool traced_many) const;
  // How far apart the calibration's trials of payload_ns and
  // parked_chunk_ns came (0 in older traces), and the prices at the top of
  // that spread: a pool the rewrite adds must gain at those (AtWorst).
  double payload_spread_ns = 0;
  double parked_chunk_spread_ns = 0;
  HandoffPrice AtWorst() const {
    HandoffPrice worst = *this;
    worst.payload_ns += payload_spread_ns;
    if (parked_chunk_ns > 0) worst.parked_chunk_ns += parked_chunk_spread_ns;
    return worst;
  }
  // One chunk handed over: its threads park between chunks (a chunk is
  // sized to a millisecond of work), so the parked price when calibrated.
  double ChunkSeconds() const;
  // A pool's input lock passed from the worker done pulling a chunk to one
  // parked on it, waiting for its turn: the wall time of a wake-up, on the
  // critical path when the input is what holds the pool. The calibration's
  // round trip through a pool of one slot (two wake-ups) stands for it:
  // the cached example's batch pooled over a file cache ran at 0.87 of
  // the same batch inline (medians of 3 alternated runs), where the pool
  // was priced as gaining 19% with the lock passing free.
  double latency_ns = 0;
  double LockPassSeconds() const { return known ? latency_ns * 1e-9 : 0.0; }
  // One element of `bytes` handed over by a pool whose elements take
  // `work_ns` each (wall time: CPU and waiting), its chunk's price shared
  // by the elements the pool puts in a chunk (pipeline/pool_chunks.h).
  double SecondsPerElement(double bytes, double work_ns) const;
  // The same per minibatch, for a node that makes `visits` elements of
  // `bytes` each in `work_seconds` (its CPU or its service, the longer:
  // the pool sizes its chunks by the wall time a task takes, waiting
  // included, so a stage that waits milliseconds per element hands each
  // over alone, with its wake-up, however little CPU it uses).
  double MinibatchSeconds(double visits, double bytes, double work_seconds) const {
    return visits > 0 ? visits * SecondsPerElement(bytes, 1e9 * work_seconds / visits) : 0.0;
  }

  // What each byte of an output stacked from many elements (a batch's)
  // costs more when the elements were made milliseconds apart (calibrated;
  // 0 in older traces), and how long one output must take for that: the
  // calibration's 32 elements a quarter of a millisecond apart, 8 ms, are
  // cold through (runtime/calibrate.cc); 100 us apart, 3.2 ms an output,
  // cost a sixth of it more on this machine.
  double cold_stacking_per_byte_ns = 0;
  static constexpr double kColdAfterSeconds = 0.008;
  // How cold an output that takes `assembly_seconds` to make is, 0 to 1:
  // in proportion up to kColdAfterSeconds.
  static double Coldness(double assembly_seconds);
  // The calibrated extra for one output of `bytes` stacked from elements
  // `coldness` (0 to 1) cold.
  double ColdStackingSeconds(double bytes, double coldness) const;
};

// The calibration a trace carries; unknown (every price 0) when it has none.
HandoffPrice HandoffPriceOf(const schema::Machine& machine);

}  // namespace plumber::analysis
