// How plumber prints a number in every report: one home, so that the same
// quantity reads the same in analyze, rank, rewrite, check, diff and the
// pictures. Units (bytes, rates, durations) are in units.h and use these.
#pragma once

#include <string>

namespace plumber {

// Four significant digits, switching to an exponent (1.234e+07, 5.000e-04)
// outside [0.001, 10^7): the tables of analyze and rank.
std::string FormatNumber(double v);
// printf's %.<digits>g: "1234", "0.5", "1.5e+06".
std::string FormatSignificant(double v, int digits = 4);
// printf's %.<decimals>f.
std::string FormatFixed(double v, int decimals);
// About three significant digits, never an exponent: 0 decimals from 100,
// 1 from 10, else 2 ("412", "41.2", "4.12").
std::string FormatRounded(double v);
// A relative change: 0.125 -> "+12.5%".
std::string FormatChange(double share);

}  // namespace plumber
