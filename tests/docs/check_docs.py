#!/usr/bin/env python3
"""check-docs (make check): the man pages, the bash completion and `perch --version` against
the program itself.

  * man pages: every command `perch --help` lists has docs/man/perch-CMD.1.md, and no page is
    left without a command; each page renders with groff -ww (tbl, preconv) and man -l without
    a warning; the options of `perch CMD --help` (its option lines and usage lines) are exactly
    the options of the page's OPTIONS and SYNOPSIS sections, read from the rendered page. The
    same for perch(1) (`perch --help` + the prompt's `perch --json --help`) and perch-adb(1).
  * completion (completion/perch.bash, driven through COMP_WORDS/COMP_CWORD in bash): commands,
    every command's options, --format names, --mode choices, pids for -p, WORD.ENDING for -o,
    .perch files for report, programs after --, perch-adb's actions and options. The expected
    words are read here from the help texts, with a parser of its own (not the completion's).
  * the module map of docs/how-it-works.md names every src/*/*.c and arch/**.c in its folder's
    row, and only those.
  * scripts/install-deps.sh: `build` (make demo) lists no test tool and is a part of `all`
    (make check); README.md names every build dependency.
  * --version: "perch VERSION" equal to the Makefile's and debian/changelog's version, the
    build-id equal to readelf's, each library version equal to the Debian -dev package the
    build used (dpkg-query).

Environment: PERCH (the binary), MANDIR (rendered pages), PERCH_VERSION.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PERCH = os.environ.get("PERCH", os.path.join(ROOT, "build/perch"))
MANDIR = os.environ.get("MANDIR", os.path.join(ROOT, "build/man"))
VERSION = os.environ.get("PERCH_VERSION")
ADB = os.path.join(ROOT, "scripts/perch-adb")
COMPLETION = os.path.join(ROOT, "completion/perch.bash")

failures = []
passed = 0


def check(cond, what, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""))


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


# ---- help texts ----
OPT = re.compile(r"^--?[A-Za-z0-9][A-Za-z0-9-]*$")


def help_options(text):
    """Options a help text names: the option lines ("  -p, --pid PID  ...", indented at most 8
    columns) and the usage lines (from "usage:" to the first blank line)."""
    opts = set()
    in_usage = False
    for line in text.splitlines():
        if line.startswith("usage:"):
            in_usage = True
        elif not line.strip():
            in_usage = False
        if in_usage:
            for w in re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)", line):
                opts.add(w)
            continue
        m = re.match(r"^ {1,8}(-\S.*)$", line)
        if m:
            for w in m.group(1).replace(",", " ").split():
                if not OPT.match(w):
                    break
                opts.add(w)
    return opts


def option_entry(text, opt):
    """The lines of one option's entry: its own line and the indented ones after it."""
    out, inside = [], False
    for line in text.splitlines():
        if re.match(r"^ {1,8}-", line):
            inside = opt in line.replace(",", " ").split()
        elif not line.strip():
            inside = False
        if inside:
            out.append(line)
    return " ".join(out)


def help_endings(text):
    entry = option_entry(text, "-o")
    return sorted(set(re.findall(r"(?:^|(?<=[\s/(]))(\.[a-z][a-z0-9.]*[a-z0-9])", entry)))


def help_formats(text):
    entry = option_entry(text, "--format")
    words = []
    for w in entry.split(":", 1)[1].split() if ":" in entry else []:
        if not re.match(r"^[a-z0-9][a-z0-9-]*$", w):
            break
        words.append(w)
    return words


def help_commands(text):
    m = re.search(r"^commands:\n((?:  \S.*\n)+)", text, re.M)
    return [line.split()[0] for line in m.group(1).splitlines()] if m else []


# ---- man pages ----
def render(page):
    env = dict(os.environ, MANWIDTH="200", LC_ALL="C.UTF-8")
    r = run(["man", "-l", page], env=env)
    return r.returncode, r.stdout, r.stderr


def man_sections(text):
    sections, name = {}, None
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Z ]+$", line):
            name = line.strip()
            sections[name] = []
        elif name:
            sections[name].append(line)
    return sections


