// The notes an importer leaves in the trace it writes (what it could not
// carry over, what it assumed): both importers' tests look for them.
#pragma once

#include <string>

#include "trace.pb.h"

namespace plumber::testing {

// Whether a note of the imported trace contains `part`.
inline bool HasNote(const schema::Trace& t, const std::string& part) {
  for (const auto& n : t.header().imported().notes()) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace plumber::testing
