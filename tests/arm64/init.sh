#!/bin/sh
# /init of the arm64 test VM (PID 1, busybox sh): mount the pseudo file systems, describe the
# machine, run /e2e.sh, power off. The kernel panics when init exits, so this never exits:
# poweroff -f ends qemu (PSCI), and -no-reboot + panic=-1 end it if anything goes wrong.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
# no /dev/console in the archive (built without root): use the one devtmpfs brings
[ -t 1 ] || exec </dev/console >/dev/console 2>&1

echo "E2E-INIT: uptime $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r)," \
	"cpus $(grep -c '^processor' /proc/cpuinfo)"
echo "E2E-CPU: $(grep -m1 '^Features' /proc/cpuinfo | cut -d: -f2)"
echo "E2E-YAMA: ptrace_scope $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)"
cd /t && sh /e2e.sh
echo "E2E-DONE: uptime $(cut -d' ' -f1 /proc/uptime) s"
sync
poweroff -f
