#!/usr/bin/env bash
# Ctrl-C stops `plumber gen` as it stops `plumber run`: it exits 0, says
# what it wrote, keeps the files it finished whole and leaves no temporary
# file behind. The signal is sent once the first file is complete, while
# later ones are being written.
set -u
bin=$1
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
lines=20000
"$bin" gen text "$tmp/g" --files 500 --records-per-file "$lines" >"$tmp/out" 2>"$tmp/err" &
pid=$!
# Wait (at most about 60 s on a loaded machine) for the first finished file.
for _ in $(seq 600); do
  [ -e "$tmp/g/corpus-1.txt" ] && break
  sleep 0.1
done
if [ ! -e "$tmp/g/corpus-1.txt" ]; then echo "FAIL: gen wrote no file"; exit 1; fi
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
fail=0
if [ "$rc" != 0 ]; then echo "FAIL: exit $rc after SIGINT, expected 0 as plumber run"; fail=1; fi
leftover=$(ls -A "$tmp/g" | grep -v '^corpus-[0-9]*\.txt$')
if [ -n "$leftover" ]; then echo "FAIL: left behind: $leftover"; fail=1; fi
written=$(ls "$tmp/g" | grep -c '^corpus-[0-9]*\.txt$')
if ! grep -q "^wrote $written text files\? to $tmp/g" "$tmp/out"; then
  echo "FAIL: the summary does not say $written file(s):"; cat "$tmp/out"; fail=1
fi
if ! grep -q "interrupted after $written of 500 files" "$tmp/err"; then
  echo "FAIL: no word of the interruption:"; cat "$tmp/err"; fail=1
fi
for f in "$tmp"/g/corpus-*.txt; do
  n=$(wc -l <"$f")
  if [ "$n" != "$lines" ]; then echo "FAIL: $f has $n lines, not $lines: a partial file"; fail=1; fi
done
[ "$fail" = 0 ] && echo "ok: SIGINT after $written file(s): exit 0, whole files, no temporary"
exit "$fail"
