// The checks a subcommand makes on the file it will write, before it does
// any work: a run or an optimization that can only fail to write its
// result at the end should fail at the start instead, and no input is
// ever replaced by an output. Real files only (POSIX), not an Env: these
// are the paths a user typed.
#pragma once

#include <string>
#include <vector>

#include "status.h"

namespace plumber {

// InvalidArgument (exit 2) naming `output` when its directory is missing or
// not writable, when it is a directory, when it exists read-only (plumber
// keeps such a file rather than replace it), or when it is one of `inputs`
// (the same file by device and inode, whatever the spelling of the path).
Status CheckOutputPath(const std::string& output, const std::vector<std::string>& inputs = {});

}  // namespace plumber
