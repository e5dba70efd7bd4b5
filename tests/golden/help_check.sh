#!/usr/bin/env bash
# Every subcommand `plumber --help` lists has a page man/plumber-NAME.1, and
# `plumber help NAME` shows that page: the same text as `man -l` when man is
# installed, and a readable plain rendering (--plain) always.
set -u
bin=$1 mandir=$2
fail=0 count=0
cmds=$("$bin" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$cmds" ] || { echo "FAIL: no subcommands in plumber --help"; exit 1; }
for c in plumber $cmds; do
  count=$((count + 1))
  page="$mandir/plumber-$c.1" name="plumber-$c" arg=$c
  if [ "$c" = plumber ]; then page="$mandir/plumber.1" name=plumber arg=; fi
  [ -f "$page" ] || { echo "FAIL $c: no page $page"; fail=1; continue; }
  plain=$("$bin" help $arg --plain) || { echo "FAIL $c: plumber help --plain exited $?"; fail=1; continue; }
  upper=$(echo "$name" | tr a-z A-Z)
  echo "$plain" | head -1 | grep -q "^$upper(1)" || { echo "FAIL $c: plain page starts '$(echo "$plain" | head -1)'"; fail=1; }
  echo "$plain" | grep -q '^SYNOPSIS' || { echo "FAIL $c: plain page has no SYNOPSIS"; fail=1; }
  if echo "$plain" | grep -q '^\.\|\\f'; then echo "FAIL $c: roff left in the plain page"; fail=1; fi
  if command -v man >/dev/null; then
    if ! diff <(MANWIDTH=80 "$bin" help $arg) <(MANWIDTH=80 man -l "$page") >/dev/null; then
      echo "FAIL $c: plumber help differs from man -l $page"; fail=1
    fi
  fi
done
"$bin" help no-such-command >/dev/null 2>&1
code=$?
[ $code -eq 2 ] || { echo "FAIL: plumber help no-such-command exited $code, expected 2"; fail=1; }
echo "checked $count page(s)"
exit $fail
