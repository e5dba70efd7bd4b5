// /proc/stat's CPU lines; see machine_cpu.h.
#include "runtime/machine_cpu.h"

#include <sched.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <unordered_map>

namespace plumber::runtime {
namespace {

// The columns of a "cpu" line, in the kernel's order (proc(5)).
enum Column { kUser, kNice, kSystem, kIdle, kIowait, kIrq, kSoftirq, kSteal, kColumns };

// Splits off the next space-separated word of `line`.
std::string_view NextWord(std::string_view* line) {
  size_t b = 0;
  while (b < line->size() && (*line)[b] == ' ') ++b;
  size_t e = b;
  while (e < line->size() && (*line)[e] != ' ') ++e;
  std::string_view word = line->substr(b, e - b);
  line->remove_prefix(e);
  return word;
}

// The times of one line after its name; false when it has fewer than the
// four columns every kernel writes, or a column is not a number.
bool ParseTimes(std::string_view rest, MachineCpuTicks* out) {
  uint64_t v[kColumns] = {};
  int n = 0;
  for (; n < kColumns; ++n) {
    std::string_view word = NextWord(&rest);
    if (word.empty()) break;
    auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), v[n]);
    if (ec != std::errc() || ptr != word.data() + word.size()) return false;
  }
  if (n <= kIdle) return false;
  out->idle = v[kIdle] + v[kIowait];
  out->busy = v[kUser] + v[kNice] + v[kSystem] + v[kIrq] + v[kSoftirq] + v[kSteal];
  return true;
}

}  // namespace

std::vector<int> RunnableCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

StatusOr<MachineCpuTicks> ParseProcStat(std::string_view text, const std::vector<int>& cpus, std::string_view name) {
  std::unordered_map<int, bool> wanted;  // CPU -> its line was seen
  for (int c : cpus) wanted.emplace(c, false);
  MachineCpuTicks sum;
  bool aggregate_seen = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.rfind("cpu", 0) != 0) continue;
    std::string_view rest = line;
    const std::string_view word = NextWord(&rest);
    MachineCpuTicks times;
    if (word == "cpu") {
      if (!cpus.empty() || aggregate_seen || !ParseTimes(rest, &times)) continue;
      sum = times;
      aggregate_seen = true;
      continue;
    }
    int cpu = -1;
    const std::string_view digits = word.substr(3);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cpu);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) continue;
    auto it = wanted.find(cpu);
    if (it == wanted.end() || it->second || !ParseTimes(rest, &times)) continue;
    it->second = true;
    sum.idle += times.idle;
    sum.busy += times.busy;
  }
  if (cpus.empty()) {
    if (!aggregate_seen) {
      return Status::InvalidArgument(std::string(name) + ": no readable aggregate 'cpu' line");
    }
    return sum;
  }
  for (int c : cpus) {
    if (!wanted[c]) {
      return Status::InvalidArgument(std::string(name) + ": no readable line for cpu" + std::to_string(c));
    }
  }
  return sum;
}

StatusOr<MachineCpuTicks> ReadMachineCpuTicks(Env* env, const std::vector<int>& cpus, const std::string& path) {
  // The file grows with the CPUs and interrupts of the machine (its "intr"
  // line has a number per interrupt), a few hundred kB at most.
  PLUMBER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(env, path, uint64_t{16} << 20));
  return ParseProcStat(text, cpus, path);
}

int64_t TicksToNanos(uint64_t ticks) {
  static const int64_t per_second = [] {
    const long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? static_cast<int64_t>(hz) : int64_t{100};
  }();
  // Whole seconds first, then the remainder: exact, and no overflow for any
  // difference a run produces.
  const int64_t t = static_cast<int64_t>(ticks);
  return t / per_second * 1'000'000'000 + t % per_second * 1'000'000'000 / per_second;
}

}  // namespace plumber::runtime
