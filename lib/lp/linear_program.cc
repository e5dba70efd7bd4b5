// GLPK behind a checked, exception-free interface. The glp_prob lives only
// inside Solve, so a LinearProgram is cheap to build and never leaks.
#include "lp/linear_program.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/spdlog.h>

namespace plumber::lp {
namespace {

// GLPK's terminal hook is process-wide: a mutex keeps concurrent solves from
// fighting over it.
std::mutex g_glpk_mutex;

// GLPK prints through this hook: never to stdout (it would corrupt JSON
// output), to the debug log when asked for.
int Silence(void*, const char*) { return 1; }  // non-zero: GLPK prints nothing itself
int ToDebugLog(void*, const char* text) {
  std::string line(text);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  if (!line.empty()) spdlog::debug("glpk: {}", line);
  return 1;
}

int BoundType(double lo, double hi) {
  const bool has_lo = lo > -kUnbounded, has_hi = hi < kUnbounded;
  if (has_lo && has_hi) return lo == hi ? GLP_FX : GLP_DB;
  if (has_lo) return GLP_LO;
  if (has_hi) return GLP_UP;
  return GLP_FR;
}

struct ProbDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

}  // namespace

LinearProgram::LinearProgram(Sense sense) : sense_(sense) {}
LinearProgram::~LinearProgram() = default;

int LinearProgram::AddColumn(const std::string& name, double lo, double hi, double objective, bool integer) {
  columns_.push_back({name, lo, hi, objective, integer});
  return static_cast<int>(columns_.size()) - 1;
}

int LinearProgram::AddRow(const std::string& name, const std::vector<std::pair<int, double>>& terms, double lo,
                          double hi) {
  rows_.push_back({name, terms, lo, hi});
  return static_cast<int>(rows_.size()) - 1;
}

Status LinearProgram::Check() const {
  auto bad = [](double v) { return std::isnan(v); };
  for (const auto& c : columns_) {
    if (bad(c.lo) || bad(c.hi) || !std::isfinite(c.objective)) {
      return Status::InvalidArgument("linear program: column '" + c.name + "' has a NaN or infinite number");
    }
    if (c.lo > c.hi) return Status::InvalidArgument("linear program: column '" + c.name + "' has lo > hi");
  }
  for (const auto& r : rows_) {
    if (bad(r.lo) || bad(r.hi)) return Status::InvalidArgument("linear program: row '" + r.name + "' has a NaN bound");
    if (r.lo > r.hi) return Status::InvalidArgument("linear program: row '" + r.name + "' has lo > hi");
    for (const auto& [col, coef] : r.terms) {
      if (col < 0 || col >= columns()) {
        return Status::InvalidArgument("linear program: row '" + r.name + "' names column " + std::to_string(col) +
                                       " of " + std::to_string(columns()));
      }
      if (!std::isfinite(coef)) {
        return Status::InvalidArgument("linear program: row '" + r.name + "' has a non-finite coefficient");
      }
    }
  }
  if (columns_.empty()) return Status::InvalidArgument("linear program: no variables");
  return Status::OK();
}

StatusOr<LinearProgram::Solution> LinearProgram::Solve(const Options& options) const {
  PLUMBER_RETURN_IF_ERROR(Check());
  std::lock_guard<std::mutex> lock(g_glpk_mutex);
  glp_term_hook(options.verbose ? &ToDebugLog : &Silence, nullptr);
  std::unique_ptr<glp_prob, ProbDeleter> prob(glp_create_prob());
  glp_prob* p = prob.get();
  glp_set_obj_dir(p, sense_ == Sense::kMaximize ? GLP_MAX : GLP_MIN);
  glp_add_cols(p, columns());
  bool has_integer = false;
  for (int j = 0; j < columns(); ++j) {
    const Column& c = columns_[j];
    glp_set_col_bnds(p, j + 1, BoundType(c.lo, c.hi), c.lo > -kUnbounded ? c.lo : 0.0, c.hi < kUnbounded ? c.hi : 0.0);
    glp_set_obj_coef(p, j + 1, c.objective);
    if (c.integer) {
      glp_set_col_kind(p, j + 1, GLP_IV);
      has_integer = true;
    }
  }
  if (!rows_.empty()) glp_add_rows(p, rows());
  for (int i = 0; i < rows(); ++i) {
    const Row& r = rows_[i];
    glp_set_row_bnds(p, i + 1, BoundType(r.lo, r.hi), r.lo > -kUnbounded ? r.lo : 0.0, r.hi < kUnbounded ? r.hi : 0.0);
    // GLPK arrays are 1-based, and a column may appear once per row: terms
    // are merged by sorting, so a row costs its own length, not the
    // program's width (which made 5,000-stage programs quadratic).
    auto terms = r.terms;
    std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<int> index(1, 0);
    std::vector<double> value(1, 0.0);
    for (const auto& [col, coef] : terms) {
      if (index.size() > 1 && index.back() == col + 1) {
        value.back() += coef;
      } else {
        index.push_back(col + 1);
        value.push_back(coef);
      }
    }
    glp_set_mat_row(p, i + 1, static_cast<int>(index.size()) - 1, index.data(), value.data());
  }

  glp_smcp smcp;
  glp_init_smcp(&smcp);
  smcp.msg_lev = options.verbose ? GLP_MSG_ON : GLP_MSG_OFF;
  smcp.tm_lim = options.time_limit_ms;
  smcp.presolve = GLP_ON;  // presolve reports infeasibility instead of failing on it
  const int rc = glp_simplex(p, &smcp);
  if (rc == GLP_ETMLIM) return Status::FailedPrecondition("linear program: no answer within the time limit");
  if (rc == GLP_ENOPFS) return Status::FailedPrecondition("linear program: infeasible (no allocation meets every constraint)");
  if (rc == GLP_ENODFS) return Status::FailedPrecondition("linear program: unbounded (some limit is missing)");
  if (rc != 0) return Status::Internal("linear program: GLPK simplex failed with code " + std::to_string(rc));
  const int status = glp_get_status(p);
  if (status == GLP_NOFEAS) return Status::FailedPrecondition("linear program: infeasible (no allocation meets every constraint)");
  if (status == GLP_UNBND) return Status::FailedPrecondition("linear program: unbounded (some limit is missing)");
  if (status != GLP_OPT) return Status::Internal("linear program: GLPK ended without an optimum (status " + std::to_string(status) + ")");

  Solution sol;
  sol.values.resize(columns());
  if (has_integer) {
    glp_iocp iocp;
    glp_init_iocp(&iocp);
    iocp.msg_lev = options.verbose ? GLP_MSG_ON : GLP_MSG_OFF;
    iocp.tm_lim = options.time_limit_ms;
    const int mrc = glp_intopt(p, &iocp);
    if (mrc == GLP_ETMLIM) return Status::FailedPrecondition("linear program: no integer answer within the time limit");
    if (mrc != 0) return Status::Internal("linear program: GLPK branch and bound failed with code " + std::to_string(mrc));
    const int mstatus = glp_mip_status(p);
    if (mstatus == GLP_NOFEAS) return Status::FailedPrecondition("linear program: no integer solution is feasible");
    if (mstatus != GLP_OPT) return Status::Internal("linear program: no integer optimum (status " + std::to_string(mstatus) + ")");
    sol.objective = glp_mip_obj_val(p);
    for (int j = 0; j < columns(); ++j) sol.values[j] = glp_mip_col_val(p, j + 1);
  } else {
    sol.objective = glp_get_obj_val(p);
    for (int j = 0; j < columns(); ++j) sol.values[j] = glp_get_col_prim(p, j + 1);
  }
  return sol;
}

}  // namespace plumber::lp
