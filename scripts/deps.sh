#!/usr/bin/env bash
# Installs the Debian 12 packages plumber builds and tests with, when any is
# missing. Safe to run again; needs root (as on CI and a fresh machine).
#   scripts/deps.sh         what building and `plumber demo` need
#   scripts/deps.sh --test  that, plus what only tests need (chromium, for
#                           the HTML report test; PyTorch, torchvision, PIL
#                           and Python protobuf for the PyTorch tracer's
#                           tests, about 640 MB installed, CPU only);
#                           scripts/test.sh uses it
# Test-only packages are kept out of the default list so that the README's
# first command does not pull a browser onto a machine that only builds.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  protobuf-compiler libprotobuf-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev catch2
  libglpk-dev libturbojpeg0-dev libjpeg62-turbo-dev zlib1g-dev libzstd-dev
  man-db groff-base
  graphviz jq
)
test_packages=(chromium python3-torch python3-torchvision python3-pil python3-protobuf)
for arg in "$@"; do
  case "$arg" in
    --test) packages+=("${test_packages[@]}") ;;
    *) echo "usage: scripts/deps.sh [--test]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
