// LinearProgram: a small RAII layer over GLPK's glp_prob. Columns and rows
// are added with plain numbers; Solve returns the optimum or a Status that
// says why there is none. GLPK aborts the process on malformed input, so
// every number is checked here first (finite, bounds ordered, indices in
// range) and GLPK's terminal output is silenced unless asked for.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

struct glp_prob;

namespace plumber::lp {

inline constexpr double kUnbounded = 1e300;  // "no bound" for column and row limits

class LinearProgram {
 public:
  enum class Sense { kMaximize, kMinimize };

  explicit LinearProgram(Sense sense);
  LinearProgram(const LinearProgram&) = delete;
  LinearProgram& operator=(const LinearProgram&) = delete;
  ~LinearProgram();

  // Adds a variable lo <= x <= hi (use kUnbounded / -kUnbounded for none)
  // with objective coefficient `objective`; returns its index.
  int AddColumn(const std::string& name, double lo, double hi, double objective, bool integer = false);

  // Adds the constraint lo <= sum coef * x[col] <= hi; returns its index.
  int AddRow(const std::string& name, const std::vector<std::pair<int, double>>& terms, double lo, double hi);

  struct Options {
    int time_limit_ms = 10'000;
    bool verbose = false;  // GLPK's own progress output to the debug log, for -v
  };

  struct Solution {
    double objective = 0;
    std::vector<double> values;  // one per column, in AddColumn order
  };

  // Solves (by simplex, then branch and bound when a column is integer).
  // Infeasible, unbounded and timed-out programs are FailedPrecondition
  // naming the program; malformed input is InvalidArgument.
  StatusOr<Solution> Solve(const Options& options) const;
  StatusOr<Solution> Solve() const { return Solve(Options{}); }

  int columns() const { return static_cast<int>(columns_.size()); }
  int rows() const { return static_cast<int>(rows_.size()); }

 private:
  struct Column {
    std::string name;
    double lo, hi, objective;
    bool integer;
  };
  struct Row {
    std::string name;
    std::vector<std::pair<int, double>> terms;
    double lo, hi;
  };

  Status Check() const;

  Sense sense_;
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace plumber::lp
