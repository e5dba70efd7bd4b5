// Brief spinning before a thread parks. Parking on a condition variable and
// being woken costs a system call on each side and a few microseconds of
// scheduler latency; when what a thread waits for is a microsecond away (a
// worker about to publish, a consumer about to free a slot), polling for a
// moment avoids both. The spin is short, so that a thread that really must
// wait gives its core back almost at once: on a machine with as many
// threads as cores, a long spin would steal the core it waits on.
#pragma once

#include <cstdint>
#include <thread>

#include "runtime/stats.h"

namespace plumber::runtime {

// Polls `ready` for up to kSpinNs (a CPU pause between polls, the clock
// read every few polls: a pause lasts from 10 to 150 cycles depending on
// the CPU) and returns whether it became true. On a single core nothing can
// change while this thread runs, so it only checks once.
template <typename Ready>
bool SpinUntil(Ready&& ready) {
  constexpr int64_t kSpinNs = 3'000;
  static const bool multi_core = std::thread::hardware_concurrency() > 1;
  if (ready()) return true;
  if (!multi_core) return false;
  const int64_t deadline = MonoNanos() + kSpinNs;
  while (true) {
    for (int i = 0; i < 8; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      if (ready()) return true;
    }
    if (MonoNanos() >= deadline) return false;
  }
}

}  // namespace plumber::runtime
