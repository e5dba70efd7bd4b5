// A table of strings printed as aligned text columns (the terminal) or as
// a markdown table: the one table layout of every report.
#pragma once

#include <string>
#include <vector>

namespace plumber::report {

struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;

  // Two leading spaces, columns one space apart, padded to the widest cell.
  std::string Text() const;
  std::string Markdown() const;
};

}  // namespace plumber::report
