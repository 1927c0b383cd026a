#!/bin/sh
# mkinitramfs.sh OUT.cpio.gz SYSROOT INIT E2E FILE...: the arm64 test VM's initramfs: static
# busybox from SYSROOT with its applets, ld.so + libc from SYSROOT, INIT as /init, E2E as
# /e2e.sh, every FILE in /t.
# newc cpio, every file owned by 0:0, gzip -1 (see docs/design/arm64-qemu.md).
set -eu
[ $# -ge 4 ] || { echo "usage: $0 OUT SYSROOT INIT E2E [FILE...]" >&2; exit 64; }
OUT=$1 SYSROOT=$2 INIT=$3 E2E=$4
shift 4
R=$OUT.d
APPLETS="sh ash mount umount cat echo printf sleep poweroff reboot sync ls cut uname date dmesg
ps kill grep egrep sed awk wc head tail sort uniq tr mkdir rm cp mv ln test [ expr timeout seq
tee env true false basename dirname id pidof xargs chmod find mkfifo"

rm -rf "$R"
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/tmp" "$R/t"
install -m 755 "$SYSROOT/bin/busybox" "$R/bin/busybox"
for a in $APPLETS; do
	ln -s busybox "$R/bin/$a"
done
install -m 755 "$INIT" "$R/init"
install -m 755 "$E2E" "$R/e2e.sh"
for f in "$@"; do
	install -m 755 "$f" "$R/t/"
done
# the loader and libc for dynamic targets
mkdir -p "$R/lib/aarch64-linux-gnu"
for l in ld-linux-aarch64.so.1 libc.so.6 libm.so.6; do
	cp -L "$SYSROOT/lib/aarch64-linux-gnu/$l" "$R/lib/aarch64-linux-gnu/"
done
ln -s aarch64-linux-gnu/ld-linux-aarch64.so.1 "$R/lib/ld-linux-aarch64.so.1"
# the kernel opens /dev/console for init before devtmpfs is mounted; mknod needs root
[ "$(id -u)" -eq 0 ] && mknod -m 600 "$R/dev/console" c 5 1
(cd "$R" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc -R 0:0 --quiet) |
	gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
rm -rf "$R"
