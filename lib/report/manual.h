// Plain text from a man page's roff source, for `plumber help` where man(1)
// is not installed (minimal containers). It covers the requests plumber's
// own pages use (.TH .SH .SS .PP .TP .IP .B .I .BR .IR .RS .RE .nf .fi .EX
// .EE and the \f fonts); anything else is dropped rather than shown raw.
#pragma once

#include <string>
#include <string_view>

namespace plumber::report {

std::string RoffToText(std::string_view roff);

}  // namespace plumber::report
