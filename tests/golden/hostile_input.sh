#!/usr/bin/env bash
# Every subcommand against hostile flag values (zero, negative, huge,
# fractional where a count is wanted, non-numeric, NaN, a unit in the wrong
# place) and hostile paths (a missing directory, a read-only file, a
# directory, the input itself as the output). Each must: end within a few
# seconds without a signal, exit 2, name the flag or the path in its
# message, leave no temporary file (*.tmp*) and no output behind, and leave
# its input as it was. docs/reliability.md says what this covers.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cd "$src" || exit 1
fail=0 runs=0
trace=testdata/traces/cpu.json
pipeline=testdata/pipelines/cpu.json
dump=testdata/tfdata/map_interleave.pb

# expect NAME -- COMMAND...: NAME must appear in stderr.
expect() {
  local name=$1; shift 2
  runs=$((runs + 1))
  timeout 10 "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  if [ "$rc" = 124 ]; then echo "FAIL (timeout): plumber $*"; fail=1; return; fi
  if [ "$rc" -gt 128 ]; then echo "FAIL (signal $((rc - 128))): plumber $*"; fail=1; return; fi
  if [ "$rc" != 2 ]; then echo "FAIL (exit $rc, want 2): plumber $*"; sed 's/^/  /' "$tmp/err"; fail=1; fi
  if ! grep -qF -- "$name" "$tmp/err"; then
    echo "FAIL (message does not name $name): plumber $*"; sed 's/^/  /' "$tmp/err"; fail=1
  fi
  local left
  left=$(find "$tmp" "$src/testdata" -name '*.tmp*' 2>/dev/null)
  if [ -n "$left" ]; then echo "FAIL (left $left): plumber $*"; rm -f $left; fail=1; fi
}

# Flag values: the first flag of each kind gets every value of its kind,
# the others (parsed by the same validator) three of them, to keep the
# test short.
counts=(0 -1 2.5 1e3 abc nan 99999999999999999999999 "" 4x)
durations=(0 -1 nan 1e30 5e9 s5 2q "" inf)
sizes=(0 -1G nan 1e30 G64 "" 5Q)
rates=(0 -1 nan 1e30 MB/s100 "" x)
for v in "${counts[@]}"; do expect --cores -- analyze "$trace" --cores "$v"; done
for v in 0 2.5 99999999999999999999999; do
  expect --cores -- rewrite "$trace" --cores "$v"
  expect --cores -- provision "$trace" --target-rate 100 --cores "$v"
  expect --cores -- optimize "$pipeline" --cores "$v" -o "$tmp/o.json"
  expect --top -- rank "$trace" --top "$v"
  expect --batches -- run "$pipeline" --batches "$v" --no-trace
  expect --max-steps -- optimize "$pipeline" --max-steps "$v" -o "$tmp/o.json"
  expect --files -- gen text "$tmp/g" --files "$v"
  expect --records-per-file -- gen images "$tmp/g" --records-per-file "$v"
  expect --worker-cores -- provision "$trace" --target-rate 100 --workers --worker-cores "$v"
done
expect --cores -- analyze "$trace" --cores 10000
expect --max-steps -- optimize "$pipeline" --max-steps 101 -o "$tmp/o.json"
expect --files -- gen text "$tmp/g" --files 1000000000
expect --records-per-file -- gen text "$tmp/g" --records-per-file 1000000000
expect --files -- gen text "$tmp/g" --files 10000 --records-per-file 1000000
expect --seed -- gen text "$tmp/g" --seed -1
for v in 100000x100000 0x5 5x0 axb 5 64x64x2 ""; do
  expect --image-size -- gen images "$tmp/g" --image-size "$v" --files 1 --records-per-file 1
done
expect --image-size -- gen images "$tmp/g" --image-size 8192x8192 --files 10000 --records-per-file 1000
if [ -e "$tmp/g" ]; then echo "FAIL: a refused gen created its directory"; fail=1; fi
for v in "${durations[@]}"; do
  expect --seconds -- run "$pipeline" --seconds "$v" --no-trace
  expect --window -- import "$dump" -o "$tmp/w.pb" --window "$v"
  expect --window -- analyze "$dump" --window "$v"
done
for v in -1 1e30 s5; do
  expect --seconds -- optimize "$pipeline" --seconds "$v" -o "$tmp/o.json"
  expect --snapshot-every -- run "$pipeline" --snapshot-every "$v" --no-trace
  expect --calibrate-seconds -- run "$pipeline" --calibrate-source --calibrate-seconds "$v" --no-trace
  expect --warmup -- run "$pipeline" --warmup "$v" --no-trace
  expect --step-time -- run "$pipeline" --step-time "$v" --no-trace
  expect --read-latency -- run "$pipeline" --read-latency "$v" --no-trace
  expect --max-cpu-per-batch -- check "$trace" --max-cpu-per-batch "$v"
  expect --window -- analyze "$trace" --window "1:$v"
