// An Env whose files live in memory, after LevelDB's NewMemEnv: tests (and
// tools that want a scratch file system) get the whole Env contract --
// short-read-safe sequential reads, truncating and appending writes, atomic
// rename, sorted globs, errors that name the path -- without touching disk.
#pragma once

#include <memory>

#include "env.h"

namespace plumber {

// Returns a new, empty in-memory Env. Only the clock is taken from `base`,
// which must be non-null and outlive the result.
//
// The file system it models is flat: a path is a name, compared byte for
// byte ("a/b" and "./a/b" are two files), and no directory needs to exist
// before a file is created in it. Glob matches names with fnmatch(3) the way
// glob(3) matches paths: `*` and `?` stop at '/', and a leading '.' must be
// matched explicitly.
//
// Like POSIX, a file that is open when it is removed, renamed over or
// recreated keeps its bytes for whoever holds it open; the name then refers
// to the new file. Appended bytes are visible to readers at once (there is no
// page cache to flush). All methods may be called from any thread.
std::unique_ptr<Env> NewMemEnv(Env* base);

}  // namespace plumber
