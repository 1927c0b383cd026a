#!/bin/bash
# smoke.sh PREFIX_DIR: run an installed perch from PREFIX_DIR (the directory holding bin/,
# share/man/ and share/bash-completion/; e.g. DESTDIR/usr, or /usr): --version, record and dump
# of the chain-fp target (its stack is main -> f0 -> f1 -> f2 -> f3 -> spin), report of the
# recording, every installed man page through man(1), the completion through bash-completion's
# own loader, and perch-adb against tests/fake-adb (the device binary: PERCH_BIN, else the
# installed PREFIX_DIR/lib/perch/x86_64/perch). Needs TARGETS (the e2e targets' directory).
set -euo pipefail
prefix=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=$prefix/bin
tmp=$(mktemp -d)
app=
cleanup() {
	local rc=$?
	if [ -n "$app" ]; then
		kill "$app" 2>/dev/null || true
		wait "$app" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
fail() {
	echo "smoke: FAIL: $*" >&2
	exit 1
}
n=0
ok() {
	n=$((n + 1))
}

# --version
"$bin/perch" --version >"$tmp/version" || fail "$bin/perch --version"
grep -q '^perch [0-9]' "$tmp/version" && grep -q '^build-id: [0-9a-f]\{40\}' "$tmp/version" ||
	fail "perch --version: $(cat "$tmp/version")"
ok

# a target with a known stack
"${TARGETS:?TARGETS is not set}/chain-fp" 300 >"$tmp/app.out" &
app=$!
for _ in $(seq 100); do
	grep -q '^ready' "$tmp/app.out" && break
	sleep 0.1
done
grep -q '^ready' "$tmp/app.out" || fail "chain-fp did not start"

"$bin/perch" record -q -p "$app" -d 1 -F 200 -o "$tmp/out.folded" -o "$tmp/run.perch" ||
	fail "perch record from $bin"
total=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/out.folded")
chain=$(awk '/;main;f0;f1;f2;f3;spin / { s += $NF } END { print s + 0 }' "$tmp/out.folded")
[ "$total" -ge 100 ] && [ $((chain * 10)) -ge $((total * 8)) ] ||
	fail "record: $chain of $total samples in main;f0;f1;f2;f3;spin"
ok
"$bin/perch" dump -p "$app" >"$tmp/dump" || fail "perch dump from $bin"
grep -q 'spin' "$tmp/dump" && grep -q 'f3' "$tmp/dump" && grep -q 'main' "$tmp/dump" ||
	fail "dump has no spin/f3/main: $(head -20 "$tmp/dump")"
ok
"$bin/perch" report -q "$tmp/run.perch" --format folded >"$tmp/report.folded" ||
	fail "perch report from $bin"
grep -q ';f3;spin ' "$tmp/report.folded" || fail "report: no f3;spin"
ok

# man pages: each renders, and man finds them by name on this MANPATH
pages=$(ls "$prefix/share/man/man1/" | grep -c '^perch')
[ "$pages" -ge 10 ] || fail "only $pages man pages in $prefix/share/man/man1"
for p in "$prefix"/share/man/man1/perch*; do
	err=$(MANWIDTH=80 man -l "$p" 2>&1 >/dev/null) && [ -z "$err" ] || fail "man -l $p: $err"
done
found=$(MANPATH=$prefix/share/man man -w perch-record) || fail "man -w perch-record"
case $found in "$prefix"/share/man/man1/perch-record.1*) ;; *) fail "man -w gave $found" ;; esac
ok

# completion: found by bash-completion's loader, completes with the installed perch
if [ -f /usr/share/bash-completion/bash_completion ]; then
	XDG_DATA_DIRS=$prefix/share bash --norc --noprofile -c '
		source /usr/share/bash-completion/bash_completion
		__load_completion perch && __load_completion perch-adb || exit 1
		complete -p perch perch-adb >/dev/null || exit 1
		COMP_WORDS=("$1" rec); COMP_CWORD=1; COMP_LINE="$1 rec"; COMP_POINT=${#COMP_LINE}
		_perch "$1" rec "$1"
		[ "${COMPREPLY[*]}" = record ]' sh "$bin/perch" ||
		fail "bash-completion does not load or run $prefix/share/bash-completion/completions/perch"
	ok
else
	echo "smoke: SKIP completion: bash-completion is not installed"
fi

# perch-adb, installed, against the fake adb (an x86_64 "device" that is a directory here)
dev=$tmp/adb
mkdir -p "$dev/pids"
echo emulator-5554 >"$dev/devices"
echo ro.product.cpu.abi=x86_64 >"$dev/props"
echo "com.example.chain debuggable $TARGETS/chain-fp 300" >"$dev/packages"
echo "$app" >"$dev/pids/com.example.chain"
FAKE_ADB_DIR=$dev PATH=$repo/tests/fake-adb:$PATH "$bin/perch-adb" record com.example.chain \
	-d 1 -o "$tmp/adb.folded" 2>"$tmp/adb.err" || fail "perch-adb: $(cat "$tmp/adb.err")"
grep -q ';f3;spin ' "$tmp/adb.folded" || fail "perch-adb: no f3;spin in the pulled profile"
ok
echo "smoke: $n passed ($prefix)"
