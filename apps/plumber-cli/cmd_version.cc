// plumber version: the version, and the formats this build reads and writes.
#include <iostream>

#include "command.h"
#include "traceio/trace_io.h"
#include "version.h"

namespace plumber::cli {

std::string VersionLine() {
  return "plumber " + std::string(kPlumberVersion) + " (trace format " + std::to_string(kTraceFormatVersion) + ")";
}

Handler SetupVersion(CLI::App&) {
  return [] {
    std::cout << VersionLine() << "\n";
    return kExitOk;
  };
}

}  // namespace plumber::cli
