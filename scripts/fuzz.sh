#!/usr/bin/env bash
# Runs every libFuzzer target for FUZZ_SECONDS (default 60) each, from the
# committed seed corpora in fuzz/corpus/, JOBS targets at a time (default:
# the number of cores). Any crash, leak, timeout, out-of-memory or sanitizer
# report fails the script and leaves the reproducer in
# $FUZZ_BUILD_DIR/findings/; fix it and commit the reproducer to the
# target's corpus as regression-* with a test.
#
# The targets are built with clang (ASan + UBSan) in FUZZ_BUILD_DIR
# (default build-fuzz). CI builds them in its sanitizer tree, which also
# builds the tests, and passes FUZZ_NO_BUILD=1.
# New inputs go to a scratch copy, so the committed corpora stay as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
dir=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${JOBS:-$(nproc)}
targets=${FUZZ_TARGETS:-$(ls fuzz/*_fuzz.cc | xargs -n1 basename | sed 's/\.cc$//')}

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  scripts/clang.sh
  CXX=clang++ CC=clang BUILD_DIR="$dir" BUILD_TYPE=RelWithDebInfo TARGETS="$targets" scripts/build.sh \
    -DPLUMBER_FUZZ=ON -DPLUMBER_BUILD_TESTS=OFF -DPLUMBER_SANITIZE=address,undefined
fi
mkdir -p "$dir/findings"

# Runs one target; prints its executions and returns its exit status.
fuzz_one() {
  local target=$1 work=$dir/corpus/$1 log=$dir/$1.log
  rm -rf "$work" && mkdir -p "$work"
  cp fuzz/corpus/"$target"/* "$work"/ 2>/dev/null || true
  if "$dir/fuzz/$target" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$dir/findings/$target-" -print_final_stats=1 >"$log" 2>&1; then
    echo "   $target: $(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$') executions, no findings"
  else
    echo "FAIL: $target found a problem; see $log and $dir/findings/"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -10
    return 1
  fi
}

echo "== fuzzing $(echo $targets | wc -w) targets for ${seconds}s each, $jobs at a time"
status=0
running=0
for target in $targets; do
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