def man_options(text):
    """Options of the OPTIONS section's tags (lines indented 7 that start with '-') and of the
    SYNOPSIS."""
    s = man_sections(text)
    opts = set()
    for line in s.get("OPTIONS", []):
        if re.match(r"^ {7}-", line):
            opts.update(re.findall(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)", line))
    for line in s.get("SYNOPSIS", []):
        opts.update(re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)", line))
    return opts


def check_man(page_name, help_text, label):
    page = os.path.join(MANDIR, page_name)
    if not os.path.exists(page):
        check(False, f"man: {page_name} exists for {label}", f"no {page}")
        return
    env = dict(os.environ, LC_ALL="C.UTF-8")
    g = run(["groff", "-t", "-k", "-man", "-Tutf8", "-ww", "-rLL=80n", "-z", page], env=env)
    check(g.returncode == 0 and not g.stderr.strip(), f"man: {page_name} renders without warnings",
          g.stderr.strip())
    rc, text, err = render(page)
    check(rc == 0 and not err.strip(), f"man: man -l {page_name}", err.strip())
    want, have = help_options(help_text), man_options(text)
    check(want == have, f"man: {page_name} documents exactly the options of `{label} --help`",
          f"missing from the man page: {sorted(want - have)}; "
          f"not in --help: {sorted(have - want)}")


def check_man_pages():
    top = run([PERCH, "--help"]).stdout
    prompt = run([PERCH, "--json", "--help"]).stdout
    commands = help_commands(top)
    check(len(commands) >= 5, "help: perch --help lists the commands", top)
    check_man("perch.1", top + "\n" + prompt, "perch")
    for c in commands:
        check_man(f"perch-{c}.1", run([PERCH, c, "--help"]).stdout, f"perch {c}")
    check_man("perch-adb.1", run([ADB, "--help"]).stdout, "perch-adb")
    expected = {"perch.1", "perch-adb.1"} | {f"perch-{c}.1" for c in commands}
    sources = {f[:-3] for f in os.listdir(os.path.join(ROOT, "docs/man")) if f.endswith(".1.md")}
    check(sources == expected, "man: one page per command, none without a command",
          f"pages without a command: {sorted(sources - expected)}; "
          f"commands without a page: {sorted(expected - sources)}")
    return commands


# ---- completion ----
HARNESS = r'''
source "$1"; shift
COMP_WORDS=("$@")
COMP_CWORD=$(( $# - 1 ))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
spec=$(complete -p "${COMP_WORDS[0]##*/}") || exit 3
fn=${spec#*-F }
fn=${fn%% *}
"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
'''


def complete(words, cwd=None):
    r = run(["bash", "--norc", "--noprofile", "-c", HARNESS, "harness", COMPLETION] + words,
            cwd=cwd)
    if r.returncode:
        return None
    return set(w for w in r.stdout.splitlines() if w)


def check_completion(commands):
    top = run([PERCH, "--help"]).stdout
    got = complete([PERCH, ""])
    check(got == set(commands) | {"help"}, "completion: perch <TAB> gives the commands", got)
    got = complete([PERCH, "re"])
    check(got == {c for c in commands if c.startswith("re")}, "completion: perch re<TAB>", got)
    got = complete([PERCH, "help", ""])
    check(got == set(commands), "completion: perch help <TAB>", got)
    want = help_options(top + "\n" + run([PERCH, "--json", "--help"]).stdout)
    got = complete([PERCH, "-"])
    check(got == want, "completion: perch -<TAB> gives the session options", f"{got} != {want}")

    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        for c in commands:
            text = run([PERCH, c, "--help"]).stdout
            want = help_options(text)
            got = complete([PERCH, c, "-"])
            check(got == want, f"completion: perch {c} -<TAB> gives the options of its --help",
                  f"missing: {sorted(want - (got or set()))}, extra: {sorted((got or set()) - want)}")
            got = complete([PERCH, c, "--"])
            check(got == {o for o in want if o.startswith("--")},
                  f"completion: perch {c} --<TAB>", got)
            if "--format" in want:
                got = complete([PERCH, c, "--format", ""])
                # dump has two (text, anr), the writers' commands many
                check(got == set(help_formats(text)) and len(got) >= (2 if c == "dump" else 5),
                      f"completion: perch {c} --format <TAB>", f"{got} vs {help_formats(text)}")
            if "--mode" in want:
                got = complete([PERCH, c, "--mode", ""])
                check(got == {"wall", "cpu"}, f"completion: perch {c} --mode <TAB>", got)
            if "-p" in want:
                got = complete([PERCH, c, "-p", ""])
                check(got is not None and str(sleeper.pid) in got and
                      all(w.isdigit() for w in got), f"completion: perch {c} -p <TAB> gives pids",
                      f"{sleeper.pid} not in {sorted(got or [])[:20]}...")
            if "-o" in want:
                endings = help_endings(text)
                got = complete([PERCH, c, "-o", "prof"])
                check(len(endings) >= 5 and got is not None and
                      {"prof" + e for e in endings} <= got,
                      f"completion: perch {c} -o prof<TAB> gives every ending", f"{got} vs {endings}")
                got = complete([PERCH, c, "-o", "prof.pb"])
                check(got == {"prof.pb.gz"}, f"completion: perch {c} -o prof.pb<TAB>", got)
    finally:
        sleeper.kill()
        sleeper.wait()

    with tempfile.TemporaryDirectory() as d:
        for f in ("run.perch", "run.folded"):
            open(os.path.join(d, f), "w").close()
        got = complete([PERCH, "report", "r"], cwd=d)
        check(got == {"run.perch"}, "completion: perch report <TAB> gives recordings", got)
        got = complete([PERCH, "-x", "run.f"], cwd=d)
        check(got == {"run.folded"}, "completion: perch -x FILE<TAB> gives files", got)
    got = complete([PERCH, "record", "-F", "100", "--", "slee"])
    check(got is not None and "sleep" in got, "completion: perch record -- PROG<TAB>", got)

    adb_help = run([ADB, "--help"]).stdout
    got = complete([ADB, ""])
    check(got == {"record", "shell"}, "completion: perch-adb <TAB> gives its actions", got)
    want = {o for o in help_options(adb_help) if o != "-o"}  # -o belongs to record
    got = complete([ADB, "-"])
    check(got == want, "completion: perch-adb -<TAB> gives its options", f"{got} vs {want}")


# ---- the module map ----
def check_module_map():
    """docs/how-it-works.md's folder table names every source file in its folder's row, every
    folder of src/ has a row, and no file or folder it names is gone."""
    text = open(os.path.join(ROOT, "docs/how-it-works.md")).read()
    m = re.search(r"^## Module map\n(.*?)(?=^## )", text, re.M | re.S)
    section = m.group(1) if m else ""
    named = set()
    for row in re.finditer(r"^\| `(src/[\w-]+/|arch/)` \| ([^|]*)\|", section, re.M):
        folder = row.group(1)
        for f in re.findall(r"`([\w/-]+\.c)`", row.group(2)):
            named.add(f if f.startswith("arch/") else folder + f)
    files = {os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "src/*/*.c"))}
    files |= {os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "arch/*.c"))}
    files |= {os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "arch/*/*.c"))}
    check(files <= named, "module map: docs/how-it-works.md's folder table names every source file",
          f"missing: {sorted(files - named)}")
    check(named <= files, "module map: every file it names exists in its folder",
          f"gone: {sorted(named - files)}")


