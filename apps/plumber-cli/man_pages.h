// The manual pages (man/*.1) compiled into the binary by embed_man.cmake,
// so `plumber help` works wherever the binary is copied.
#pragma once

#include <span>
#include <string_view>

namespace plumber::cli {

struct ManPage {
  std::string_view name;  // "plumber", "plumber-check", ...
  std::string_view text;  // roff source
};

std::span<const ManPage> ManPages();

}  // namespace plumber::cli
