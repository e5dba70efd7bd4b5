#!/usr/bin/env bash
# Installs clang with its libFuzzer and sanitizer runtimes (Debian 12's
# clang 14) when missing: the fuzz targets and CI's sanitizer build need it.
# Needs root, like scripts/deps.sh.
set -euo pipefail
if command -v clang++ >/dev/null && ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  exit 0
fi
echo "== installing clang and libclang-rt-14-dev"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
