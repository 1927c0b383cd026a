#!/bin/sh
# The README quickstart: profile the bundled demo workload and write a folded-stacks file.
# Usage: scripts/demo.sh [BUILD_DIR]
set -eu
O=${1:-build}
out="$O/demo.folded"

echo "perch demo: profiling $O/demo/perch-demo for 3 seconds at 199 Hz..."
"$O/perch" record -F 199 -o "$out" --top 8 -- "$O/demo/perch-demo" 3
echo
echo "perch demo: folded stacks in $out ($(wc -l < "$out") distinct stacks)."
echo "  flame graph: flamegraph.pl $out > demo.svg  (or open $out in speedscope.app)"
