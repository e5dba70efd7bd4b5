// Sizes each stage that waits: the threads that lift it past the next
// limit (threads_to_pass.h).
#include "analysis/threads_to_pass.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/number_format.h"

namespace plumber::analysis {

// A waiting stage's rate grows with its threads (n / s_i) until another
// limit binds: the slowest other stage at its current resources, or the
// machine's CPU or storage bound. One step sized to that removes the stage
// from the top of the ranking; doubling took 6 steps from 1 thread to 64.
void ThreadsToPass(Analysis* r) {
  for (auto& m : r->nodes) {
    if (m.limit != Limit::kWait || m.service_seconds_per_minibatch <= 0) continue;
    std::optional<double> next;
    std::string next_name;
    auto consider = [&](const std::optional<double>& rate, const std::string& name) {
      if (rate && (!next || *rate < *next)) {
        next = rate;
        next_name = name;
      }
    };
    consider(r->cpu_bound, "the cores");
    consider(r->disk_bound, "storage");
    for (const auto& other : r->nodes) {
      if (&other != &m && other.reliable && other.steady_state_cost) consider(other.scaled_rate, other.name);
    }
    double threads = m.max_threads;
    if (next) threads = std::min(threads, std::ceil(*next * m.service_seconds_per_minibatch * (1 - 1e-9)));
    threads = std::max(threads, std::min(m.max_threads, static_cast<double>(m.threads) + 1));
    m.threads_to_pass = threads;
    if (next && threads < m.max_threads) {
      m.limit_text += "; " + FormatNumber(threads) + " would lift it to " + FormatNumber(*next) + " minibatches/s, where " +
                      next_name + (next_name == "the cores" ? " limit" : " limits");
    } else {
      m.limit_text += "; at " + FormatNumber(threads) + " it would run " +
                      FormatNumber(threads / m.service_seconds_per_minibatch) + " minibatches/s";
    }
  }
}

}  // namespace plumber::analysis
