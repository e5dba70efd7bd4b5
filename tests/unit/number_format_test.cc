// The one rule for numbers people read (base/number_format.h), at its
// boundaries, and the golden files held to it.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "base/number_format.h"
#include "base/units.h"

using namespace plumber;

TEST_CASE("FormatNumber keeps four digits from 0.001 to 9999", "[number_format]") {
  CHECK(FormatNumber(0) == "0");
  CHECK(FormatNumber(0.5) == "0.5");
  CHECK(FormatNumber(12.5) == "12.5");
  CHECK(FormatNumber(2.5316456) == "2.532");
  CHECK(FormatNumber(0.63291139) == "0.6329");
  CHECK(FormatNumber(1562.5) == "1562");  // a tie rounds to even, as printf does
  CHECK(FormatNumber(0.001) == "0.001");
  CHECK(FormatNumber(0.0012345) == "0.001234");
  CHECK(FormatNumber(0.00099996) == "0.001");
  CHECK(FormatNumber(999.95) == "1000");
  CHECK(FormatNumber(1e3) == "1000");
  CHECK(FormatNumber(9999) == "9999");
  CHECK(FormatNumber(9999.4) == "9999");
}

TEST_CASE("FormatNumber gives large values an SI prefix and three digits", "[number_format]") {
  CHECK(FormatNumber(9999.5) == "10k");  // rounds to 10^4: past the four-digit range
  CHECK(FormatNumber(1e4) == "10k");
  CHECK(FormatNumber(25253) == "25.3k");
  CHECK(FormatNumber(31250) == "31.2k");  // 31.25 to three digits: a tie, rounded to even
  CHECK(FormatNumber(120690) == "121k");
  CHECK(FormatNumber(999999) == "1M");  // not "1000k"
  CHECK(FormatNumber(1e7) == "10M");
  CHECK(FormatNumber(1.021e8) == "102M");
  CHECK(FormatNumber(6.25e8) == "625M");
  CHECK(FormatNumber(1.5e9) == "1.5G");
  CHECK(FormatNumber(3e12) == "3T");
  CHECK(FormatNumber(1e15) == "1P");
  CHECK(FormatNumber(2e18) == "2E");
  CHECK(FormatNumber(1e21) == "1000E");  // past the last prefix the digits grow
}

TEST_CASE("FormatNumber writes small values out in decimals", "[number_format]") {
  CHECK(FormatNumber(9.796e-06) == "0.0000098");
  CHECK(FormatNumber(9.744e-05) == "0.0000974");
  CHECK(FormatNumber(9.44e-07) == "0.000000944");
  CHECK(FormatNumber(1e-7) == "0.0000001");
  CHECK(FormatNumber(0.00099949) == "0.000999");
  CHECK(FormatNumber(1e-12) == "0.000000000001");
  // Below 10^-12: the noise of arithmetic on doubles, which reads 0.
  CHECK(FormatNumber(1 - 0.9 - 0.1) == "0");
  CHECK(FormatNumber(1e-15) == "0");
}

