#!/usr/bin/env python3
"""No function of perch longer than LIMIT lines (make check-layers): src/**.c and arch/**.c are
in kernel style, so a function's body runs from a line that is "{" alone to the next line that
is "}" alone; its length is counted from its first signature line (the line after the blank,
comment or preprocessor line above it) to that "}". Flat tables are initializers, not
functions, and are not counted. A function that is one flat switch may be listed in
EXEMPT with the reason.

`check_function_size.py --self-test` checks the counter on two functions of its own.
Exit 0 when every function fits, 1 with one line per function that does not."""
import glob
import os
import sys

LIMIT = 150
EXEMPT = {}  # "path:function": why it may be longer


def functions(text):
    """(name, first line, length) of each function of @text."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            start = i - 1
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith(
                    ("/*", " *", "#", "}")):
                start -= 1
            end = i + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            sig = " ".join(lines[start:i])
            name = sig.split("(")[0].split()[-1].lstrip("*") if "(" in sig else "?"
            yield name, start + 1, end - start + 1
            i = end
        i += 1


def check(root):
    problems = []
    files = sorted(glob.glob(os.path.join(root, "src/*/*.c")) +
                   glob.glob(os.path.join(root, "arch/*.c")) +
                   glob.glob(os.path.join(root, "arch/*/*.c")))
    for path in files:
        rel = os.path.relpath(path, root)
        for name, line, n in functions(open(path, errors="replace").read()):
            if n > LIMIT and f"{rel}:{name}" not in EXEMPT:
                problems.append(f"{rel}:{line}: {name}() is {n} lines (at most {LIMIT}: split it "
                                f"by concern)")
    return problems, len(files)


def self_test():
    text = ("static int small(void)\n{\n\treturn 0;\n}\n\n/* a comment */\nint\nbig(int a,\n"
            "    int b)\n{\n" + "\ta++;\n" * 200 + "\treturn a;\n}\n")
    got = list(functions(text))
    want = [("small", 1, 4), ("big", 7, 206)]
    return [] if got == want else [f"self-test: counted {got}, expected {want}"]


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
    if "--self-test" in sys.argv:
        problems, nfiles = self_test(), 0
    else:
        problems, nfiles = check(root)
    for p in problems:
        print(p)
    if not problems and nfiles:
        print(f"function size: every function of {nfiles} files is at most {LIMIT} lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
