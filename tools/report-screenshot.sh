#!/bin/sh
# The screenshot in docs/cli.md: aotc report --format html on the committed
# H200 SGEMM database, rendered by headless Chromium.
# Usage: tools/report-screenshot.sh [AOTC] (default build/aotc); writes
# docs/report-sgemm-h200.png.
set -eu
cd "$(dirname "$0")/.."
aotc=${1:-build/aotc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$aotc" report templates/sgemm.cuda_NVIDIA_H200_13.0.json --format html >"$tmp/report.html"
HOME=$tmp chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
	--user-data-dir="$tmp/chrome" --hide-scrollbars --window-size=1280,2800 \
	--screenshot="$tmp/shot.png" "file://$tmp/report.html" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
cp "$tmp/shot.png" docs/report-sgemm-h200.png
echo "wrote docs/report-sgemm-h200.png ($(wc -c <docs/report-sgemm-h200.png) bytes)"
