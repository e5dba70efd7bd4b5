// The shape search flags that `plumber rewrite` and `plumber optimize`
// share (--no-reshape, --verify N, --assume-valid-data), declared in one
// place so that both say the same and accept the same values.
#pragma once

#include <CLI/CLI.hpp>

namespace plumber::cli {

struct ShapeFlags {
  bool no_reshape = false;
  int verify = 16;
  bool assume_valid_data = false;
};

// `compared` names what --verify runs against its reshaping: "the traced
// pipeline", "a step's pipeline".
void AddShapeFlags(CLI::App& app, ShapeFlags* flags, const std::string& compared);

}  // namespace plumber::cli
