// Upper concave hull (monotone chain) of measured bandwidth points.
#include "lp/bandwidth_curve.h"

#include <algorithm>
#include <cmath>

namespace plumber::lp {

std::vector<BandwidthPiece> FitConcaveCurve(std::vector<std::pair<double, double>> points) {
  std::vector<BandwidthPiece> pieces;
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const auto& pt) {
                                return !(pt.first >= 1) || !std::isfinite(pt.first) || !(pt.second >= 0) ||
                                       !std::isfinite(pt.second);
                              }),
               points.end());
  if (points.empty()) return pieces;
  double best = 0;
  for (const auto& pt : points) best = std::max(best, pt.second);
  points.emplace_back(0.0, 0.0);
  std::sort(points.begin(), points.end());
  // Keep the best bandwidth per parallelism.
  std::vector<std::pair<double, double>> unique;
  for (const auto& pt : points) {
    if (!unique.empty() && unique.back().first == pt.first) {
      unique.back().second = std::max(unique.back().second, pt.second);
    } else {
      unique.push_back(pt);
    }
  }
  // Upper hull: drop a point that lies on or below the chord of its neighbours.
  std::vector<std::pair<double, double>> hull;
  for (const auto& pt : unique) {
    while (hull.size() >= 2) {
      const auto& a = hull[hull.size() - 2];
      const auto& b = hull.back();
      const double cross = (b.first - a.first) * (pt.second - a.second) - (b.second - a.second) * (pt.first - a.first);
      if (cross >= 0) hull.pop_back();
      else break;
    }
    hull.push_back(pt);
  }
  for (size_t i = 0; i + 1 < hull.size(); ++i) {
    const double slope = (hull[i + 1].second - hull[i].second) / (hull[i + 1].first - hull[i].first);
    if (slope <= 0) break;  // beyond the peak the flat piece takes over
    pieces.push_back({slope, hull[i].second - slope * hull[i].first});
  }
  pieces.push_back({0.0, best});
  return pieces;
}

double CurveBandwidth(const std::vector<BandwidthPiece>& pieces, double p) {
  if (pieces.empty()) return 0;
  double b = pieces.front().slope * p + pieces.front().intercept;
  for (const auto& piece : pieces) b = std::min(b, piece.slope * p + piece.intercept);
  return b;
}

}  // namespace plumber::lp
