#!/usr/bin/env bash
# The architecture rules of docs/architecture.md, checked on the sources:
#  1. no op-name comparison outside lib/pipeline (every question about an op
#     goes to its row in the op table);
#  2. each library includes only the libraries below it;
#  3. no library source file is longer than 650 lines unless its first lines
#     say why ("Long because: ...").
# Exit 1 naming each violation.
set -u
src=${1:?usage: architecture_check.sh SOURCE_DIR}
cd "$src" || exit 2
fail=0

# 1. op() == "..." and friends.
hits=$(grep -rnE 'op\(\) *(==|!=)|\bop *== *"[a-z_]+"' lib apps bench fuzz --include='*.cc' --include='*.h' |
  grep -v '^lib/pipeline/')
if [ -n "$hits" ]; then
  echo "FAIL: op names compared outside lib/pipeline (ask the op table instead):"
  echo "$hits"
  fail=1
fi

# 2. Layers: what each library may include (itself included).
declare -A allowed=(
  [base]="base"
  [pipeline]="base pipeline"
  [lp]="base lp"
  [traceio]="base pipeline traceio"
  [analysis]="base pipeline traceio lp analysis"
  [rewrite]="base pipeline lp analysis rewrite"
  [runtime]="base pipeline traceio lp runtime"
  [optimize]="base pipeline traceio lp analysis rewrite runtime optimize"
  [report]="base pipeline traceio lp analysis rewrite runtime optimize report"
)
for lib in "${!allowed[@]}"; do
  [ -d "lib/$lib" ] || { echo "FAIL: lib/$lib is listed but missing"; fail=1; continue; }
  while IFS= read -r line; do
    file=${line%%:*}
    dep=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$line")
    [ -d "lib/$dep" ] || continue  # not one of ours (e.g. a generated header)
    if [[ " ${allowed[$lib]} " != *" $dep "* ]]; then
      echo "FAIL: $file includes lib/$dep, which lib/$lib may not depend on"
      fail=1
    fi
  done < <(grep -rHE '^#include "[a-z_]+/' "lib/$lib")
done
for dir in lib/*/; do
  lib=$(basename "$dir")
  [ -n "${allowed[$lib]:-}" ] || { echo "FAIL: lib/$lib has no layer in tests/architecture_check.sh"; fail=1; }
done

# 3. Long files.
while IFS= read -r file; do
  lines=$(wc -l <"$file")
  if [ "$lines" -gt 650 ] && ! head -15 "$file" | grep -q "Long because:"; then
    echo "FAIL: $file has $lines lines; split it, or say why in its first lines (\"Long because: ...\")"
    fail=1
  fi
done < <(find lib -name '*.cc' -o -name '*.h')

[ $fail = 0 ] && echo "ok: op names only in lib/pipeline, layers respected, no unexplained long file"
exit $fail
