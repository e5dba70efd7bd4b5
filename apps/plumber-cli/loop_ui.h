// Terminal plumbing shared by `plumber optimize` and `plumber demo`: the
// Ctrl-C handler that lets the loop keep its best pipeline, and the live
// progress line, drawn only when stderr is a terminal (colour unless
// NO_COLOR is set, https://no-color.org).
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

}  // namespace plumber::cli
