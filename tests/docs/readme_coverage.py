#!/usr/bin/env python3
"""readme_coverage.py OLD_README [FILE...]: did every fact of the old README land somewhere?

Used once, for issue 17, when the 96 KB README was split into a front page, docs/ and the man
pages. It cuts OLD_README into units (every sentence of a paragraph or list item, every table
row, every line of a code block; headings are left out) and looks for each in the new files
(default: README.md, CONTRIBUTING.md, docs/**/*.md):

  found      the unit, normalized (case, Markdown marks, spaces), is in a file, once
  duplicated found in more than one place (only units of 6 words or more are counted)
  reworded   not found as it was, but 70% or more of its 3-word sequences are in one file
  missing    neither

A table row counts as found when each of its cells is found in the same file (rows often
become definition lists in the man pages). Prints the counts, then every unit that is not
simply found. Exit status 0 (a report, not a test: a rewrite legitimately rewords).

  git show 23e7091:README.md > /tmp/old-readme.md
  python3 tests/docs/readme_coverage.py /tmp/old-readme.md
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def norm(s):
    s = s.replace("\u2026", "...").replace("\\|", "|").replace("\\", "")
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)  # links
    s = re.sub(r"[`*]", "", s)
    s = s.replace("**", "")
    s = re.sub(r"\s+", " ", s)
    return s.strip().lower()


def units(text):
    """(kind, raw) units of a Markdown text."""
    out = []
    lines = text.splitlines()
    i = 0
    para = []

    def flush():
        if para:
            joined = " ".join(l.strip() for l in para)
            for sent in re.split(r"(?<=[.!?:;])\s+(?=[A-Z(`*\[])", joined):
                if len(sent.split()) >= 3:
                    out.append(("sentence", sent))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                if lines[i].strip():
                    out.append(("code", lines[i]))
                i += 1
            i += 1
            continue
        if line.startswith("    ") and not para and line.strip():
            out.append(("code", line))
            i += 1
            continue
        if line.startswith("|"):
            flush()
            if not re.match(r"^\|[\s:|-]+\|?\s*$", line):
                out.append(("row", line))
            i += 1
            continue
        if line.startswith("#"):
            flush()
            i += 1
            continue
        if not line.strip():
            flush()
            i += 1
            continue
        if re.match(r"^\s*([-*]|\d+\.)\s", line):  # a list item starts a new unit
            flush()
            line = re.sub(r"^\s*([-*]|\d+\.)\s", "", line)
        para.append(line)
        i += 1
    flush()
    return out


def cells(row):
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|")) if c.strip()]


def trigrams(s):
    w = s.split()
    return {tuple(w[i:i + 3]) for i in range(len(w) - 2)}


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 64
    old = open(sys.argv[1]).read()
    files = sys.argv[2:] or (
        [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CONTRIBUTING.md")] +
        sorted(glob.glob(os.path.join(ROOT, "docs/**/*.md"), recursive=True)))
    texts = {}
    for f in files:
        t = open(f).read()
        # table rows as their cells, so that rows match across table/list layouts
        t = re.sub(r"(?m)^\|(.*)\|\s*$", lambda m: " | ".join(cells(m.group(0))), t)
        texts[os.path.relpath(f, ROOT)] = norm(t)
    grams = {f: trigrams(t) for f, t in texts.items()}

    report = {"found": [], "duplicated": [], "reworded": [], "missing": []}
    for kind, raw in units(old):
        if kind == "row":
            parts = [norm(c) for c in cells(raw)]
            parts = [p for p in parts if len(p) > 2]
            where = [f for f, t in texts.items() if parts and all(p in t for p in parts)]
        else:
            u = norm(raw)
            where = [f for f, t in texts.items() if u in t]
            count = sum(t.count(u) for t in texts.values())
        if where:
            key = norm(raw)
            many = len(where) > 1 or (kind != "row" and count > 1)
            if many and len(key.split()) >= 6:
                report["duplicated"].append((kind, raw, where))
            else:
                report["found"].append((kind, raw, where))
            continue
        g = trigrams(norm(raw))
        best, score = None, 0.0
        for f, fg in grams.items():
            if g:
                s = len(g & fg) / len(g)
                if s > score:
                    best, score = f, s
        if score >= 0.7:
            report["reworded"].append((kind, raw, [f"{best} ({score:.0%})"]))
        else:
            report["missing"].append((kind, raw, [f"{best} ({score:.0%})"] if best else []))

    total = sum(len(v) for v in report.values())
    print(f"{total} units: " + ", ".join(f"{len(v)} {k}" for k, v in report.items()))
    for k in ("missing", "reworded", "duplicated"):
        if report[k]:
            print(f"\n== {k} ({len(report[k])})")
            for kind, raw, where in report[k]:
                print(f"- [{kind}] {raw.strip()[:160]}")
                print(f"    -> {', '.join(where)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
