// Table layouts; see table.h.
#include "report/table.h"

#include <algorithm>

namespace plumber::report {

std::string Table::Text() const {
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    w[c] = head[c].size();
    for (const auto& r : rows) w[c] = std::max(w[c], r[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l = " ";
    for (size_t c = 0; c < cells.size(); ++c) {
      l += " " + cells[c];
      if (c + 1 < cells.size()) l += std::string(w[c] - cells[c].size() + 1, ' ');
    }
    out += l + "\n";
  };
  line(head);
  for (const auto& r : rows) line(r);
  return out;
}

std::string Table::Markdown() const {
  std::string out = "|";
  for (const auto& h : head) out += " " + h + " |";
  out += "\n|";
  for (size_t c = 0; c < head.size(); ++c) out += "---|";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (const auto& cell : r) out += " " + cell + " |";
    out += "\n";
  }
  return out;
}

}  // namespace plumber::report
