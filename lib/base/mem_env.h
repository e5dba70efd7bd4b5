// An Env whose files live in memory, after LevelDB's NewMemEnv: tests (and
// tools that want a scratch file system) get the whole Env contract --
// short-read-safe sequential reads, truncating and appending writes, atomic
// rename, sorted globs, errors that name the path -- without touching disk.
#pragma once

#include <cstdint>
#include <memory>

#include "env.h"

namespace plumber {

// Returns a new, empty in-memory Env. Only the clock is taken from `base`,
// which must be non-null and outlive the result. Its file system holds
// `capacity_bytes`: FreeBytes answers that less the bytes its files hold
// (writes beyond it are not refused; tests/support/fault_env.h has a disk
// that fills up).
//
// The file system it models is flat: a path is a name, compared byte for
// byte ("a/b" and "./a/b" are two files), and no directory needs to exist
// before a file is created in it. Glob matches names with fnmatch(3) the way
// glob(3) matches paths: `*` and `?` stop at '/', and a leading '.' must be
// matched explicitly. Directories are names too: CreateDirectories and
// MakeTempDir record them (MakeTempDir under "/tmp/", numbered in order),
// and RemoveDirectoryRecursively forgets a directory and every file whose
// name starts with it and a '/'. Files keep no modification times.
//
// Like POSIX, a file that is open when it is removed, renamed over or
// recreated keeps its bytes for whoever holds it open; the name then refers
// to the new file. Appended bytes are visible to readers at once (there is no
// page cache to flush). All methods may be called from any thread.
std::unique_ptr<Env> NewMemEnv(Env* base, uint64_t capacity_bytes = uint64_t{1} << 40);

}  // namespace plumber
