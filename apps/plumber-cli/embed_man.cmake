# Writes OUT, a C++ file holding the text of every man page in PAGES, so
# that `plumber help NAME` shows the manual without finding it on disk.
# Run at build time (see CMakeLists.txt); the file is only replaced when its
# text changes, so an unchanged manual rebuilds nothing.
string(REPLACE "|" ";" PAGES "${PAGES}")
set(body "// Generated from man/*.1 by apps/plumber-cli/embed_man.cmake; do not edit.\n")
string(APPEND body "// The manual pages inside the binary, for plumber help.\n#include \"man_pages.h\"\n\n")
string(APPEND body "namespace plumber::cli {\nnamespace {\n\nconstexpr ManPage kPages[] = {\n")
foreach(page IN LISTS PAGES)
  get_filename_component(name ${page} NAME)
  string(REGEX REPLACE "\\.1$" "" name "${name}")
  file(READ ${page} text)
  string(APPEND body "    {\"${name}\", R\"plumberman(${text})plumberman\"},\n")
endforeach()
string(APPEND body "};\n\n}  // namespace\n\nstd::span<const ManPage> ManPages() { return kPages; }\n\n}  // namespace plumber::cli\n")
file(WRITE ${OUT}.tmp "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
