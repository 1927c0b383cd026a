#!/bin/sh
# Measure how often `perch report --diff` calls a change "beyond noise" between two runs of the
# same build (the false-positive rate per comparison: any row of any thread) and how often it
# finds the known change between the two builds of the diffwork target (step_b grew).
#   scripts/diff-noise.sh [RUNS] [SECONDS] [HZ] [O]   (defaults 12 3 200 build)
# Records RUNS runs of each build (about RUNS x 2 x (SECONDS + 1) s), then diffs every pair
# of base runs and every (base, slow) pair. Prints the counts; leaves the recordings in a
# temporary directory it names.
set -eu
RUNS=${1:-12}
SECS=${2:-3}
HZ=${3:-200}
O=${4:-build}
PERCH=$O/perch
T=$(mktemp -d /tmp/perch-diff-noise.XXXXXX)
echo "recordings in $T"

record() { # build name
	"$O/targets/diff-$1/diffwork" $((SECS + 2)) > "$T/$2.out" &
	pid=$!
	until grep -q ready "$T/$2.out" 2>/dev/null; do sleep 0.05; done
	"$PERCH" record -q -F "$HZ" -d "$SECS" -o "$T/$2.perch" -p "$pid"
	wait "$pid"
}

i=0
while [ $i -lt "$RUNS" ]; do
	record base "base$i"
	record slow "slow$i"
	i=$((i + 1))
done

same=0; same_fp=0; rows_fp=0; pairs=0; found=0; strict=0
i=0
while [ $i -lt "$RUNS" ]; do
	j=$((i + 1))
	while [ $j -lt "$RUNS" ]; do
		out=$("$PERCH" report -q --diff "$T/base$i.perch" "$T/base$j.perch" --top 1000)
		n=$(printf '%s\n' "$out" | grep -c ' \* ' || true)
		same=$((same + 1))
		if [ "$n" -gt 0 ]; then
			same_fp=$((same_fp + 1)); rows_fp=$((rows_fp + n))
			printf '%s\n' "$out" | grep ' \* ' | sed "s/^/  base$i base$j: /"
		fi
		j=$((j + 1))
	done
	j=0
	while [ $j -lt "$RUNS" ]; do
		pairs=$((pairs + 1))
		if "$PERCH" report -q --diff "$T/base$i.perch" "$T/slow$j.perch" -o /dev/null \
			--fail-if '^step_b$:+0' -o /dev/null; then :; else
			[ $? -eq 3 ] && found=$((found + 1))
		fi
		if "$PERCH" report -q --diff "$T/base$i.perch" "$T/slow$j.perch" -o /dev/null \
			--fail-if '^step_b$:+5'; then :; else
			[ $? -eq 3 ] && strict=$((strict + 1))
		fi
		j=$((j + 1))
	done
	i=$((i + 1))
done
echo "same build: $same_fp of $same comparisons had a change beyond noise ($rows_fp rows)"
echo "two builds: step_b grew beyond noise in $found of $pairs, by more than 5 points in $strict"
uptime
