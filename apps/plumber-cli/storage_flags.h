// The storage throttle flags that `plumber run` and `plumber optimize`
// share (--read-bandwidth, --read-latency), declared and parsed in one
// place so that both read "100MB/s" and "5ms" alike and refuse the same
// values with the same words.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "base/status.h"
#include "runtime/storage.h"

namespace plumber::cli {

struct StorageFlags {
  std::string read_bandwidth;
  std::string read_latency;
};

// `whose_reads` completes the bandwidth flag's help: "Throttle all file
// reads " + whose_reads, e.g. "to this rate, e.g. 100MB/s".
void AddStorageFlags(CLI::App& app, StorageFlags* flags, const std::string& whose_reads);

// The throttles the flags ask for; unset flags leave `storage` as it is.
// Errors name the flag: a bandwidth must be > 0, a latency not negative.
Status ParseStorageFlags(const StorageFlags& flags, runtime::StorageOptions* storage);

}  // namespace plumber::cli
