// Ctrl-C and the live progress lines of the optimize loop and of a run;
// see loop_ui.h.
#include "loop_ui.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "command.h"

namespace plumber::cli {
namespace {

std::atomic<bool> g_loop_stop{false};
std::atomic<bool> g_run_stop{false};
bool g_drawn = false;

extern "C" void OnLoopStopSignal(int) { g_loop_stop.store(true); }
extern "C" void OnRunStopSignal(int) { g_run_stop.store(true); }

// Ctrl-C and SIGTERM call `handler`; with SA_RESETHAND in `flags` a
// second one kills as by default.
void InstallStopHandler(void (*handler)(int), int flags) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

const std::atomic<bool>* InstallLoopStopHandler() {
  InstallStopHandler(OnLoopStopSignal, SA_RESETHAND);
  return &g_loop_stop;
}

std::function<void(const optimize::Progress&)> LoopProgress() {
  if (isatty(STDERR_FILENO) != 1) return {};
  const char* no_color = std::getenv("NO_COLOR");
  const bool color = no_color == nullptr || *no_color == '\0';
  return [color](const optimize::Progress& p) {
    const char* on = color ? "\033[1;36m" : "";
    const char* off = color ? "\033[0m" : "";
    if (p.phase == "run") {
      std::fprintf(stderr, "\r\033[K  step %d, run %d of at most %d  %srun%s  %4.1f/%.1f s  %8.1f minibatches/s",
                   p.step, p.step + 1, p.max_steps, on, off, p.run.elapsed_seconds, p.run_seconds, p.run.batches_per_second);
    } else {
      std::fprintf(stderr, "\r\033[K  step %d, run %d of at most %d  %s%s%s", p.step, p.step + 1, p.max_steps, on, p.phase.c_str(), off);
    }
    std::fflush(stderr);
    g_drawn = true;
  };
}

void ClearLoopProgress() {
  if (!g_drawn) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  g_drawn = false;
}

const std::atomic<bool>* InstallRunStopHandler() {
  InstallStopHandler(OnRunStopSignal, 0);
  return &g_run_stop;
}

std::function<void(const runtime::RunProgress&)> RunProgressLine() {
  if (!ProgressOnStderr()) return {};
  return [](const runtime::RunProgress& p) {
    std::fprintf(stderr, "\r\033[K  %7.1f s  %10lld batches  %9.1f batches/s", p.elapsed_seconds,
                 static_cast<long long>(p.batches), p.batches_per_second);
    std::fflush(stderr);
    g_drawn = true;
  };
}

void ClearRunProgress() { ClearLoopProgress(); }

}  // namespace plumber::cli
