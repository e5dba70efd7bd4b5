#!/usr/bin/env bash
# Runs the commands of README.md's "A short tour" as they are written there,
# so that the tour cannot drift from what plumber does. The commands are
# taken from the README's text (every line of the tour's code block that
# starts with "plumber "; the PyTorch line needs the reader's own train.py
# and is skipped), in a copy of examples/ and testdata/, with two documented
# changes to keep the test short: `gen` writes 2 files of 32 images, and a
# run's --seconds 30s becomes 3s. Every command must exit 0.
set -u
bin=$(realpath "$1") src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/examples" "$src/testdata" "$tmp/"
rm -rf "$tmp/examples/data"
# The tour's code block: from the "## A short tour" heading to the block's end.
mapfile -t lines < <(awk '/^## A short tour/{t=1} t&&/^```sh/{b=1;next} t&&b&&/^```/{exit} t&&b{print}' "$src/README.md")
commands=()
for line in "${lines[@]}"; do
  case "$line" in plumber\ *) ;; *) continue ;; esac
  cmd=${line%%  #*}  # the comment after the command
  cmd=${cmd%"${cmd##*[![:space:]]}"}
  case "$cmd" in plumber\ gen\ *) cmd="$cmd --files 2 --records-per-file 32" ;; esac
  cmd=${cmd//--seconds 30s/--seconds 3s}
  commands+=("$cmd")
done
if [ "${#commands[@]}" -lt 10 ]; then
  echo "FAIL: found ${#commands[@]} plumber commands in README.md's tour; the block moved or changed form"
  exit 1
fi
fail=0
cd "$tmp" || exit 1
for cmd in "${commands[@]}"; do
  if ! (plumber() { "$bin" "$@"; }; eval "$cmd") >"$tmp/.out" 2>"$tmp/.err" </dev/null; then
    echo "FAIL: $cmd"
    cat "$tmp/.out" "$tmp/.err"
    fail=1
    break
  fi
  echo "ok: $cmd"
done
exit "$fail"
