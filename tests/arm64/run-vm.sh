#!/bin/bash
# run-vm.sh KERNEL INITRD: boot the arm64 test VM (qemu-system-aarch64, TCG) under a timeout,
# copy its serial console to stdout and $LOG with host seconds since start, and count the
# guest's "E2E-TEST: name PASS|FAIL" lines. The last line is always
#   arm64-e2e: N passed, M failed
# A timeout, a kernel panic or a missing ARM64-E2E-RESULT line counts as one more failure.
# Exit 0 only when M is 0. Environment: CPU, SMP, MEM, ACCEL, TIMEOUT, LOG, APPEND.
set -u
KERNEL=${1:?usage: run-vm.sh KERNEL INITRD}
INITRD=${2:?usage: run-vm.sh KERNEL INITRD}
CPU=${CPU:-max,pauth-impdef=on}
SMP=${SMP:-2}
MEM=${MEM:-1024}
ACCEL=${ACCEL:-tcg,thread=multi}
TIMEOUT=${TIMEOUT:-300}
LOG=${LOG:-/dev/null}
APPEND=${APPEND:-}

start=$EPOCHREALTIME
stamp() {
	local now=$EPOCHREALTIME
	# seconds since start with 3 decimals, no fork
	local us=$((${now/./} - ${start/./}))
	printf '%3d.%03d' $((us / 1000000)) $((us % 1000000 / 1000))
}

first="" init="" result_at=""
: >"$LOG"
# qemu's stdin is /dev/null: a terminal on stdin would be put into raw mode
while IFS= read -r line; do
	line=${line%$'\r'}
	t=$(stamp)
	[ -z "$first" ] && first=$t
	case $line in
	E2E-INIT:*) init=$t ;;
	ARM64-E2E-RESULT:*) result_at=$t ;;
	esac
	printf '%s %s\n' "$t" "$line" | tee -a "$LOG"
done < <(timeout --foreground -k 5 "$TIMEOUT" qemu-system-aarch64 -M virt -cpu "$CPU" \
	-smp "$SMP" -m "$MEM" -accel "$ACCEL" -nographic -no-reboot -nic none \
	-kernel "$KERNEL" -initrd "$INITRD" \
	-append "console=ttyAMA0 rdinit=/init panic=-1 quiet $APPEND" </dev/null 2>&1
	echo "RUN-VM-QEMU-RC: $?")

rc=$(sed -n 's/.*RUN-VM-QEMU-RC: //p' "$LOG" | tail -n 1)
pass=$(grep -c 'E2E-TEST: [^ ]* PASS' "$LOG")
fail=$(grep -c 'E2E-TEST: [^ ]* FAIL' "$LOG")
why=""
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	why="timeout after ${TIMEOUT}s"
elif grep -q 'Kernel panic' "$LOG"; then
	why="kernel panic"
elif [ -z "$result_at" ]; then
	why="no ARM64-E2E-RESULT line (qemu rc $rc)"
fi
echo "run-vm: cpu=$CPU smp=$SMP accel=$ACCEL qemu_rc=$rc wall=$(stamp)s" \
	"first_output=${first:--}s init=${init:--}s result_at=${result_at:--}s"
if [ -n "$why" ]; then
	fail=$((fail + 1))
	echo "E2E-TEST: vm FAIL ($why)"
	echo "--- last 30 lines of the serial log:"
	tail -n 30 "$LOG"
fi
grep 'E2E-TEST: [^ ]* FAIL' "$LOG" | sed 's/^ *[0-9.]* /failed: /'
echo "arm64-e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
