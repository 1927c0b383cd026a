#!/usr/bin/env python3
"""Fetch a source tarball of Debian's android-platform-art package from the Debian mirror apt
already uses (the first http(s) URI of /etc/apt/sources.list.d/*.sources or
/etc/apt/sources.list whose path ends in /debian), check its sha256 and write it atomically.

usage: fetch-src.py FILE SHA256 OUT
"""
import glob
import hashlib
import os
import re
import sys
import urllib.parse
import urllib.request


def mirrors():
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for m in re.finditer(r"^URIs:\s*(.+)$", open(path).read(), re.M):
            yield from m.group(1).split()
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        if os.path.exists(path):
            for line in open(path):
                f = line.split()
                if len(f) > 2 and f[0] == "deb":
                    yield f[2] if f[1].startswith("[") else f[1]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    name, want, out = sys.argv[1:]
    bases = [m.rstrip("/") for m in mirrors() if re.match(r"https?://", m) and
             m.rstrip("/").endswith("/debian")]
    if not bases:
        sys.exit("fetch-src: no Debian mirror in the apt sources")
    url = "%s/pool/main/a/android-platform-art/%s" % (bases[0], urllib.parse.quote(name))
    try:
        data = urllib.request.urlopen(url, timeout=120).read()
    except OSError as e:
        sys.exit("fetch-src: cannot download %s: %s" % (url, e))
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        sys.exit("fetch-src: %s has sha256 %s, want %s" % (url, got, want))
    with open(out + ".tmp", "wb") as f:
        f.write(data)
    os.rename(out + ".tmp", out)


main()
