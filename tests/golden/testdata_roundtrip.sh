#!/usr/bin/env bash
# For every pipeline and trace under testdata/: `plumber validate` accepts
# it (files under bad/ must be refused with exit code 2 instead), and
# json -> pb -> json -> pb conversions reach a fixed point.
set -u
bin=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 count=0
while IFS= read -r f; do
  count=$((count + 1))
  rel=${f#"$dir"/}
  if [[ $rel == bad/* ]]; then
    "$bin" validate "$f" >/dev/null 2>"$tmp/err"; code=$?
    if [ $code -ne 2 ]; then echo "FAIL $rel: validate exit $code, expected 2"; fail=1; fi
    if ! grep -q "plumber: error: $f" "$tmp/err"; then echo "FAIL $rel: error does not name the file"; fail=1; fi
    continue
  fi
  if ! "$bin" validate "$f" >"$tmp/out" 2>&1; then echo "FAIL $rel: validate"; cat "$tmp/out"; fail=1; continue; fi
  "$bin" convert "$f" "$tmp/a.pb" && "$bin" convert "$tmp/a.pb" "$tmp/b.json" &&
    "$bin" convert "$tmp/b.json" "$tmp/c.pb" && "$bin" convert "$tmp/c.pb" "$tmp/d.json" || {
    echo "FAIL $rel: convert"; fail=1; continue; }
  cmp -s "$tmp/a.pb" "$tmp/c.pb" || { echo "FAIL $rel: pb differs after json round trip"; fail=1; }
  cmp -s "$tmp/b.json" "$tmp/d.json" || { echo "FAIL $rel: json differs after pb round trip"; fail=1; }
  "$bin" validate "$tmp/c.pb" >/dev/null || { echo "FAIL $rel: converted file does not validate"; fail=1; }
done < <(find "$dir" -name '*.json' -not -name 'plumber-check.json' | sort)
echo "checked $count file(s)"
[ $count -gt 0 ] || { echo "FAIL: no testdata found"; exit 1; }
exit $fail
