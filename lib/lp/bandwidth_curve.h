// Storage bandwidth as a concave piecewise-linear function of read
// parallelism, fitted to measured points: the upper concave hull of the
// points (with the origin: no readers, no bytes), one piece per hull
// segment, and a flat piece at the best bandwidth seen so the curve never
// promises more than was measured. The throughput LP takes the pieces as
// X * D <= slope * p + intercept.
#pragma once

#include <utility>
#include <vector>

#include "lp/throughput.h"

namespace plumber::lp {

// points: (parallelism >= 1, bytes/s >= 0). Empty input gives no pieces.
std::vector<BandwidthPiece> FitConcaveCurve(std::vector<std::pair<double, double>> points);

// The curve's bandwidth at parallelism p: min over pieces.
double CurveBandwidth(const std::vector<BandwidthPiece>& pieces, double p);

}  // namespace plumber::lp
