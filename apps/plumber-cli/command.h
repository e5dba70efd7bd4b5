// The subcommand table: each row is a name, a one-line help and a setup
// function that declares the subcommand's options on its CLI11 app and
// returns the handler to run after parsing. Each handler lives in its own
// cmd_NAME.cc; this table (commands.cc) is the only list of them.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "base/status.h"

namespace plumber::cli {

// Runs after parsing; returns the process exit code.
using Handler = std::function<int()>;

struct Command {
  std::string_view name;
  std::string_view help;
  Handler (*setup)(CLI::App& app);
};

std::span<const Command> Commands();

// "plumber 1.2.0 (trace format 1)": what both `plumber version` and
// `plumber --version` print.
std::string VersionLine();

// Exit codes, as the manual states them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

// Prints "plumber: error: ..." to stderr and returns 2 for bad input, 1
// otherwise.
int ReportError(const Status& status);

// Prints "plumber: warning: ..." to stderr (unless --quiet).
void Warn(const std::string& message);

// Whether stderr may carry progress lines: a terminal (not TERM=dumb) and
// no --quiet. Logs and CI captures get no carriage-return redraws.
bool ProgressOnStderr();
// Whether log output may be coloured: stderr is a terminal and NO_COLOR
// (https://no-color.org) is unset or empty.
bool ColorOnStderr();

}  // namespace plumber::cli
