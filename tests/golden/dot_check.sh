#!/usr/bin/env bash
# `plumber analyze --format dot` is a graph Graphviz accepts: dot -Tsvg
# renders every committed hand trace, and the SVG names each node and shows
# the bottleneck. Without Graphviz's dot (or jq, which reads the node
# names) it fails, saying how to install it, rather than skipping unseen.
set -u
bin=$1 src=$2
for tool in dot:graphviz jq:jq; do
  if ! command -v "${tool%%:*}" >/dev/null; then
    echo "FAIL: '${tool%%:*}' (Debian package ${tool##*:}) is not installed, and this test needs it."
    echo "Install it with: scripts/deps.sh   (or: apt-get install --no-install-recommends ${tool##*:})"
    exit 1
  fi
done
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
