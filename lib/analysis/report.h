// Renders an analysis Report for people (text, markdown) and scripts
// (JSON). The JSON keys of DESIGN.md section 7 are a contract: keys may be
// added, never renamed. Unbounded or unknown numbers are JSON null.
#pragma once

#include <string>

#include "analysis/model.h"

namespace plumber::analysis {

std::string FormatReportJson(const Report& report);
std::string FormatReportText(const Report& report);
std::string FormatReportMarkdown(const Report& report);

// The ranking alone (`plumber rank`); top <= 0 means every node.
std::string FormatRankText(const Report& report, int top);
std::string FormatRankJson(const Report& report, int top);

}  // namespace plumber::analysis