TEST_CASE("FormatNumber signs, zeros and values that are not numbers", "[number_format]") {
  CHECK(FormatNumber(-0.0) == "0");
  CHECK(FormatNumber(-1e-15) == "0");
  CHECK(FormatNumber(-0.5) == "-0.5");
  CHECK(FormatNumber(-25253) == "-25.3k");
  CHECK(FormatNumber(-9.796e-06) == "-0.0000098");
  CHECK(FormatNumber(std::nan("")) == "nan");
  CHECK(FormatNumber(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(FormatNumber(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(FormatNumber(std::numeric_limits<double>::max()).find('e') == std::string::npos);
  CHECK(FormatNumber(std::numeric_limits<double>::denorm_min()) == "0");
}

TEST_CASE("no format of number_format.h writes an exponent", "[number_format]") {
  for (double v = 1e-300; v < 1e300; v *= 7.77) {
    for (double s : {v, -v}) {
      INFO(s);
      CHECK(FormatNumber(s).find('e') == std::string::npos);
      CHECK(FormatSignificant(s, 6).find('e') == std::string::npos);
      CHECK(units::FormatSeconds(s).find('e') == std::string::npos);
      CHECK(units::FormatBytes(s).find('e') == std::string::npos);
    }
  }
}

TEST_CASE("FormatCount says 1 core, 2 cores", "[number_format]") {
  CHECK(FormatCount(1, "core", "cores") == "1 core");
  CHECK(FormatCount(1.00001, "core", "cores") == "1 core");  // it reads 1
  CHECK(FormatCount(0.9999, "core", "cores") == "0.9999 cores");
  CHECK(FormatCount(2, "core", "cores") == "2 cores");
  CHECK(FormatCount(0, "core", "cores") == "0 cores");
  CHECK(FormatCount(2e4, "core", "cores") == "20k cores");
  CHECK(FormatCount(6.2431, "core", "cores", 3) == "6.24 cores");
  CHECK(FormatCount(0.99991, "core", "cores", 3) == "1 core");
}

TEST_CASE("FormatCount writes a whole count out in full", "[number_format]") {
  CHECK(FormatCount(12345, "record", "records") == "12345 records");
  CHECK(FormatCount(size_t{1}, "node", "nodes") == "1 node");
  CHECK(FormatCount(int64_t{0}, "file", "files") == "0 files");
  CHECK(FormatCount(-1, "dump", "dumps") == "-1 dumps");
}

TEST_CASE("FormatPercent and FormatChange", "[number_format]") {
  CHECK(FormatPercent(0.125) == "12.5%");
  CHECK(FormatPercent(1.003) == "100.3%");
  CHECK(FormatPercent(-1e-16) == "0%");
  CHECK(FormatChange(0.125) == "+12.5%");
  CHECK(FormatChange(-0.5) == "-50.0%");
  CHECK(FormatChange(0) == "+0.0%");
  CHECK(FormatChange(-0.0001) == "+0.0%");  // rounds to no change: never "-0.0%"
  CHECK(FormatChange(9.9999) == "+1,000%");
  CHECK(FormatChange(75263) == "+7,526,300%");
  CHECK(FormatChange(-12.5) == "-1,250%");
}

TEST_CASE("FormatSignificant writes every digit out", "[number_format]") {
  CHECK(FormatSignificant(1234.56) == "1235");
  CHECK(FormatSignificant(1.5e6) == "1500000");
  CHECK(FormatSignificant(5e-4, 2) == "0.0005");
  CHECK(FormatSignificant(0.1 + 0.2, 6) == "0.3");
  CHECK(FormatSignificant(1e20, 3) == "100000000000000000000");
  CHECK(FormatSignificant(-0.0) == "0");
  CHECK(FormatSignificant(-2.5, 2) == "-2.5");
  CHECK(FormatFixed(-0.001, 2) == "0.00");
  CHECK(FormatFixed(-1.25, 1) == "-1.2");
  CHECK(FormatRounded(-0.001) == "0.00");
}

TEST_CASE("units read in a unit that fits, never 1000 of the one below", "[number_format]") {
  CHECK(units::FormatSeconds(9.796e-06) == "9.8 us");
  CHECK(units::FormatSeconds(0.0009997) == "1 ms");
  CHECK(units::FormatSeconds(0.9996) == "1 s");
  CHECK(units::FormatSeconds(9.9996e-7) == "1 us");
  CHECK(units::FormatSeconds(1e-12) == "0.001 ns");
  CHECK(units::FormatSeconds(12345) == "3.43 h");
  CHECK(units::FormatSeconds(1e30).find('e') == std::string::npos);
  CHECK(units::FormatBytes(999.7) == "1.00 kB");
  CHECK(units::FormatBytes(999999) == "1.00 MB");
  CHECK(units::FormatBytes(999.4) == "999 B");
  CHECK(units::FormatMinibatchRate(25253) == "25.3k minibatches/s");
  CHECK(units::FormatMinibatchRate(12.5) == "12.5 minibatches/s");
}

namespace {

// The lines of `text` with a number in e-notation ("1.5e+06", "9.8e-07")
// that a person reads: anywhere in a human format; in JSON (text that
// starts with { or [) only inside strings (findings, limit texts), since
// JSON numbers keep the full double.
std::vector<std::string> ExponentLines(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && (text[first] == '{' || text[first] == '[');
  std::vector<std::string> hits;
  bool in_string = false;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      line_start = i + 1;
      in_string = false;  // JSON strings do not span lines
      continue;
    }
    if (json && c == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
    if ((!json || in_string) && i + 3 < text.size() && std::isdigit(static_cast<unsigned char>(c)) &&
        text[i + 1] == 'e' && (text[i + 2] == '+' || text[i + 2] == '-') &&
        std::isdigit(static_cast<unsigned char>(text[i + 3]))) {
      const size_t end = text.find('\n', i);
      hits.push_back(text.substr(line_start, end == std::string::npos ? std::string::npos : end - line_start));
      if (end == std::string::npos) break;
      i = end - 1;  // one report a line; the loop then reads the newline
    }
  }
  return hits;
}

}  // namespace

TEST_CASE("the e-notation check finds exponents people read", "[number_format]") {
  CHECK(ExponentLines("rate 1.021e+08 mb/s\n").size() == 1);
  CHECK(ExponentLines("1e+04 and 2e+04\nnone\n3e-05\n").size() == 2);
  CHECK(ExponentLines("x 9.796e-06\n").size() == 1);
  CHECK(ExponentLines("{\n  \"cpu\": 2e-05,\n  \"text\": \"3 minibatches/s\"\n}\n").empty());
  CHECK(ExponentLines("{\n  \"text\": \"at 1.5e+06 minibatches/s\"\n}\n").size() == 1);
  CHECK(ExponentLines("node e-1 and 2e5 and release\n").empty());
}

// Every golden stdout is what a person or a program reads from plumber: a
// human format must never show an exponent (JSON numbers may; its strings
// may not). A number that comes back in e-notation fails here, naming the
// case and the line.
TEST_CASE("no golden a person reads has a number in e-notation", "[number_format]") {
  namespace fs = std::filesystem;
  const fs::path cases = fs::path(PLUMBER_SOURCE_DIR) / "tests" / "golden" / "cases";
  REQUIRE(fs::is_directory(cases));
  int checked = 0;
  std::vector<std::string> found;
  for (const auto& dir : fs::directory_iterator(cases)) {
    const fs::path out = dir.path() / "stdout";
    if (!fs::is_regular_file(out)) continue;
    std::ifstream in(out, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    ++checked;
    for (const auto& line : ExponentLines(text.str())) {
      found.push_back(dir.path().filename().string() + "/stdout: " + line);
    }
  }
  CHECK(checked >= 50);
  std::string report;
  for (const auto& f : found) report += f + "\n";
  INFO(report);
  CHECK(found.empty());
}
