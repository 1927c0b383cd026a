#!/bin/sh
# Strip an ELF file the way Android's build strips its platform libraries
# (build/soong/scripts/strip.sh --keep-mini-debug-info, docs/design/android-art.md 4.3): no .symtab
# left; the defined function and data symbols (T, t, D) that are not in .dynsym, with .debug_frame,
# go into an xz-compressed debug-only ELF stored as .gnu_debugdata (MiniDebugInfo). Usage:
# android-strip.sh IN OUT
set -eu
in=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D "$in" --format=posix --defined-only 2>/dev/null | awk '{ print $1 }' | sort > "$tmp/dynsyms"
nm "$in" --format=posix --defined-only |
	awk '{ if ($2 == "T" || $2 == "t" || $2 == "D") print $1 }' | sort > "$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" > "$tmp/keep_symbols"
echo >> "$tmp/keep_symbols"
objcopy --only-keep-debug "$in" "$tmp/debug"
objcopy --rename-section .debug_frame=saved_debug_frame "$tmp/debug" "$tmp/debug.saved"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$tmp/keep_symbols" "$tmp/debug.saved" "$tmp/mini"
objcopy --rename-section saved_debug_frame=.debug_frame "$tmp/mini"
xz --block-size=64k -c "$tmp/mini" > "$tmp/mini.xz"
strip --strip-all -R .comment "$in" -o "$tmp/stripped"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped" "$out"
