// The GLPK layer: optima of small programs, integer variables, and clear
// errors instead of GLPK aborts on infeasible, unbounded or malformed input.
#include <catch2/catch.hpp>

#include <cmath>

#include "lp/linear_program.h"

using namespace plumber;
using namespace plumber::lp;

TEST_CASE("a small LP reaches its known optimum", "[lp]") {
  // max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, x <= 3: optimum x=3, y=1, 11.
  LinearProgram lp(LinearProgram::Sense::kMaximize);
  int x = lp.AddColumn("x", 0, 3, 3);
  int y = lp.AddColumn("y", 0, kUnbounded, 2);
  lp.AddRow("a", {{x, 1}, {y, 1}}, -kUnbounded, 4);
  lp.AddRow("b", {{x, 1}, {y, 3}}, -kUnbounded, 6);
  auto sol = lp.Solve();
  REQUIRE(sol.ok());
  CHECK(sol->objective == Approx(11));
  CHECK(sol->values[x] == Approx(3));
  CHECK(sol->values[y] == Approx(1));
}

TEST_CASE("integer columns are solved by branch and bound", "[lp]") {
  // Knapsack: weights 5, 4, 3 under 7, values 10, 7, 5: best is items 2+3 = 12.
  LinearProgram lp(LinearProgram::Sense::kMaximize);
  int a = lp.AddColumn("a", 0, 1, 10, true);
  int b = lp.AddColumn("b", 0, 1, 7, true);
  int c = lp.AddColumn("c", 0, 1, 5, true);
  lp.AddRow("weight", {{a, 5}, {b, 4}, {c, 3}}, -kUnbounded, 7);
  auto sol = lp.Solve();
  REQUIRE(sol.ok());
  CHECK(sol->objective == Approx(12));
  CHECK(sol->values[a] == Approx(0));
  CHECK(sol->values[b] == Approx(1));
  CHECK(sol->values[c] == Approx(1));
}

TEST_CASE("infeasible and unbounded programs are errors, not aborts", "[lp]") {
  LinearProgram infeasible(LinearProgram::Sense::kMaximize);
  int x = infeasible.AddColumn("x", 0, 1, 1);
  infeasible.AddRow("impossible", {{x, 1}}, 2, kUnbounded);
  auto r = infeasible.Solve();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Status::Code::kFailedPrecondition);
  CHECK_THAT(r.status().message(), Catch::Contains("infeasible"));

  LinearProgram unbounded(LinearProgram::Sense::kMaximize);
  unbounded.AddColumn("x", 0, kUnbounded, 1);
  auto u = unbounded.Solve();
  REQUIRE_FALSE(u.ok());
  CHECK_THAT(u.status().message(), Catch::Contains("unbounded"));
}

TEST_CASE("malformed input is refused before GLPK sees it", "[lp]") {
  LinearProgram nan_bound(LinearProgram::Sense::kMinimize);
  nan_bound.AddColumn("x", 0, std::nan(""), 1);
  CHECK(nan_bound.Solve().status().code() == Status::Code::kInvalidArgument);

  LinearProgram bad_index(LinearProgram::Sense::kMinimize);
  bad_index.AddColumn("x", 0, 1, 1);
  bad_index.AddRow("r", {{3, 1.0}}, 0, 1);
  CHECK_THAT(bad_index.Solve().status().message(), Catch::Contains("names column 3 of 1"));

  LinearProgram crossed(LinearProgram::Sense::kMinimize);
  crossed.AddColumn("x", 2, 1, 1);
  CHECK_THAT(crossed.Solve().status().message(), Catch::Contains("lo > hi"));

  LinearProgram empty(LinearProgram::Sense::kMinimize);
  CHECK_THAT(empty.Solve().status().message(), Catch::Contains("no variables"));
}