done
expect --window -- import "$dump" -o "$tmp/w.pb" --window 1e10
for v in "${sizes[@]}"; do expect --mem -- analyze "$trace" --mem "$v"; done
for v in 0 1e30 G64; do
  expect --max-memory -- analyze "$trace" --max-memory "$v"
  expect --mem -- optimize "$pipeline" --mem "$v" -o "$tmp/o.json"
  expect --worker-mem -- provision "$trace" --target-rate 100 --workers --worker-mem "$v"
done
for v in "${rates[@]}"; do
  expect --disk-bandwidth -- analyze "$trace" --disk-bandwidth "$v"
  expect --target-rate -- provision "$trace" --target-rate "$v"
done
for v in 0 1e30 MB/s100; do
  expect --disk-bandwidth -- optimize "$pipeline" --disk-bandwidth "$v" -o "$tmp/o.json"
  expect --read-bandwidth -- run "$pipeline" --read-bandwidth "$v" --no-trace
  expect --worker-network -- provision "$trace" --target-rate 100 --workers --worker-network "$v"
  expect --min-throughput -- check "$trace" --min-throughput "$v"
done
for v in -5% nan 1.5 abc 10x; do expect --tolerance -- check "$trace" --baseline "$trace" --tolerance "$v"; done

# Paths. The inputs are copies, so that a refused overwrite can be seen to
# leave them alone.
cp "$trace" "$tmp/t.json"
cp "$pipeline" "$tmp/p.json"
cp "$dump" "$tmp/d.pb"
mkdir "$tmp/adir"
for out in "$tmp/nodir/x.json" "$tmp/adir" "$tmp/t.json"; do
  expect "$out" -- convert "$tmp/t.json" "$out"
  expect "$out" -- analyze "$tmp/t.json" -o "$out"
  expect "$out" -- rewrite "$tmp/t.json" -o "$out"
done
for out in "$tmp/nodir/x.json" "$tmp/adir" "$tmp/p.json"; do
  expect "$out" -- optimize "$tmp/p.json" -o "$out" --seconds 1
  expect "$out" -- run "$tmp/p.json" --trace "$out" --batches 1
done
for out in "$tmp/nodir/x.pb" "$tmp/adir" "$tmp/d.pb"; do
  expect "$out" -- import "$tmp/d.pb" -o "$out" --window 10
done
# The same file under another spelling is still the input.
expect "$tmp/adir/../t.json" -- convert "$tmp/t.json" "$tmp/adir/../t.json"
ln -s "$tmp/t.json" "$tmp/link.json"
expect "$tmp/link.json" -- convert "$tmp/t.json" "$tmp/link.json"
# A read-only target is kept. Root may write any file, so as root this part
# cannot tell a kept file from a refused write, and is skipped.
if [ "$(id -u)" != 0 ]; then
  echo "read-only" >"$tmp/ro.json"
  chmod 0444 "$tmp/ro.json"
  expect "$tmp/ro.json" -- convert "$tmp/t.json" "$tmp/ro.json"
  expect "$tmp/ro.json" -- rewrite "$tmp/t.json" -o "$tmp/ro.json"
  expect "$tmp/ro.json" -- import "$tmp/d.pb" -o "$tmp/ro.json" --window 10
  if [ "$(cat "$tmp/ro.json")" != "read-only" ] || [ "$(stat -c %a "$tmp/ro.json")" != 444 ]; then
    echo "FAIL: the read-only file was replaced"; fail=1
  fi
else
  echo "note: running as root, the read-only target cases are skipped"
fi
cmp -s "$trace" "$tmp/t.json" || { echo "FAIL: an input trace was changed"; fail=1; }
cmp -s "$pipeline" "$tmp/p.json" || { echo "FAIL: an input pipeline was changed"; fail=1; }
cmp -s "$dump" "$tmp/d.pb" || { echo "FAIL: an input dump was changed"; fail=1; }
if [ -e "$tmp/nodir" ] || [ -n "$(ls -A "$tmp/adir")" ]; then echo "FAIL: output left behind"; fail=1; fi
[ "$fail" = 0 ] && echo "ok: $runs hostile runs, each refused with exit 2 naming its flag or path"
exit "$fail"
