#!/usr/bin/env bash
# Every man page renders with `man -l` without a single warning.
set -u
dir=$1
fail=0 count=0
for page in "$dir"/*.1; do
  count=$((count + 1))
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  if [ -n "$warnings" ]; then echo "FAIL $page:"; echo "$warnings"; fail=1; fi
done
echo "checked $count page(s)"
[ $count -gt 0 ] || exit 1
exit $fail
