#!/bin/sh
# arm64-sysroot.sh DIR: everything the aarch64 cross build and VM tests need, without installing
# a single :arm64 package (see docs/design/arm64-qemu.md):
#   host (amd64, apt):  gcc-aarch64-linux-gnu qemu-system-arm qemu-user cpio
#   DIR/debs/           cache of the arm64 .debs (apt-get download; kept across runs)
#   DIR/sysroot/        those .debs unpacked with dpkg-deb -x (headers, static libs, busybox)
#   DIR/boot/vmlinuz-*  the Debian cloud-arm64 kernel Image
# Idempotent: a second run with everything in place needs no network and takes milliseconds.
# Environment: SKIP_APT=1 never calls apt-get install (fails instead when something is missing).
set -eu

DIR=${1:-build/arm64}
HOST_PKGS="gcc-aarch64-linux-gnu qemu-system-arm qemu-user cpio"
# arm64 packages unpacked into the sysroot (the kernel package is resolved below); the
# android-lib* ones, liblz4, zlib, libstdc++ and p7zip-full (7z.so, which libbacktrace loads)
# are Debian's real Android runtime for the VM's real-ART check (mk/realart.mk)
ARM64_PKGS="libc6 libc6-dev linux-libc-dev libgcc-s1 libunwind-dev libunwind8 liblzma-dev
libdwarf-dev libelf-dev zlib1g-dev libzstd-dev libcapstone-dev libreadline-dev libncurses-dev
check libsubunit-dev libiberty-dev busybox-static
android-libart android-libbase android-liblog android-libziparchive android-libbacktrace
android-libnativebridge android-libnativeloader liblz4-1 zlib1g libstdc++6 p7zip-full"
KERNEL_META=linux-image-cloud-arm64

say() { echo "arm64-sysroot: $*" >&2; }
die() { say "$*"; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 && SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive

# ---- tier 0: amd64 host packages (never an :arm64 one) ----
missing=""
for p in $HOST_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
STAMP="$DIR/sysroot/.stamp"
# fast path: host packages there, nothing changed since the last run (no newer apt lists, same
# script)
if [ -z "$missing" ] && [ -f "$STAMP" ] && ls "$DIR"/boot/vmlinuz-* >/dev/null 2>&1 &&
	[ -z "$(find "$0" -newer "$STAMP")" ] &&
	[ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -newer "$STAMP")" ]; then
	exit 0
fi
need_update=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	# only so that apt can resolve arm64 package names for `apt-get download`
	[ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ] || die "run as root: dpkg --add-architecture arm64"
	say "dpkg --add-architecture arm64 (no arm64 package gets installed)"
	$SUDO dpkg --add-architecture arm64
	need_update=1
fi
# arm64 package lists present?
apt-cache show --no-all-versions libc6-dev:arm64 >/dev/null 2>&1 || need_update=1
if [ -n "$missing" ] || [ $need_update -eq 1 ]; then
	[ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ] || die "missing:$missing; run as root or install sudo"
	say "apt-get update"
	$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
fi
if [ -n "$missing" ]; then
	[ "${SKIP_APT:-0}" = 1 ] && die "SKIP_APT=1 but missing:$missing"
	say "installing$missing"
	# shellcheck disable=SC2086
	$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
fi

# ---- tier 1: arm64 debs into a cache, unpacked into a sysroot ----
mkdir -p "$DIR/debs"
DIR=$(cd "$DIR" && pwd)
STAMP="$DIR/sysroot/.stamp"

KPKG=$(apt-cache depends "$KERNEL_META:arm64" 2>/dev/null |
	awk '/Depends: linux-image-/ { sub(/:arm64$/, "", $2); print $2; exit }')
[ -n "$KPKG" ] || die "cannot resolve $KERNEL_META:arm64 (apt-get update?)"

pkgs=""
for p in $ARM64_PKGS $KPKG; do
	pkgs="$pkgs $p:arm64"
done
# 'URI' file size hash, one line per package: the exact versions apt would pick now (from an
# empty directory: --print-uris leaves out packages whose file is already in the current one)
rm -rf "$DIR/debs/.empty" && mkdir "$DIR/debs/.empty"
# shellcheck disable=SC2086
uris=$(cd "$DIR/debs/.empty" && apt-get download --print-uris $pkgs) ||
	die "apt-get download failed"
want=$(printf '%s\n' "$uris" | awk '{ print $2 }' | sort)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && ls "$DIR"/boot/vmlinuz-* >/dev/null 2>&1
then
	touch "$STAMP" # the sysroot matches the current package versions
	exit 0
fi
say "kernel package: $KPKG"

fetch=""
for f in $want; do
	[ -s "$DIR/debs/$f" ] || fetch="$fetch $f"
done
if [ -n "$fetch" ]; then
	get=""
	for f in $fetch; do
		get="$get ${f%%_*}:arm64"
	done
	say "downloading$get"
	# shellcheck disable=SC2086
	(cd "$DIR/debs" && apt-get download -q -o APT::Sandbox::User=root $get >/dev/null) ||
		die "apt-get download failed"
fi
for f in $want; do
	[ -s "$DIR/debs/$f" ] || die "missing $DIR/debs/$f after download"
done

say "unpacking $(printf '%s\n' "$want" | wc -l) packages into $DIR/sysroot"
rm -rf "$DIR/sysroot.new" "$DIR/boot.new"
mkdir -p "$DIR/sysroot.new" "$DIR/boot.new"
for f in $want; do
	case $f in
	linux-image-*)
		# the Image only: the initramfs needs no modules (saves ~80 MB)
		dpkg-deb --fsys-tarfile "$DIR/debs/$f" |
			tar -x -C "$DIR/boot.new" --strip-components=2 --wildcards './boot/vmlinuz-*'
		;;
	*) dpkg-deb -x "$DIR/debs/$f" "$DIR/sysroot.new" ;;
	esac
done
[ -x "$DIR/sysroot.new/bin/busybox" ] || die "no bin/busybox in the sysroot"
rm -rf "${DIR:?}/sysroot" "${DIR:?}/boot"
mv "$DIR/sysroot.new" "$DIR/sysroot"
mv "$DIR/boot.new" "$DIR/boot"
# drop debs of versions no longer wanted
for f in "$DIR"/debs/*.deb; do
	printf '%s\n' "$want" | grep -qxF "${f##*/}" || rm -f "$f"
done
printf '%s\n' "$want" >"$STAMP"
say "done"
