#!/bin/sh
# perch e2e checks inside the arm64 VM (busybox sh, run by /init). Binaries are in /t: perch and
# static aarch64 builds of the tests/targets programs (see mk/arm64.mk). One line per test:
#   E2E-TEST: <name> PASS|FAIL [(detail)]
# and at the end: ARM64-E2E-RESULT: <N> passed, <M> failed
# Sampling is kept short: under TCG one sample costs tens of times what it costs natively.
T=/t
PERCH=$T/perch
W=/tmp/e2e
FREQ=${E2E_FREQ:-50}
DUR=${E2E_DUR:-2}
NPASS=0
NFAIL=0
mkdir -p $W

result() { # NAME PASS|FAIL [DETAIL]
	if [ "$2" = PASS ]; then
		NPASS=$((NPASS + 1))
	else
		NFAIL=$((NFAIL + 1))
	fi
	echo "E2E-TEST: $1 $2${3:+ ($3)}"
}

# show FILE [LINES]: a file into the log, indented, for failures
show() {
	echo "--- $1"
	head -n "${2:-40}" "$1" | sed 's/^/    /'
}

# start_target NAME ARGS...: start /t/NAME, wait for its "ready PID" line; sets TPID, TOUT
start_target() {
	name=$1
	shift
	TOUT=$W/$name.out
	"$T/$name" "$@" >"$TOUT" 2>&1 &
	TPID=$!
	i=0
	while ! grep -q '^ready ' "$TOUT" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 $TPID 2>/dev/null; then
			echo "target $name did not get ready"
			show "$TOUT"
			return 1
		fi
		sleep 0.05
	done
	return 0
}

stop_target() {
	kill $TPID 2>/dev/null
	wait $TPID 2>/dev/null
}

# record NAME: perch record the running target into $W/NAME.folded; sets ROUT, RERR, RRC
record() {
	ROUT=$W/$1.folded
	RERR=$W/$1.err
	rm -f "$ROUT"
	timeout 60 $PERCH record -F $FREQ -d $DUR -o "$ROUT" -p $TPID 2>"$RERR"
	RRC=$?
	grep -e 'samples:' -e 'unwound' "$RERR" | sed "s/^/    [$1] /"
	# the most frequent stacks that do not reach _start / thread_start, for the log
	[ -s "$ROUT" ] && awk '{ s = $0; sub(/^[^;]*;/, "", s) }
		s !~ /^(_start|thread_start);/ { print }' "$ROUT" | sort -t' ' -k2 -n -r |
		head -n 3 | sed "s/^/    [$1] not rooted: /"
}

# samples TID [REGEX]: samples of thread TID ("name-TID;" prefix) whose stack matches REGEX
samples() {
	awk -v tid="$1" -v re="${2:-.}" '
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); t = s; sub(/;.*/, "", t)
		  sub(/.*-/, "", t) }
		t == tid && s ~ re { c += n }
		END { print c + 0 }' "$ROUT"
}

# folded_ok FILE: every line is "frames COUNT" and the counts add up to the summary's samples
folded_ok() {
	bad=$(grep -c -v -E '^[^ ].* [0-9]+$' "$1")
	sum=$(awk '{ s += $NF } END { print s + 0 }' "$1")
	want=$(sed -n 's/.*samples: \([0-9]*\).*/\1/p' "$RERR" | head -n 1)
	[ "$bad" = 0 ] && [ "$sum" -gt 0 ] && [ "$sum" = "$want" ]
}

# chain_test TEST TARGET SEQ MINPCT: the target's main thread holds SEQ in >= MINPCT % of samples
chain_test() {
	test=$1 target=$2 seq=$3 minpct=$4
	if ! start_target "$target" 30; then
		result "$test" FAIL "target did not start"
		return
	fi
	record "$test"
	alive=yes
	kill -0 $TPID 2>/dev/null || alive=no
	stop_target
	all=0 good=0
	[ -s "$ROUT" ] && all=$(samples $TPID) && good=$(samples $TPID "(^|;)$seq( |;|\$)")
	min=$((FREQ * DUR / 2))
	detail="$good of $all samples hold $seq, perch rc=$RRC, target alive after detach: $alive"
	if [ $RRC = 0 ] && [ "$alive" = yes ] && [ "$all" -ge $min ] &&
		[ $((good * 100)) -ge $((minpct * all)) ]; then
		result "$test" PASS "$detail"
	else
		result "$test" FAIL "$detail"
		show "$RERR" 20
		[ -s "$ROUT" ] && show "$ROUT" 15
		# one stack as perch dump sees it, for the log
		if start_target "$target" 30; then
			timeout 30 $PERCH dump -p $TPID >$W/$test.dump 2>&1
			stop_target
			show $W/$test.dump 30
		fi
	fi
}

echo "E2E-PERCH: $($PERCH --version 2>&1)"

