#!/bin/sh
# The README quickstart: profile the bundled demo workload, write a flame graph and folded
# stacks, print the hottest functions. Usage: scripts/demo.sh [BUILD_DIR]
set -eu
O=${1:-build}

echo "perch demo: profiling $O/demo/perch-demo for 3 seconds at 199 Hz..."
"$O/perch" record -F 199 -o "$O/demo.svg" -o "$O/demo.folded" --top 8 -- "$O/demo/perch-demo" 3
echo
echo "perch demo: flame graph in $O/demo.svg (open it in a browser: click to zoom, Ctrl-F to"
echo "search), folded stacks in $O/demo.folded ($(wc -l < "$O/demo.folded") distinct stacks)."
