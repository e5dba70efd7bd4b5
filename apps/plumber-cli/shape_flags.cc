// The shape search flags; see shape_flags.h.
#include "shape_flags.h"

namespace plumber::cli {

void AddShapeFlags(CLI::App& app, ShapeFlags* flags, const std::string& compared) {
  app.add_flag("--no-reshape", flags->no_reshape, "Tune knobs only: move and fuse no ops");
  app.add_option("--verify", flags->verify,
                 "Outputs compared between " + compared +
                     " and the reshaped one before a shape change is made; 0 makes changes unverified (default 16)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--assume-valid-data", flags->assume_valid_data,
               "Every record parses and decodes: a filter may move above a decode (on a corrupt record the "
               "rewrite drops it with the filtered elements instead of failing)");
}

}  // namespace plumber::cli
