#!/bin/bash
# check-install (make check): `make install DESTDIR=... PREFIX=/usr` puts exactly the expected
# files in place, the installed perch runs from there (smoke.sh: record, dump, report, man,
# bash completion, perch-adb finding its device binary in PREFIX/lib/perch/ABI/), and
# `make uninstall` removes every file again. Environment: MAKE, O, TARGETS. The sub-makes do
# not get O: they derive it from SAN= as the caller's make did (O=build-san plus SAN would
# make them build a build-san-san).
set -euo pipefail
cd "$(dirname "$0")/../.."
make=${MAKE:-make}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail() {
	echo "check-install: FAIL: $*" >&2
	exit 1
}

env -u O $make --no-print-directory install DESTDIR="$dest" PREFIX=/usr >"$dest.log" 2>&1 ||
	{ cat "$dest.log" >&2; rm -f "$dest.log"; fail "make install"; }
rm -f "$dest.log"
want=$( (
	echo usr/bin/perch
	echo usr/bin/perch-adb
	for m in docs/man/*.1.md; do
		m=${m##*/}
		echo "usr/share/man/man1/${m%.md}"
	done
	echo usr/share/bash-completion/completions/perch
	echo usr/share/bash-completion/completions/perch-adb
) | sort)
have=$(cd "$dest" && find . -type f -o -type l | sed 's|^\./||' | sort)
[ "$want" = "$have" ] || fail "installed files differ: $(diff <(echo "$want") <(echo "$have"))"
[ -x "$dest/usr/bin/perch" ] && cmp -s "$dest/usr/bin/perch" "${O:-build}/perch" ||
	fail "usr/bin/perch is not ${O:-build}/perch"

# the device binary perch-adb looks for when installed (what make install-android puts there;
# the fake device runs it here, so the host build stands in for the static one)
install -D -m 755 "${O:-build}/perch" "$dest/usr/lib/perch/x86_64/perch"
tests/docs/smoke.sh "$dest/usr"

env -u O $make --no-print-directory uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1 ||
	fail "make uninstall"
left=$(cd "$dest" && find . -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "check-install: passed"
