#!/usr/bin/env bash
# `plumber analyze --format dot` is a graph Graphviz accepts: dot -Tsvg
# renders every committed hand trace, and the SVG names each node and shows
# the bottleneck. Skips (exit 77) when Graphviz is absent, unless
# PLUMBER_REQUIRE_TOOLS=1 (set by .ci/run, which installs it).
set -u
bin=$1 src=$2
if ! command -v dot >/dev/null; then
  if [ "${PLUMBER_REQUIRE_TOOLS:-0}" = 1 ]; then echo "FAIL: dot (graphviz) is required in CI but missing"; exit 1; fi
  echo "SKIP: Graphviz 'dot' is not installed (scripts/deps.sh installs it)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for t in cpu image; do
  (cd "$src" && "$bin" analyze "testdata/traces/$t.json" --format dot) >"$tmp/$t.dot" || { echo "FAIL $t: analyze"; fail=1; continue; }
  if ! dot -Tsvg "$tmp/$t.dot" >"$tmp/$t.svg" 2>"$tmp/$t.err" || [ -s "$tmp/$t.err" ]; then
    echo "FAIL $t: dot -Tsvg refused the graph:"; cat "$tmp/$t.err"; fail=1; continue
  fi
  nodes=$(jq -r '.header.program.nodes[].name' "$src/testdata/traces/$t.json")
  for n in $nodes; do
    grep -q ">$n</text>" "$tmp/$t.svg" || { echo "FAIL $t: node $n missing from the SVG"; fail=1; }
  done
  grep -q ">BOTTLENECK</text>" "$tmp/$t.svg" || { echo "FAIL $t: no bottleneck marked"; fail=1; }
  echo "ok $t: $(grep -c '<g id="node' "$tmp/$t.svg") nodes, $(grep -c '<g id="edge' "$tmp/$t.svg") edges"
done
exit $fail
