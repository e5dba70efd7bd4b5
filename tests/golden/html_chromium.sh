#!/usr/bin/env bash
# The HTML report of `plumber analyze --format html` in headless Chromium:
# it loads without a console message, the pipeline graph and the roofline
# chart are present and non-empty in the rendered DOM, the as-traced
# prediction and the thread-groups table are shown, the page holds no
# script and fetches nothing, no number on it is in e-notation (the
# imported PipelineSnapshot has rates of 625M and costs of 1.6 ns), and a
# screenshot is kept as an artifact in ARTIFACT_DIR. Without Chromium it fails, saying how to install it: a
# skipped test would let a broken report pass unseen wherever the browser
# happened to be missing (scripts/test.sh installs it).
set -u
bin=$1 src=$2 artifacts=$3
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "FAIL: chromium is not installed, and this test renders the HTML report in it."
  echo "Install it with: scripts/deps.sh --test   (or: apt-get install --no-install-recommends chromium)"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$artifacts"
fail=0
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --disable-extensions --hide-scrollbars --enable-logging=stderr --v=0)
for spec in image:testdata/traces/image.json cpu:testdata/traces/cpu.json snapshot:testdata/pipeline_snapshot/run_a.pb; do
  t=${spec%%:*} trace=${spec#*:}
  html="$tmp/$t.html"
  (cd "$src" && "$bin" analyze "$trace" --format html -o "$html") || { echo "FAIL $t: analyze"; fail=1; continue; }
  # Self-contained: no scripts, no external resources (the SVG namespace is a name, not a fetch).
  if grep -qi '<script\|<link\|<img\|<iframe\|@import\|url(http' "$html"; then echo "FAIL $t: page pulls in scripts or resources"; fail=1; fi
  if grep -o 'https\?://[^"]*' "$html" | grep -qv '^http://www.w3.org/2000/svg$'; then echo "FAIL $t: page names a URL"; fail=1; fi
  "$chrome" "${flags[@]}" --user-data-dir="$tmp/profile-$t-dom" --dump-dom "file://$html" >"$tmp/$t.dom" 2>"$tmp/$t.log"
  code=$?
  [ $code -eq 0 ] || { echo "FAIL $t: chromium exited $code"; tail -20 "$tmp/$t.log"; fail=1; continue; }
  if grep -q 'CONSOLE' "$tmp/$t.log"; then echo "FAIL $t: console messages:"; grep 'CONSOLE' "$tmp/$t.log"; fail=1; fi
  for id in pipeline-graph roofline; do
    # The element is in the rendered DOM and holds drawn shapes.
    body=$(sed -n "/<svg id=\"$id\"/,/<\/svg>/p" "$tmp/$t.dom")
    shapes=$(printf '%s' "$body" | grep -o '<rect\|<line' | wc -l)
    if [ -z "$body" ] || [ "$shapes" -lt 3 ]; then echo "FAIL $t: svg #$id missing or empty ($shapes shapes)"; fail=1; fi
  done
  grep -q '<ul id="findings">' "$tmp/$t.dom" || { echo "FAIL $t: no findings list"; fail=1; }
  # Numbers people read: never 1.021e+08 (base/number_format.h).
  if grep -qE '[0-9]e[+-][0-9]' "$tmp/$t.dom"; then
    echo "FAIL $t: a number in e-notation:"; grep -oE '.{0,40}[0-9]e[+-][0-9].{0,20}' "$tmp/$t.dom" | head -5; fail=1
  fi
  # Both predictions, and the thread groups that bound the as-traced one (one row at least).
  grep -q '<span id="as-traced">as traced <b>' "$tmp/$t.dom" || { echo "FAIL $t: no as-traced prediction"; fail=1; }
  groups=$(sed -n '/<table id="thread-groups">/,/<\/table>/p' "$tmp/$t.dom" | grep -c '<tr><td>')
  [ "$groups" -ge 1 ] || { echo "FAIL $t: thread-groups table missing or empty"; fail=1; }
  "$chrome" "${flags[@]}" --user-data-dir="$tmp/profile-$t-shot" --window-size=1200,1900 \
    --screenshot="$artifacts/report-$t.png" "file://$html" >/dev/null 2>"$tmp/$t.shot.log"
  if [ ! -s "$artifacts/report-$t.png" ]; then echo "FAIL $t: no screenshot"; tail -20 "$tmp/$t.shot.log"; fail=1; continue; fi
  cp "$html" "$artifacts/report-$t.html"
  echo "ok $t: DOM has the graph and chart; screenshot $artifacts/report-$t.png"
done
exit $fail
