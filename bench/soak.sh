#!/usr/bin/env bash
# Soak test (issue 8): runs `plumber run` for SOAK_SECONDS (default 600) on
# a pipeline that never runs out (generated images, read forever through a
# parallel interleave, decoded by a parallel map, shuffled, batched,
# prefetched), tracing at a short snapshot period, and samples the process
# every few seconds: resident memory (VmRSS), threads, open files, and the
# trace file's size. After a warm-up of the first 10% it checks that
#   - peak RSS <= 1.05 x RSS at the end of the warm-up + 2 MB (no leak),
#   - threads and open files grow by at most a few (no thread or fd leak),
#   - the trace grows linearly: bytes/s of the second half within +-10% of
#     the first half (snapshots neither stall nor balloon),
#   - the run ends "ok" and `plumber analyze` reads the whole trace.
# Prints a short report and exits 1 on FAIL.
#
# Environment: SOAK_SECONDS (600), SOAK_SAMPLE (seconds between samples;
# 5, or 2 for runs under two minutes), SOAK_SNAPSHOT (0.1s), SOAK_DIR (a
# temporary directory, removed unless given), PLUMBER (a built binary; by
# default build/apps/plumber-cli/plumber, built first).
set -euo pipefail
cd "$(dirname "$0")/.."

SOAK_SECONDS=${SOAK_SECONDS:-600}
if [[ -z ${SOAK_SAMPLE:-} ]]; then
  if ((SOAK_SECONDS < 120)); then SOAK_SAMPLE=2; else SOAK_SAMPLE=5; fi
fi
SOAK_SNAPSHOT=${SOAK_SNAPSHOT:-0.1s}
if [[ -z ${PLUMBER:-} ]]; then
  cmake -S . -B build -G Ninja >/dev/null
  ninja -C build -j2 plumber >/dev/null
  PLUMBER=$PWD/build/apps/plumber-cli/plumber
fi
if [[ -n ${SOAK_DIR:-} ]]; then
  mkdir -p "$SOAK_DIR"
  dir=$SOAK_DIR
else
  dir=$(mktemp -d -t plumber-soak-XXXXXX)
  trap 'rm -rf "$dir"' EXIT
fi

"$PLUMBER" gen images "$dir/data" --files 8 --records-per-file 32 --image-size 64x64 --seed 5 >/dev/null
cat >"$dir/soak.json" <<'EOF'
{"name": "soak", "nodes": [
  {"name": "files", "op": "list_files", "list_files": {"pattern": "data/train-*.tfrecord", "shuffle": true, "seed": 7}},
  {"name": "epochs", "op": "repeat", "inputs": ["files"]},
  {"name": "read", "op": "tfrecord"},
  {"name": "shards", "op": "interleave", "inputs": ["epochs"],
   "interleave": {"function": "read", "cycle_length": 2, "parallelism": 2}},
  {"name": "decode", "op": "map", "inputs": ["shards"], "map": {"parallelism": 2, "udf": [
    {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}},
    {"op": "decode_jpeg"},
    {"op": "random_crop", "args": {"height": 48, "width": 48, "seed": 1}},
    {"op": "normalize"}]}},
  {"name": "shuffle", "op": "shuffle", "inputs": ["decode"], "shuffle": {"buffer_size": 64, "seed": 3}},
  {"name": "batch", "op": "batch", "inputs": ["shuffle"], "batch": {"batch_size": 16}},
  {"name": "prefetch", "op": "prefetch", "inputs": ["batch"], "prefetch": {"buffer_size": 2}}]}
EOF

trace=$dir/soak.pb
samples=$dir/samples.tsv
"$PLUMBER" run "$dir/soak.json" --trace "$trace" --seconds "${SOAK_SECONDS}s" \
  --snapshot-every "$SOAK_SNAPSHOT" --format json >"$dir/run.json" 2>"$dir/run.err" &
pid=$!
echo "soak: plumber run (pid $pid) for ${SOAK_SECONDS}s, snapshot every $SOAK_SNAPSHOT, sampling every ${SOAK_SAMPLE}s" >&2

