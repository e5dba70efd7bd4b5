// Terminal plumbing shared by `plumber optimize` and `plumber demo`: the
// Ctrl-C handler that lets the loop keep its best pipeline, and the live
// progress line, drawn only when stderr is a terminal (colour unless
// NO_COLOR is set, https://no-color.org). And the same two for `plumber
// run`, so that no handler calls the system itself.
#pragma once

#include <atomic>
#include <functional>

#include "optimize/optimize_loop.h"

namespace plumber::cli {

// Installs SIGINT/SIGTERM handlers that set the returned flag. The handlers
// reset themselves (SA_RESETHAND): a second Ctrl-C kills the process as
// usual when the user does not want to wait for the best pipeline.
const std::atomic<bool>* InstallLoopStopHandler();

// A progress callback for the loop, or an empty function when stderr is not
// a terminal. ClearLoopProgress() erases the line it drew.
std::function<void(const optimize::Progress&)> LoopProgress();
void ClearLoopProgress();

// Installs SIGINT/SIGTERM handlers that set the returned flag, for `plumber
// run` and `plumber gen`: every signal asks the run to stop cleanly (final
// snapshot, an "interrupted" end record) or gen to stop between records.
const std::atomic<bool>* InstallRunStopHandler();

// `plumber run`'s progress callback, or an empty function when stderr
// carries no progress (ProgressOnStderr). ClearRunProgress() erases it.
std::function<void(const runtime::RunProgress&)> RunProgressLine();
void ClearRunProgress();

}  // namespace plumber::cli