# ---- --version ----
def dpkg_version(pkg):
    r = run(["dpkg-query", "-W", "-f=${Version}", pkg])
    if r.returncode:
        return None
    v = r.stdout.split(":", 1)[-1]  # epoch
    return re.split(r"[-+~]", v)[0].replace(".dfsg", "")


def check_version():
    r = run([PERCH, "--version"])
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and lines and lines[0] == f"perch {VERSION}",
          "version: perch --version starts with the Makefile's version", r.stdout)
    changelog = open(os.path.join(ROOT, "debian/changelog")).readline()
    m = re.match(r"^perch \(([^)-]+)", changelog)
    check(m and m.group(1) == VERSION, "version: debian/changelog has the same version", changelog)
    ids = re.findall(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", PERCH]).stdout)
    check(ids and f"build-id: {ids[0]}" in lines, "version: build-id equals readelf -n's",
          f"{ids} vs {lines[:2]}")
    libs = {}
    for line in lines:
        m = re.match(r"^  (\S+)\s+(\S+)", line)
        if m:
            libs[m.group(1)] = m.group(2)
    debs = {"libunwind": "libunwind-dev", "libdwarf": "libdwarf-dev", "capstone":
            "libcapstone-dev", "libelf": "libelf-dev", "readline": "libreadline-dev",
            "zlib": "zlib1g-dev", "liblzma": "liblzma-dev"}
    check(set(libs) == set(debs), "version: every library is listed", libs)
    for lib, pkg in debs.items():
        want = dpkg_version(pkg)
        if want is None:
            print(f"check-docs: SKIP version of {lib}: {pkg} is not installed")
            continue
        check(libs.get(lib) == want, f"version: {lib} {libs.get(lib)} is the Debian {pkg} {want}")


# the packages `make demo` installs (build only) and `make check` adds (the test toolchain)
TEST_ONLY = {"check", "gdb", "chromium", "golang-go", "clang-14", "valgrind", "linux-perf",
             "redis-server", "android-libart", "rustc"}


def check_deps():
    deps = os.path.join(ROOT, "scripts/install-deps.sh")
    build = set(run([deps, "--list", "build"]).stdout.split()) - {"npm"}
    every = set(run([deps, "--list", "all"]).stdout.split()) - {"npm"}
    readme = open(os.path.join(ROOT, "README.md")).read()
    check(build and build < every, "deps: the build set is a part of make check's",
          f"{sorted(build - every)}")
    check(not build & TEST_ONLY, "deps: make demo installs no test tool", f"{build & TEST_ONLY}")
    missing = sorted(p for p in build if not re.search(r"\b" + re.escape(p) + r"\b", readme))
    check(not missing, "deps: README.md lists the build dependencies", f"missing: {missing}")


def main():
    commands = check_man_pages()
    check_completion(commands)
    check_module_map()
    check_deps()
    check_version()
    print(f"check-docs: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
