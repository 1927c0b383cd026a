#!/bin/sh
# Run a program of tests/realart/app on the real runtime by hand, as the e2e-realart suite does:
#   tests/realart/run.sh [-jar] CLASS ARG [ART options...]      (after `make targets`)
#   CLASS: perch/realart/Deep (ARG 0: block at depth 7, 1: spin) or perch/realart/Split
#   ART options: none (nterp), -Xint (mterp), -Xint -Xmethod-trace -Xmethod-trace-file:F (switch)
# RA (default build/targets/realart) is where `make targets` put the launcher and dex files.
RA=${RA:-build/targets/realart}
ext=dex
[ "$1" = -jar ] && { ext=jar; shift; }
RT=$RA/rt
mkdir -p "$RT/root" "$RT/data" "$RT/art" "$RT/i18n" "$RT/tz"
export ANDROID_ROOT=$RT/root ANDROID_DATA=$RT/data ANDROID_ART_ROOT=$RT/art \
	ANDROID_I18N_ROOT=$RT/i18n ANDROID_TZDATA_ROOT=$RT/tz LD_LIBRARY_PATH=$RA/lib
cls=$1 arg=$2
shift 2
exec "$RA/realart-launcher" "$RA/core.$ext:$RA/app.$ext" "$cls" "$arg" \
	-Ximage:"$RT/none.art" -Xnoimage-dex2oat -Xusejit:false "$@"
