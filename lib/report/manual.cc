// A small roff reader for man pages: enough to read plumber's manual
// without man(1). See manual.h for what it covers.
#include "report/manual.h"

#include <sstream>
#include <vector>

namespace plumber::report {
namespace {

// Font changes and escapes inside a line: \fB, \fI, \fR, \fP, \-, \(em, \e, \&.
std::string Inline(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    if (c == 'f' && i + 1 < s.size()) {
      ++i;  // font: plain text has none
    } else if (c == '-') {
      out += '-';
    } else if (c == 'e' || c == '\\') {
      out += '\\';
    } else if (c == '&') {
      // zero-width
    } else if (c == '(' && i + 2 < s.size()) {
      const std::string_view name = s.substr(i + 1, 2);
      out += name == "em" ? "--" : name == "bu" ? "*" : name == "aq" ? "'" : name == "dq" ? "\"" : "";
      i += 2;
    } else if (c == '"') {
      break;  // comment to the end of the line
    } else {
      out += c;
    }
  }
  return out;
}

// Arguments of a request, honouring double quotes.
std::vector<std::string> Args(std::string_view s) {
  std::vector<std::string> args;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size()) break;
    std::string a;
    if (s[i] == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') a += s[i++];
      ++i;
    } else {
      while (i < s.size() && s[i] != ' ') a += s[i++];
    }
    args.push_back(Inline(a));
  }
  return args;
}

}  // namespace

std::string RoffToText(std::string_view roff) {
  std::istringstream in{std::string(roff)};
  std::string out, line, para;
  int indent = 7;
  bool nofill = false;
  bool tag_next = false;  // .TP: the next line is the tag
  auto flush = [&] {
    if (para.empty()) return;
    // Fill to 78 columns at the current indent.
    std::string cur(indent, ' ');
    std::istringstream words(para);
    std::string w;
    while (words >> w) {
      if (cur.size() > static_cast<size_t>(indent) && cur.size() + 1 + w.size() > 78) {
        out += cur + "\n";
        cur = std::string(indent, ' ');
      }
      if (cur.size() > static_cast<size_t>(indent)) cur += ' ';
      cur += w;
    }
    if (cur.size() > static_cast<size_t>(indent)) out += cur + "\n";
    para.clear();
  };
  while (std::getline(in, line)) {
    if (line.rfind(".\\\"", 0) == 0 || line.rfind("'\\\"", 0) == 0) continue;  // comment
    if (!line.empty() && line[0] == '.') {
      const size_t sp = line.find(' ');
      const std::string req = line.substr(1, sp == std::string::npos ? std::string::npos : sp - 1);
      const std::string rest = sp == std::string::npos ? "" : line.substr(sp + 1);
      const auto args = Args(rest);
      std::string joined;
      for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;
      if (req == "TH") {
        if (!args.empty()) out += args[0] + (args.size() > 1 ? "(" + args[1] + ")" : "") + "\n\n";
      } else if (req == "SH" || req == "SS") {
        flush();
        indent = 7;
        out += (out.empty() || out.ends_with("\n\n") ? "" : "\n") + std::string(req == "SS" ? "   " : "") + joined +
               "\n";
      } else if (req == "PP" || req == "P" || req == "LP") {
        flush();
        indent = 7;
        out += "\n";
      } else if (req == "TP") {
        flush();
        indent = 7;
        out += "\n";
        tag_next = true;
      } else if (req == "IP") {
        flush();
        out += "\n";
        if (!args.empty()) out += std::string(7, ' ') + args[0] + "\n";
        indent = 11;
      } else if (req == "RS") {
        flush();
        indent += 4;
      } else if (req == "RE") {
        flush();
        indent = std::max(7, indent - 4);
      } else if (req == "nf" || req == "EX") {
        flush();
        nofill = true;
      } else if (req == "fi" || req == "EE") {
        nofill = false;
      } else if (req == "B" || req == "I" || req == "BR" || req == "IR" || req == "RB" || req == "RI" ||
                 req == "BI" || req == "IB") {
        // Alternating fonts join their arguments without spaces; .B and .I keep them.
        std::string text;
        for (const auto& a : args) text += (req.size() == 1 && !text.empty() ? " " : "") + a;
        if (tag_next) {
          out += std::string(7, ' ') + text + "\n";
          tag_next = false;
          indent = 11;
        } else {
          para += (para.empty() ? "" : " ") + text;
        }
      } else if (req == "br" || req == "sp") {
        flush();
        if (req == "sp") out += "\n";
      }
      continue;
    }
    const std::string text = Inline(line);
    if (nofill) {
      out += std::string(indent, ' ') + text + "\n";
    } else if (tag_next) {
      out += std::string(7, ' ') + text + "\n";
      tag_next = false;
      indent = 11;
    } else {
      para += (para.empty() ? "" : " ") + text;
    }
  }
  flush();
  return out;
}

}  // namespace plumber::report