# One line per sample: seconds since start, VmRSS kB, threads, open fds,
# trace bytes.
start=$(date +%s.%N)
: >"$samples"
while kill -0 "$pid" 2>/dev/null; do
  status=/proc/$pid/status
  rss=$(awk '/^VmRSS:/ {print $2}' "$status" 2>/dev/null || true)
  threads=$(awk '/^Threads:/ {print $2}' "$status" 2>/dev/null || true)
  fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l || true)
  size=$(stat -c %s "$trace" 2>/dev/null || echo 0)
  now=$(date +%s.%N)
  if [[ -n $rss && -n $threads ]]; then
    awk -v a="$now" -v b="$start" -v r="$rss" -v t="$threads" -v f="$fds" -v s="$size" \
      'BEGIN {printf "%.2f\t%d\t%d\t%d\t%d\n", a - b, r, t, f, s}' >>"$samples"
  fi
  sleep "$SOAK_SAMPLE"
done
rc=0
wait "$pid" || rc=$?
final_size=$(stat -c %s "$trace" 2>/dev/null || echo 0)

analyze_rc=0
"$PLUMBER" analyze "$trace" --format json >"$dir/analyze.json" 2>"$dir/analyze.err" || analyze_rc=$?
end=$(sed -n 's/.*"end": "\([a-z_]*\)".*/\1/p' "$dir/run.json")

awk -v total="$SOAK_SECONDS" -v rc="$rc" -v end="$end" -v analyze_rc="$analyze_rc" -v final_size="$final_size" '
  { t[NR] = $1; rss[NR] = $2; thr[NR] = $3; fd[NR] = $4; size[NR] = $5; n = NR }
  END {
    fail = 0
    if (n < 6) { print "soak: FAIL: only " n " samples"; exit 1 }
    warm = total * 0.10
    w = 1
    while (w < n && t[w] < warm) w++
    peak = rss[w]; tmax = thr[w]; fmax = fd[w]
    for (i = w; i <= n; i++) {
      if (rss[i] > peak) peak = rss[i]
      if (thr[i] > tmax) tmax = thr[i]
      if (fd[i] > fmax) fmax = fd[i]
    }
    limit = rss[w] * 1.05 + 2048
    growth = 100 * (peak - rss[w]) / rss[w]
    # Trace growth: halves of the window after the warm-up.
    mid_t = (t[w] + t[n]) / 2
    m = w
    while (m < n && t[m] < mid_t) m++
    r1 = (t[m] > t[w]) ? (size[m] - size[w]) / (t[m] - t[w]) : 0
    r2 = (t[n] > t[m]) ? (size[n] - size[m]) / (t[n] - t[m]) : 0
    ratio = (r1 > 0) ? r2 / r1 : 0
    printf "soak: %d samples over %.0f s; warm-up until %.0f s\n", n, t[n], t[w]
    printf "  RSS       start %.1f MB, end of warm-up %.1f MB, peak after %.1f MB, end %.1f MB: growth %+.1f%% (limit %.1f MB)\n",
      rss[1] / 1024, rss[w] / 1024, peak / 1024, rss[n] / 1024, growth, limit / 1024
    printf "  threads   end of warm-up %d, peak after %d, end %d\n", thr[w], tmax, thr[n]
    printf "  open fds  end of warm-up %d, peak after %d, end %d\n", fd[w], fmax, fd[n]
    printf "  trace     %.0f B/s first half, %.0f B/s second half (ratio %.3f); %.1f MB at the end\n",
      r1, r2, ratio, final_size / 1048576
    printf "  run       exit %d, end \"%s\"; analyze exit %d\n", rc, end, analyze_rc
    if (peak > limit) { print "  FAIL: RSS grew after the warm-up"; fail = 1 }
    if (tmax > thr[w] + 4) { print "  FAIL: threads grew after the warm-up"; fail = 1 }
    if (fmax > fd[w] + 8) { print "  FAIL: open files grew after the warm-up"; fail = 1 }
    if (r1 <= 0 || ratio < 0.90 || ratio > 1.10) { print "  FAIL: the trace did not grow linearly"; fail = 1 }
    if (rc != 0 || end != "ok") { print "  FAIL: the run did not end ok"; fail = 1 }
    if (analyze_rc != 0) { print "  FAIL: plumber analyze could not read the trace"; fail = 1 }
    print (fail ? "soak: FAIL" : "soak: PASS")
    exit fail
  }' "$samples" || { cat "$dir/run.err" "$dir/analyze.err" >&2; exit 1; }
