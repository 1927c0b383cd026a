#!/bin/sh
# Install the Debian packages perch needs, when any is missing. Usage:
#   scripts/install-deps.sh build   what building perch and running `make demo` need
#   scripts/install-deps.sh [all]   that and the test toolchain (`make check`)
#   --list first: print the set's packages, one a line, and install nothing
# Idempotent: does nothing (and needs no network) when everything is there.
# Works as root or through sudo.
set -eu
LIST=
if [ "${1:-}" = --list ]; then
	LIST=1
	shift
fi
SET=${1:-all}
case "$SET" in
build | all) ;;
*)
	echo "usage: scripts/install-deps.sh [--list] [build|all]" >&2
	exit 64
	;;
esac

# build: the compiler and the libraries perch links with or dlopen()s (capstone, isa-l's
# inflater: src/symbols/inflate.c, perch falls back to zlib without it); python3 and npm put
# the report page together (mk/report.mk: npm fetches its uPlot at build time)
BUILD_PKGS="build-essential pkg-config libunwind-dev libdwarf-dev libelf-dev libcapstone-dev
libreadline-dev liblzma-dev zlib1g-dev libzstd-dev libisal-dev libiberty-dev python3"

# tests: check (the unit and e2e suites), gdb (reference stacks), elfutils, binutils (fixture
# checks), util-linux (setpriv, unshare), strace (a second tracer); output consumers the writer tests open their files with:
# dmtracedump (ART .trace), protobuf-compiler (pprof), python3 + python3-jsonschema
# (speedscope schema, Sentry/Chrome/trace checkers), python3-scipy (Student's t and chi-square
# values the diff statistics are checked against); Android: libsmali-java (smali assembles the dex
# fixtures), dexdump (their oracle), zipalign (APK fixtures); golang-go (go tool pprof) and
# chromium (headless: the flame graphs load and render) for the consumer checks; clang-14 and
# libclang-rt-14-dev (libFuzzer: make fuzz), valgrind (make check-valgrind); gcc-12-multilib and
# libc6-dev-i386 (the 32-bit x86 targets; not gcc-multilib: it conflicts with gcc-aarch64-linux-gnu);
# linux-perf (the reference the shares suite compares perch with) and sqlite3 (one of its programs);
# redis-server and redis-tools (a real server under its own benchmark, e2e-cpumode)
# the real Android runtime of the e2e-realart suite (mk/realart.mk): android-libart and the
# Android libraries it uses without naming them, liblz4-1, Android's jni.h
# (android-libnativehelper-dev), zip (its jars);
# go-md2man (the man pages, docs/man/*.md, for make install), groff-base, man-db and
# bash-completion (check-docs, check-install), debhelper and dpkg-dev (make deb);
# lld (the module and toolchain tests link with it); clang-format (make check-format)
PKGS="check elfutils gdb binutils xz-utils
util-linux strace g++ dmtracedump protobuf-compiler python3 python3-jsonschema python3-scipy
libsmali-java dexdump zipalign
golang-go chromium
clang-14 libclang-rt-14-dev valgrind nodejs lld
gcc-12-multilib libc6-dev-i386
linux-perf sqlite3 redis-server redis-tools
android-libart android-libbase android-liblog android-libziparchive android-libbacktrace
android-libnativebridge android-libnativeloader android-libnativehelper-dev liblz4-1 zip
go-md2man groff-base man-db bash-completion debhelper dpkg-dev clang-format"
# the oracle suite (tests/real, make check-real): clang and lld (clang, clang++, ld.lld), rustc
# (Debian's 1.63), sqlite3 and perl (programs it profiles), libc6-dbg (glibc's DWARF: the names,
# inline and tail-call frames both perch and gdb show in libc)
# libc6-dbg is also the unit suites' glibc DWARF 5 (tail calls, line tables: check_debuginfo.c);
# rustc their Rust legacy and v0 symbol names (check_symbolize.c)
PKGS="$PKGS clang lld rustc sqlite3 perl libc6-dbg"
# musl-tools (musl-gcc): the dump suite builds a program on musl, whose libc has no unwind
# tables, to see the dump say where a stack stopped early
PKGS="$PKGS musl-tools"
[ "$SET" = build ] && PKGS=$BUILD_PKGS || PKGS="$BUILD_PKGS $PKGS"

# npm fetches the report page's uPlot at build time (mk/report.mk, web/package-lock.json). A
# Node.js from elsewhere (NodeSource) brings its own npm, which Debian's npm package would fight
# with: install Debian's only when there is no npm at all.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
if [ -n "$LIST" ]; then
	# shellcheck disable=SC2086
	printf '%s\n' $PKGS
	exit 0
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: run as root, or install sudo, or install them by hand" >&2
	exit 1
fi

echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
