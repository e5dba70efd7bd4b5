// plumber version: the version, and the formats this build reads and writes.
#include <iostream>

#include "command.h"
#include "traceio/trace_io.h"
#include "version.h"

namespace plumber::cli {

Handler SetupVersion(CLI::App&) {
  return [] {
    std::cout << "plumber " << kPlumberVersion << " (trace format " << kTraceFormatVersion << ")\n";
    return kExitOk;
  };
}

}  // namespace plumber::cli
