#!/bin/bash
# check-deb [--install] DEB (make check: check-deb; CI: check-deb-install): the package built by
# `make deb` holds perch, perch-adb, every man page and the completion, depends on the shared
# libraries perch links (as dpkg-shlibdeps found them), and apt can install it on this Debian
# (`apt-get install --simulate`, which resolves its dependencies against the archive). Then it
# is unpacked into a scratch root (dpkg -x) and run from there (smoke.sh). With --install (CI, a
# fresh machine, root): apt installs it for real, smoke.sh runs /usr/bin/perch with the system's
# man and bash-completion paths, and the package is purged again. Environment: TARGETS.
set -euo pipefail
cd "$(dirname "$0")/../.."
install=0
if [ "${1:-}" = --install ]; then
	install=1
	shift
fi
deb=$1
fail() {
	echo "check-deb: FAIL: $*" >&2
	exit 1
}
[ -f "$deb" ] || fail "no $deb (make deb)"

fields=$(dpkg-deb -f "$deb" Package Version Architecture Depends)
grep -qx 'Package: perch' <<<"$fields" || fail "package name: $fields"
version=$(sed -n 's/^Version: //p' <<<"$fields")
for lib in libc6 libunwind8 libdwarf1 libcapstone4 libelf1 libreadline8 liblzma5 zlib1g; do
	grep -q "Depends:.*\b$lib\b" <<<"$fields" || fail "Depends has no $lib: $fields"
done

want="./usr/bin/perch ./usr/bin/perch-adb ./usr/share/bash-completion/completions/perch"
for m in docs/man/*.1.md; do
	m=${m##*/}
	want="$want ./usr/share/man/man1/${m%.md}.gz"
done
contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for f in $want; do
	grep -qx "$f" <<<"$contents" || fail "$deb has no $f"
done

if ! sim=$(apt-get install --simulate -q "./$deb" 2>&1) ||
	! grep -qE '^Inst perch |perch is already the newest' <<<"$sim"; then
	fail "apt-get install --simulate ./$deb: $sim"
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
first=$("$root/usr/bin/perch" --version | head -n 1)
[ "$first" = "perch $version" ] || fail "package version $version, but perch --version says $first"
PERCH_BIN=$root/usr/bin/perch tests/docs/smoke.sh "$root/usr"

if [ "$install" -eq 1 ]; then
	[ "$(id -u)" -eq 0 ] || fail "--install needs root"
	if dpkg-query -W -f='${Status}' perch 2>/dev/null | grep -q 'install ok installed'; then
		fail "a perch package is already installed: not replacing it"
	fi
	apt_lock=/tmp/perch-apt.lock
	flock "$apt_lock" apt-get install -y -q "./$deb" >/dev/null ||
		fail "apt-get install ./$deb"
	st=0
	PERCH_BIN=/usr/bin/perch tests/docs/smoke.sh /usr || st=$?
	man -w perch-record >/dev/null || st=1
	flock "$apt_lock" apt-get purge -y -q perch >/dev/null || fail "apt-get purge perch"
	[ ! -e /usr/bin/perch ] || fail "/usr/bin/perch is still there after the purge"
	[ "$st" -eq 0 ] || fail "the installed package does not work"
fi
echo "check-deb: passed ($deb)"
