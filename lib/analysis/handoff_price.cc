// The calibrated prices of a hand-off; see handoff_price.h.
#include "analysis/handoff_price.h"

#include <algorithm>

#include "pipeline/pool_chunks.h"

namespace plumber::analysis {

HandoffPrice HandoffPriceOf(const schema::Machine& machine) {
  HandoffPrice price;
  if (machine.has_handoff()) {
    const schema::HandoffCost& h = machine.handoff();
    price.known = h.cpu_ns() > 0;
    price.per_handoff_ns = h.cpu_ns();
    price.latency_ns = h.latency_ns();
    price.parked_chunk_ns = h.parked_chunk_cpu_ns();
    price.parked_chunk_spread_ns = h.parked_chunk_cpu_ns_spread();
    price.payload_spread_ns = h.payload_cpu_ns_spread();
    price.chunked_ns = h.chunked_cpu_ns();
    price.payload_ns = h.payload_cpu_ns();
    price.per_byte_ns = h.payload_cpu_ns_per_byte();
    price.copy_ns = h.copy_cpu_ns();
    price.copy_per_byte_ns = h.copy_cpu_ns_per_byte();
    price.wait_ns = h.wait_cpu_ns();
    price.wait_thread_ns = h.wait_thread_cpu_ns();
    price.cold_stacking_per_byte_ns = h.cold_stacking_cpu_ns_per_byte();
    price.memory_replay_ns = h.memory_replay_cpu_ns();
    price.memory_replay_per_byte_ns = h.memory_replay_cpu_ns_per_byte();
    price.file_replay_ns = h.file_replay_cpu_ns();
    price.file_pooled_wall_per_byte_ns = h.file_replay_pooled_wall_ns_per_byte();
    price.file_replay_per_byte_ns = h.file_replay_cpu_ns_per_byte();
    price.file_replay_epoch_ns = h.file_replay_epoch_cpu_ns();
  }
  return price;
}

double HandoffPrice::ElementSeconds(double bytes) const {
  if (!known) return 0;
  if (bytes <= 15 || payload_ns <= 0) return chunked_ns * 1e-9;
  return (payload_ns + per_byte_ns * std::clamp(bytes - 128, 0.0, kFittedBytes - 128)) * 1e-9;
}

double HandoffPrice::CopySeconds(double bytes) const {
  if (!known) return 0;
  if (copy_ns <= 0) return ElementSeconds(bytes);
  return (copy_ns + copy_per_byte_ns * std::max(0.0, bytes - 128)) * 1e-9;
}

double HandoffPrice::MemoryReplaySeconds(double bytes) const {
  if (!known) return 0;
  if (memory_replay_ns <= 0 && memory_replay_per_byte_ns <= 0) return CopySeconds(bytes);
  return std::max(0.0, (memory_replay_ns + memory_replay_per_byte_ns * bytes) * 1e-9 - CopySeconds(bytes));
}

double HandoffPrice::FileReplaySeconds(double bytes, double epoch_elements) const {
  if (!known) return 0;
  const double opening = epoch_elements >= 1 ? file_replay_epoch_ns / epoch_elements : 0.0;
  return MemoryReplaySeconds(bytes) + (file_replay_ns + file_replay_per_byte_ns * bytes + opening) * 1e-9;
}

double HandoffPrice::BeyondFittedSeconds(double bytes, double work_ns) const {
  if (!known || payload_ns <= 0 || copy_ns <= 0 || bytes <= kFittedBytes) return 0;
  const double share = std::clamp(CopySeconds(bytes) * 1e9 / std::max(1.0, work_ns), 0.0, 1.0);
  return per_byte_ns * (bytes - kFittedBytes) * share * 1e-9;
}

double HandoffPrice::WakeupSeconds(bool traced_many) const {
  if (!known) return 0;
  if (wait_ns <= 0) return ChunkSeconds();
  // The waiting element went alone in its chunk: its hand-off is a chunk's.
  return std::max(0.0, (wait_ns - (traced_many ? wait_thread_ns : 0) - chunked_ns) * 1e-9 - ChunkSeconds());
}

double HandoffPrice::ChunkSeconds() const {
  if (!known) return 0;
  return std::max(per_handoff_ns, parked_chunk_ns) * 1e-9;
}

double HandoffPrice::SecondsPerElement(double bytes, double work_ns) const {
  if (!known) return 0;
  const auto chunk = static_cast<double>(
      PoolChunkTasks(static_cast<int64_t>(std::min(work_ns, 1e15)), static_cast<int64_t>(std::min(bytes, 1e15))));
  return ChunkSeconds() / chunk + ElementSeconds(bytes) + BeyondFittedSeconds(bytes, work_ns);
}

double HandoffPrice::Coldness(double assembly_seconds) {
  return std::clamp(assembly_seconds / kColdAfterSeconds, 0.0, 1.0);
}

double HandoffPrice::ColdStackingSeconds(double bytes, double coldness) const {
  if (!known || cold_stacking_per_byte_ns <= 0) return 0;
  return cold_stacking_per_byte_ns * bytes * coldness * 1e-9;
}

}  // namespace plumber::analysis
