#!/usr/bin/env bash
# Runs one golden case: CASE_DIR/cmd is a bash snippet run from the source
# root with `plumber` bound to the built binary and $TMP a fresh directory.
# Its stdout, stderr and exit code must equal CASE_DIR/{stdout,stderr,exit}
# exactly ($TMP is shown as <tmp>). With UPDATE_GOLDEN=1 the expected files
# are rewritten from what the binary printed.
set -u
bin=$1 case_dir=$2 src=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMP
out="$TMP/.stdout" err="$TMP/.stderr"
(
  cd "$src" || exit 99
  plumber() { "$bin" "$@"; }
  export -f plumber 2>/dev/null
  export bin
  NO_COLOR=1 bash -c "plumber() { \"\$bin\" \"\$@\"; }; $(cat "$case_dir/cmd")"
) >"$out" 2>"$err"
code=$?
sed -i "s|$TMP|<tmp>|g" "$out" "$err"
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$out" "$case_dir/stdout"; cp "$err" "$case_dir/stderr"; echo "$code" >"$case_dir/exit"
  echo "updated $case_dir"; exit 0
fi
status=0
if ! diff -u "$case_dir/stdout" "$out"; then echo "stdout differs (case $case_dir)"; status=1; fi
if ! diff -u "$case_dir/stderr" "$err"; then echo "stderr differs (case $case_dir)"; status=1; fi
want=$(cat "$case_dir/exit")
if [ "$code" != "$want" ]; then echo "exit code $code, expected $want (case $case_dir)"; status=1; fi
exit $status
