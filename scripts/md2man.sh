#!/bin/sh
# md2man.sh VERSION SRC.md OUT: a man page from its Markdown source (docs/man/), with go-md2man
# (Debian package go-md2man). @VERSION@ in the source becomes VERSION. go-md2man 2.0 copies text
# lines as they are, so a line that starts with '.' or "'" (".so mmap", "./prog", "'...'") would
# be read as a roff request: such lines get a leading \& unless they are one of the requests
# go-md2man itself writes.
set -eu
[ $# -eq 3 ] || { echo "usage: $0 VERSION SRC.md OUT" >&2; exit 64; }
md2man=${GO_MD2MAN:-go-md2man}
command -v "$md2man" >/dev/null 2>&1 ||
	{ echo "md2man: $md2man not found: run 'make deps' (Debian package go-md2man)" >&2; exit 1; }
sed "s/@VERSION@/$1/g" "$2" | "$md2man" |
	sed -E "/^\.(nh|TH|SH|SS|PP|LP|TP|IP|RS|RE|nf|fi|br|sp|TS|TE|EX|EE)( |\$)/!s/^([.'])/\\\\\&\\1/" \
	>"$3.tmp"
mv "$3.tmp" "$3"
