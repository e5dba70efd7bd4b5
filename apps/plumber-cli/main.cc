// plumber's entry point: global flags, the subcommand table, and the
// boundary where errors become messages and exit codes. Nothing below this
// file throws across a library boundary; CLI11's parse errors stop here.
#include <unistd.h>

#include <google/protobuf/stubs/logging.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <vector>

#include "command.h"
#include "runtime/allocator.h"
#include "version.h"

namespace plumber::cli {
namespace {

bool g_quiet = false;

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "unknown subcommand 'conver'; did you mean 'convert'?"
int UnknownCommand(std::string_view given) {
  std::string_view best;
  size_t best_distance = 3;  // suggest only close names
  for (const auto& c : Commands()) {
    size_t d = EditDistance(given, c.name);
    if (d < best_distance || (given.size() >= 3 && c.name.substr(0, given.size()) == given && best.empty())) {
      best = c.name;
      best_distance = std::min(d, best_distance);
    }
  }
  std::cerr << "plumber: error: unknown subcommand '" << given << "'";
  if (!best.empty()) std::cerr << "; did you mean '" << best << "'?";
  std::cerr << "\nRun 'plumber --help' for the list of subcommands.\n";
  return kExitBadInput;
}

// Protobuf logs parse problems (such as invalid UTF-8) straight to stderr;
// plumber reports them itself, so they only belong in -v output.
void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line, const std::string& message) {
  if (level >= google::protobuf::LOGLEVEL_FATAL) spdlog::critical("protobuf {}:{}: {}", file, line, message);
  spdlog::debug("protobuf: {}", message);
}

void SetUpLogging(int verbosity, bool quiet) {
  google::protobuf::SetLogHandler(&ProtobufLog);
  auto logger = spdlog::stderr_color_st("plumber", ColorOnStderr() ? spdlog::color_mode::automatic
                                                                    : spdlog::color_mode::never);
  logger->set_pattern("plumber: %l: %v");
  logger->set_level(quiet ? spdlog::level::err : verbosity >= 2 ? spdlog::level::trace
                                                : verbosity == 1 ? spdlog::level::debug
                                                                 : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

int Main(int argc, char** argv) {
  if (argc >= 2 && argv[1][0] != '-') {
    std::string_view name = argv[1];
    const auto cmds = Commands();
    if (std::none_of(cmds.begin(), cmds.end(), [&](const Command& c) { return c.name == name; })) {
      return UnknownCommand(name);
    }
  }
  CLI::App app{"plumber: find and remove bottlenecks in ML input pipelines.\n"
               "See 'man plumber' or docs/ for the manual.",
               "plumber"};
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionLine());
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output (repeat for more)");
  app.add_flag("-q,--quiet", g_quiet, "Only errors on stderr");
  std::vector<std::pair<CLI::App*, Handler>> handlers;
  for (const auto& c : Commands()) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.help));
    // -q and -v after the subcommand too ("plumber run p.json -q"): an
    // option a subcommand does not know falls through to these.
    sub->fallthrough();
    handlers.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "plumber: error: " << e.what() << "\n";
    std::string where = app.get_subcommands().empty() ? "plumber" : "plumber " + app.get_subcommands()[0]->get_name();
    std::cerr << "Run '" << where << " --help' for usage.\n";
    return kExitBadInput;
  }
  SetUpLogging(verbosity, g_quiet);
  for (auto& [sub, handler] : handlers) {
    if (sub->parsed()) return handler();
  }
  return kExitBadInput;
}

}  // namespace

int ReportError(const Status& status) {
  std::cerr << "plumber: error: " << status.message() << "\n";
  return status.IsBadInput() ? kExitBadInput : kExitFailure;
}

void Warn(const std::string& message) {
  if (!g_quiet) std::cerr << "plumber: warning: " << message << "\n";
}

bool ProgressOnStderr() {
  const char* term = std::getenv("TERM");
  return !g_quiet && isatty(STDERR_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

bool ColorOnStderr() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDERR_FILENO) == 1 && !(no_color && *no_color);
}

}  // namespace plumber::cli

int main(int argc, char** argv) {
  // Pipelines run in this process (run, optimize, demo); see allocator.h.
  plumber::runtime::KeepFreedMemoryForReuse();
  try {
    return plumber::cli::Main(argc, argv);
  } catch (const std::bad_alloc&) {
    // Too large a request from the input (a size, a count) rather than a
    // defect: say so, exit as for bad input. Temporary files are removed
    // by their guards as the stack unwinds.
    std::cerr << "plumber: error: out of memory: the input or its flags ask for more memory than could be allocated\n";
    return plumber::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "plumber: error: internal error: " << e.what() << "\n";
    return plumber::cli::kExitFailure;
  }
}
