#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for
# FUZZ_SECONDS (default 60) from the committed seed corpora in fuzz/corpus/.
# New inputs go to a scratch copy, so the committed corpora stay as they
# are. Any crash, leak or sanitizer report fails the script and leaves the
# reproducer in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev >/dev/null
fi
CXX=clang++ CC=clang BUILD_DIR=build-fuzz BUILD_TYPE=RelWithDebInfo scripts/build.sh \
  -DPLUMBER_FUZZ=ON -DPLUMBER_BUILD_TESTS=OFF -DPLUMBER_SANITIZE=address,undefined
mkdir -p build-fuzz/findings
status=0
for target in ${FUZZ_TARGETS:-pipeline_fuzz trace_fuzz record_fuzz units_fuzz}; do
  work=build-fuzz/corpus/$target
  rm -rf "$work" && mkdir -p "$work"
  cp fuzz/corpus/"$target"/* "$work"/ 2>/dev/null || true
  echo "== $target for ${seconds}s"
  if ! build-fuzz/fuzz/$target "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix=build-fuzz/findings/"$target"- -print_final_stats=1 2>build-fuzz/$target.log; then
    echo "FAIL: $target found a problem; see build-fuzz/$target.log and build-fuzz/findings/"
    tail -30 build-fuzz/$target.log
    status=1
  fi
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" build-fuzz/$target.log | tail -2 || true
done
exit $status
