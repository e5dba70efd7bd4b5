// plumber help [NAME]: the manual page of plumber or of one subcommand, the
// same text as `man plumber-NAME`. The pages are compiled into the binary
// (man_pages.h), rendered by man(1) when it is installed and by the small
// roff reader of lib/report/manual.h otherwise (or with --plain).
#include <cstdlib>
#include <iostream>

#include "base/env.h"
#include "command.h"
#include "man_pages.h"
#include "report/manual.h"

namespace plumber::cli {
namespace {

struct HelpFlags {
  std::string name;
  bool plain = false;
};

bool HaveMan() { return std::system("command -v man >/dev/null 2>&1") == 0; }

// man -l on a private copy of the page: man(1) picks the width, the pager
// (none when stdout is not a terminal) and strips formatting for pipes.
int RenderWithMan(std::string_view text) {
  Env* env = Env::Default();
  auto dir = ScopedTempDir::Make(env, "plumber-help-");
  if (!dir.ok()) return -1;
  const std::string path = dir->path() + "/page.1";
  if (!WriteFileAtomically(env, path, text).ok()) return -1;
  std::cout.flush();
  return std::system(("man -l '" + path + "'").c_str());
}

int RunHelp(const HelpFlags& f) {
  const std::string want = f.name.empty() || f.name == "plumber" ? "plumber" : "plumber-" + f.name;
  const ManPage* page = nullptr;
  std::string names;
  for (const auto& p : ManPages()) {
    if (p.name == want) page = &p;
    if (p.name.starts_with("plumber-")) names += (names.empty() ? "" : ", ") + std::string(p.name.substr(8));
  }
  if (!page) {
    return ReportError(Status::InvalidArgument("help: no manual page for '" + f.name + "' (pages: " + names + ")"));
  }
  if (!f.plain && HaveMan() && RenderWithMan(page->text) == 0) return kExitOk;
  std::cout << report::RoffToText(page->text);
  return kExitOk;
}

}  // namespace

Handler SetupHelp(CLI::App& app) {
  auto f = std::make_shared<HelpFlags>();
  app.add_option("NAME", f->name, "Subcommand whose page to show (default: plumber(1) itself)");
  app.add_flag("--plain", f->plain, "Print the page as plain text without man(1)");
  return [f] { return RunHelp(*f); };
}

}  // namespace plumber::cli
