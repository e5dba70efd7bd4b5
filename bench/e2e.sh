#!/usr/bin/env bash
# The end-to-end benchmark of issues 6 and 13: builds plumber_e2e_bench and
# runs it, which writes bench/RESULTS.md and bench/e2e.svg. Arguments go to
# the program: --seconds S per run (default 3), --only WORKLOAD, --no-steps,
# --repeats N (alternated runs per median, default 3). About 18 minutes on 2
# cores at the default (14 with --no-steps); run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
ninja -C build -j2 plumber_e2e_bench
exec build/bench/plumber_e2e_bench --out bench "$@"
