// Placing imported dumps in time: the one step every importer shares. A
// dump is cumulative counters at one moment; rates need to know how long
// they cover. That comes from --window, from times the source recorded,
// or from the files' modification times, in that order; otherwise it is
// unknown and the trace says so (ImportInfo.window_known).
#pragma once

#include <optional>
#include <vector>

#include "base/status.h"
#include "traceio/import.h"
#include "trace.pb.h"

namespace plumber {

// `trace` holds one snapshot per input, in input order, and a header whose
// `imported` is filled except for the window fields. `source_seconds[i]`
// is the time of dump i since the run (the iterator) started, when the
// source records it (empty vector: never). Sets every snapshot's wall_ns,
// the header's warm-up (so that the window starts at the first dump when
// there are several) and ImportInfo.window_known / window_from, and adds a
// note when the time is unknown. Fails when times do not move forward.
Status PlaceSnapshotsInTime(const std::vector<ImportInput>& inputs, const ImportOptions& options,
                            const std::vector<std::optional<double>>& source_seconds, schema::Trace* trace);

}  // namespace plumber
