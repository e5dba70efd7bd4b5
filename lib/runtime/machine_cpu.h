// The machine's CPU time, from /proc/stat: how much of the CPUs a run may
// use sat idle and how much went to work (this process's and every other
// process's). A run records it beside its own CPU time in each snapshot, so
// that the analysis can tell how many cores the run really had: what it
// used plus what nobody used (the effective cores). Under
// other load that is fewer than the machine's, and a plan for the whole
// machine would promise what the run cannot get.
//
// /proc/stat is read through the Env so that tests can fake it; a missing
// or unreadable file is an error here and "not recorded" for the run.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace plumber::runtime {

// Cumulative since boot, in the kernel's clock ticks (USER_HZ), summed over
// the CPUs counted. Ticks, not nanoseconds: over a long uptime on many CPUs
// the sums times 1e9 would overflow 64 bits; a run converts differences.
struct MachineCpuTicks {
  // idle + iowait: time no process wanted the CPU (iowait is idle time
  // with a read outstanding; any runnable thread could have had it).
  uint64_t idle = 0;
  // user + nice + system + irq + softirq + steal. Guest time is already in
  // user and nice, so it is not added again; steal is time the hypervisor
  // gave to someone else, so it was not ours to use.
  uint64_t busy = 0;
};

// The CPUs this process may run on (its affinity mask), ascending; empty
// when the mask cannot be read. DescribeMachine counts the same set as the
// machine's cores, so that the two agree.
std::vector<int> RunnableCpus();

// Parses the text of /proc/stat. With `cpus` empty, reads the aggregate
// "cpu" line; otherwise sums the "cpuN" lines of those CPUs and fails when
// one of them is missing (a CPU taken offline), so that a run never mixes
// two bases. Lines with fewer than the four oldest columns (user, nice,
// system, idle) do not count; columns newer kernels add are optional.
// InvalidArgument naming `name` when no usable line is found.
StatusOr<MachineCpuTicks> ParseProcStat(std::string_view text, const std::vector<int>& cpus,
                                        std::string_view name = "/proc/stat");

// Reads and parses `path` (normally /proc/stat) through `env`.
StatusOr<MachineCpuTicks> ReadMachineCpuTicks(Env* env, const std::vector<int>& cpus,
                                              const std::string& path = "/proc/stat");

// Nanoseconds in `ticks` clock ticks of the kernel (sysconf(_SC_CLK_TCK),
// 100 on nearly every Linux); for differences, which stay small.
int64_t TicksToNanos(uint64_t ticks);

}  // namespace plumber::runtime
