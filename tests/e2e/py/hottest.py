#!/usr/bin/env python3
"""The hottest function (most self samples / self time) of a profile file, as its consumer
reads it; for tests/e2e/check_report.c. Standard library only.

  hottest.py folded|speedscope|chrome|sentry FILE   print the function name
  hottest.py png-run FILE R G B                     the longest horizontal run of pixels of
                                                    colour (R, G, B) in the PNG FILE
"""
import collections
import json
import struct
import sys
import zlib


def strip_name(name):
    """perch's frames may carry " (file:line)" or "(args)"; consumers compare bare names."""
    return name.split(" (")[0]


def folded(path):
    self = collections.Counter()
    for line in open(path, encoding="utf-8"):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        self[strip_name(stack.split(";")[-1])] += int(count)
    return self


def speedscope(path):
    doc = json.load(open(path, encoding="utf-8"))
    frames = doc["shared"]["frames"]
    prof = doc["profiles"][0]  # "all threads"
    self = collections.Counter()
    for stack, weight in zip(prof["samples"], prof["weights"]):
        if stack:
            self[frames[stack[-1]]["name"]] += weight
    return self


FRAME_KINDS = ("native", "pseudo", "kernel", "jit", "interpreted", "aot")


def chrome(path):
    """Self time of the nested "X" slices of the sample time lines (categories are frame
    kinds; stall slices live on tracks of their own), per thread."""
    doc = json.load(open(path, encoding="utf-8"))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    by_tid = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in FRAME_KINDS:
            by_tid[(e["pid"], e["tid"])].append(e)
    self = collections.Counter()
    for slices in by_tid.values():
        slices.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in slices:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-6:
                stack.pop()
            self[e["name"]] += e["dur"]
            if stack:
                self[stack[-1]["name"]] -= e["dur"]
            stack.append(e)
    return self


def sentry(path):
    doc = json.load(open(path, encoding="utf-8"))
    prof = doc["profile"]
    self = collections.Counter()
    for s in prof["samples"]:
        stack = prof["stacks"][s["stack_id"]]
        if stack:
            f = prof["frames"][stack[0]]
            self[f.get("function", f.get("instruction_addr", "?"))] += 1
    return self


def png_run(path, rgb):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "unsupported PNG type"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    best = 0
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        run = 0
        for x in range(width):
            if tuple(line[x * bpp:x * bpp + 3]) == rgb:
                run += 1
                best = max(best, run)
            else:
                run = 0
        prev = line
    return best


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "png-run":
        print(png_run(path, tuple(int(v) for v in sys.argv[3:6])))
        return
    self = {"folded": folded, "speedscope": speedscope, "chrome": chrome,
            "sentry": sentry}[kind](path)
    name, value = self.most_common(1)[0]
    total = sum(v for v in self.values() if v > 0)
    print("%s %.1f" % (name, 100.0 * value / total if total else 0))


main()