# 1. the known chain, -O0 with frame pointers and -O2 without; the folded file itself
chain_test chain-fp chain-fp 'main;f0;f1;f2;f3;spin' 90
if [ -s "$W/chain-fp.folded" ] && folded_ok "$W/chain-fp.folded"; then
	result folded-format PASS "$(wc -l <"$W/chain-fp.folded") lines, $sum samples"
else
	result folded-format FAIL "bad lines ${bad:-?}, sum ${sum:-?}, summary ${want:-?}"
	[ -s "$W/chain-fp.folded" ] && show "$W/chain-fp.folded" 10
fi
chain_test chain-o2 chain-o2 'main;f0;f1;f2;f3;spin' 90
# static without .eh_frame_hdr, no frame pointers; dynamic PIE (ld.so, libc.so.6)
chain_test chain-nohdr chain-nohdr 'main;f0;f1;f2;f3;spin' 90
chain_test chain-dyn chain-dyn 'main;f0;f1;f2;f3;spin' 90

# 2. four named threads, each in its own burn function; the main thread waits in join
if start_target threads4 30; then
	record threads4
	stop_target
	ok=1
	detail=""
	min=$((FREQ * DUR / 4)) # five threads under TCG: perch misses more ticks here
	for x in A:a B:b C:c D:d; do
		n=${x%:*} f=burn_${x#*:}
		tids=$(awk -v n="w$n" '{ t = $1; sub(/;.*/, "", t); m = t; sub(/-[0-9]+$/, "", m)
			if (m == n) { sub(/.*-/, "", t); print t } }' "$ROUT" | sort -u)
		all=0 busy=0 vdso=0
		if [ "$(echo "$tids" | wc -w)" = 1 ]; then
			all=$(samples "$tids")
			busy=$(samples "$tids" "worker_main;$f( |;|\$)")
			# samples in the vDSO are the vdso test's business (PAC): not counted here
			vdso=$(samples "$tids" ";__kernel_[a-z_]*\$")
		fi
		detail="$detail w$n:$busy/$all(vdso $vdso)"
		[ "$all" -ge $min ] && [ "$busy" -gt 0 ] || ok=0
		[ "$n" = A ] && [ $((busy * 100)) -lt $((90 * (all - vdso))) ] && ok=0
	done
	main=$(samples $TPID "main")
	detail="$detail main:$main, perch rc=$RRC"
	[ "$main" -gt 0 ] && [ $RRC = 0 ] || ok=0
	if [ $ok = 1 ]; then
		result threads4 PASS "$detail"
	else
		result threads4 FAIL "$detail"
		show "$RERR" 20
		show "$ROUT" 30
	fi
else
	result threads4 FAIL "target did not start"
fi

# 3. perch dump: three blocked threads with their known frames
if start_target dump 60; then
	sleep 0.5 # let the threads reach their blocking calls
	timeout 60 $PERCH dump -p $TPID >$W/dump.out 2>$W/dump.err
	rc=$?
	alive=yes
	kill -0 $TPID 2>/dev/null || alive=no
	stop_target
	# per thread: its name line, then whether the expected frames follow
	got=$(awk '/^TID / { name = $3; gsub(/"/, "", name) }
		/^#/ { fr[name] = fr[name] " " $3 }
		END { for (n in fr) print n ":" fr[n] }' $W/dump.out)
	sleeper=$(echo "$got" | grep -c -E '^sleeper:.* dump_sleeper_wait sleeper_main( |$)')
	reader=$(echo "$got" | grep -c -E '^reader:.* dump_reader_wait reader_main( |$)')
	mainok=$(echo "$got" | grep -c -E '^dump:.* main( |$)')
	threads=$(grep -c '^TID ' $W/dump.out)
	detail="threads $threads, sleeper $sleeper reader $reader main $mainok, rc=$rc alive=$alive"
	if [ $rc = 0 ] && [ "$alive" = yes ] && [ "$threads" = 3 ] && [ "$sleeper" = 1 ] &&
		[ "$reader" = 1 ] && [ "$mainok" = 1 ]; then
		result dump PASS "$detail"
	else
		result dump FAIL "$detail"
		show $W/dump.out 40
		show $W/dump.err 10
	fi
else
	result dump FAIL "target did not start"
fi

# 4. return addresses signed with PAC (-mbranch-protection=standard; the VM CPU has pauth)
chain_test chain-pac chain-pac 'main;f0;f1;f2;f3;spin' 90

# 5. a sample in a leaf function without a frame record (caller only in LR), with and without
#    CFI for the target's own code
chain_test leaf-cfi leaf-cfi 'main;leaf_outer;leaf_middle;leaf_spin' 90
chain_test leaf-nocfi leaf-nocfi 'main;leaf_outer;leaf_middle;leaf_spin' 90

# 6. samples inside the kernel's vDSO (clock_gettime): its return addresses are PAC-signed
chain_test vdso vdso 'main;vdso_outer;vdso_loop' 90

echo "ARM64-E2E-RESULT: $NPASS passed, $NFAIL failed"
