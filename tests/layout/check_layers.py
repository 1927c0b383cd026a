#!/usr/bin/env python3
"""The tree's layers (make check-layers): src/README.md's folder table gives the order, from
the commands down to base; every `#include` of a source or header file must point to its own
folder or one below it in that table.

Checked, from the #include lines of src/*/*.{c,h}, include/perch/**.h and arch/**.{c,h}:
  * `ls src` holds the table's folders and README.md, nothing else; every folder of src/ and
    include/perch/ is in the table;
  * an include of "perch/FOLDER/NAME.h" names a header that exists, in FOLDER at or below the
    including file's folder ("perch/arch.h" is the arch row);
  * a quoted include without "perch/" is a header beside the including file (a split module's
    private header) or a generated file the build puts on the include path (*.inc).

`check_layers.py --self-test` runs the checker on a small tree of its own with one upward
include and one private header reached from another folder, and fails unless both are found.
Exit 0 when the tree is layered, 1 with one line per violation otherwise."""
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_order(root):
    """The folder names of src/README.md's table, top (cli) to bottom (base)."""
    order = []
    for line in open(os.path.join(root, "src/README.md")):
        m = re.match(r"^\|\s*([a-z]+)\b[^|]*\|", line)
        if m and m.group(1) not in ("folder",):
            order.append(m.group(1))
    return order


def folder_of(root, path):
    """The layer a file belongs to, or None (tests and the rest of the tree)."""
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "src" and len(rel) >= 3:
        return rel[1]
    if rel[:2] == ["include", "perch"]:
        return "arch" if rel[2] == "arch.h" else rel[2]
    if rel[0] == "arch":
        return "arch"
    return None


def layer_files(root):
    for top in ("src", "include/perch", "arch"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.join(dirpath, n)


def check(root):
    order = read_order(root)
    rank = {f: i for i, f in enumerate(order)}
    errors = []
    if not order:
        return ["src/README.md: no folder table found"]
    for n in sorted(os.listdir(os.path.join(root, "src"))):
        p = os.path.join(root, "src", n)
        if os.path.isdir(p):
            if n not in rank:
                errors.append(f"src/{n}/: a folder that src/README.md's table does not list")
        elif n != "README.md":
            errors.append(f"src/{n}: a file outside the role folders")
    inc_root = os.path.join(root, "include/perch")
    for n in sorted(os.listdir(inc_root)):
        if os.path.isdir(os.path.join(inc_root, n)) and n not in rank:
            errors.append(f"include/perch/{n}/: a folder that src/README.md's table does not list")
    for path in layer_files(root):
        mine = folder_of(root, path)
        rel = os.path.relpath(path, root)
        if mine not in rank:
            continue
        text = open(path, errors="replace").read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            where = f"{rel}:{line}"
            if inc.startswith("perch/"):
                parts = inc.split("/")
                target = "arch" if inc == "perch/arch.h" else (parts[1] if len(parts) == 3 else None)
                if target is None or not os.path.exists(os.path.join(root, "include", inc)):
                    errors.append(f"{where}: includes \"{inc}\", which is no header of a layer")
                elif target not in rank:
                    errors.append(f"{where}: includes \"{inc}\" of an unlisted folder {target}")
                elif rank[target] < rank[mine]:
                    errors.append(f"{where}: {mine} includes \"{inc}\" of {target}, a folder "
                                  f"above it (move the shared piece down instead)")
            elif inc.endswith(".inc"):
                continue
            else:
                beside = os.path.normpath(os.path.join(os.path.dirname(path), inc))
                if not os.path.exists(beside):
                    errors.append(f"{where}: includes \"{inc}\", not a header beside it")
                elif folder_of(root, beside) != mine:
                    errors.append(f"{where}: includes \"{inc}\" of another folder by its path")
    return errors


def self_test():
    """A tree with two layers, one upward include and one private header used across."""
    tmp = tempfile.mkdtemp(prefix="perch-layers-")
    try:
        os.makedirs(os.path.join(tmp, "src/high"))
        os.makedirs(os.path.join(tmp, "src/low"))
        os.makedirs(os.path.join(tmp, "include/perch/high"))
        os.makedirs(os.path.join(tmp, "include/perch/low"))
        open(os.path.join(tmp, "src/README.md"), "w").write(
            "| folder | owns |\n|---|---|\n| high | top |\n| low | bottom |\n")
        open(os.path.join(tmp, "include/perch/high/h.h"), "w").write("\n")
        open(os.path.join(tmp, "include/perch/low/l.h"), "w").write("\n")
        open(os.path.join(tmp, "src/high/h.c"), "w").write(
            '#include "perch/high/h.h"\n#include "perch/low/l.h"\n')
        open(os.path.join(tmp, "src/low/priv.h"), "w").write("\n")
        good = check(tmp)
        if good:
            return [f"self-test: a layered tree was refused: {good}"]
        open(os.path.join(tmp, "src/low/l.c"), "w").write(
            '#include "perch/low/l.h"\n#include "perch/high/h.h"\n')
        open(os.path.join(tmp, "src/high/x.c"), "w").write('#include "../low/priv.h"\n')
        bad = check(tmp)
        problems = []
        if not any("src/low/l.c:2" in e and "above it" in e for e in bad):
            problems.append(f"self-test: the upward include was not found: {bad}")
        if not any("src/high/x.c:1" in e for e in bad):
            problems.append(f"self-test: the private header of another folder was not found: {bad}")
        return problems
    finally:
        shutil.rmtree(tmp)


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
    errors = self_test() if "--self-test" in sys.argv else check(root)
    for e in errors:
        print(e)
    if errors:
        return 1
    if "--self-test" not in sys.argv:
        print(f"layers: {len(read_order(root))} folders, every include points to its own "
              f"folder or one below (src/README.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
