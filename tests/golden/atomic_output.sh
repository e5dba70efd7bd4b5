#!/usr/bin/env bash
# A write that fails half-way (here: the file-size limit, as a full disk
# would) leaves the old output as it was and no temporary beside it, for
# every subcommand that writes a file: convert, rewrite, analyze -o. The
# error names the file the user gave and exits 2, as every failed write does.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# Runs the command with writes limited to 1 kB; SIGXFSZ is ignored, so the
# write fails with EFBIG instead of killing the process.
limited() { (ulimit -f 1; trap '' XFSZ; cd "$src" && "$bin" "$@") >"$tmp/out" 2>"$tmp/err"; }
check() {  # NAME OUTPUT-FILE COMMAND...
  local name=$1 out=$2; shift 2
  echo "the old $name" >"$out"
  limited "$@"
  local rc=$?
  if [ "$rc" != 2 ]; then echo "FAIL $name: exit $rc although the write could not finish (want 2)"; fail=1; fi
  if grep -q '\.tmp\.' "$tmp/err"; then echo "FAIL $name: the error names the temporary, not the file:"; cat "$tmp/err"; fail=1; fi
  if [ "$(cat "$out")" != "the old $name" ]; then echo "FAIL $name: the old file was changed"; fail=1; fi
  if ls "$out".* >/dev/null 2>&1 || ls "$(dirname "$out")"/.*tmp* >/dev/null 2>&1; then
    echo "FAIL $name: a temporary was left: $(ls -a "$(dirname "$out")")"; fail=1
  fi
  if ! grep -q "$(basename "$out")" "$tmp/err"; then echo "FAIL $name: the error does not name the file:"; cat "$tmp/err"; fail=1; fi
  rm -f "$out"
}
mkdir "$tmp/o"
check convert "$tmp/o/image.json" convert testdata/traces/image.json "$tmp/o/image.json"
check rewrite "$tmp/o/fixed.json" rewrite testdata/traces/image.json --cores 8 -o "$tmp/o/fixed.json"
check analyze "$tmp/o/report.html" analyze testdata/traces/image.json --format html -o "$tmp/o/report.html"
[ "$fail" = 0 ] && echo "ok: failed writes left every old file intact"
exit "$fail"
