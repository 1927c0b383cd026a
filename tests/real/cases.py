"""The oracle suite's cases: what is built (and how) or started, and how it is compared.

A case is a program in a known blocked state. Programs of our own (tests/real/{c,cpp,go,rust})
are built here with the toolchains people use; the others are Debian's own binaries
(python3, perl, bash, sqlite3, node, chromium) driven into a blocking call by a script.

WAITS lists the differences still expected on main, per case and thread, with the cause and
the helper that owns it; oracle.py reports such a thread as XFAIL, and as XPASS once it passes.
"""
import fnmatch
import os
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------------ expected failures
# Known causes of differences: id -> (owner, what). compare.py recognises the first five in
# each difference by itself; the others are given per case in WAITS.
CAUSES = {
    "tailcall": ("dwarf", "tail-call frames gdb rebuilds from DW_TAG_call_site are missing"),
    "dwarf5-lines": ("dwarf", "DWARF 5 line tables: rows before a sequence's first "
                     "DW_LNS_set_file get file 0 (sem_wait.c:183 for sem_waitcommon.c:183)"),
    "rust-v0": ("dwarf", "Rust v0 symbols (_R...) are not demangled"),
    "frame-limit": ("elf", "stacks are cut at 256 frames without a marker"),
    "signal-pc": ("elf", "the signal trampoline is looked up at pc-1 (before __restore_rt) "
                  "and the interrupted frame's line comes from pc-1"),
    "lld": ("elf", "lld-linked modules get the wrong load bias: wrong names, stacks astray"),
    "no-cfi-ends": ("elf", "after frame-pointer unwinding through code without CFI the stack "
                    "ends in garbage or early instead of at _start/clone3"),
    "compressed-dwarf": ("dwarf", "DWARF in zstd-compressed sections is not read (no "
                         "file:line, no inline frames)"),
    "minidebuginfo-cfi": ("elf", "CFI in MiniDebugInfo (.gnu_debugdata's .debug_frame) is "
                          "not used: stacks end after the first frame in such a module"),
    "go-leaf": ("elf", "Go (.debug_frame): the caller of a frameless assembly leaf is lost; "
                "runtime.clone after runtime.mstart is missing"),
}

# Causes still expected on main. A difference with one of these causes (recognised, or given
# for its case in WAITS) makes its thread XFAIL instead of FAIL; remove a cause here when its
# fix is on main, and the suite fails wherever it still shows.
PENDING = {"tailcall", "dwarf5-lines", "rust-v0", "frame-limit", "signal-pc", "lld",
           "no-cfi-ends", "go-leaf", "compressed-dwarf", "minidebuginfo-cfi"}

# (case glob, thread glob, cause): every difference in those threads is put down to the cause.
WAITS = [
    ("*-lld-*", "*", "lld"),
    ("rust-lld", "*", "lld"),
    ("rust-path", "*", "lld"),
    ("gcc-bfd-O0-fp-nocfi-nodebug", "*", "no-cfi-ends"),
    ("chromium", "*", "no-cfi-ends"),
    ("go", "*", "go-leaf"),
    ("*-zstd", "*", "compressed-dwarf"),
    ("*-minidebuginfo", "*", "minidebuginfo-cfi"),
]


def waits_for(case, thread):
    """The cause WAITS gives a case's thread, or None."""
    for cglob, tglob, cause in WAITS:
        if fnmatch.fnmatchcase(case, cglob) and fnmatch.fnmatchcase(thread or "", tglob):
            return cause
    return None


# ------------------------------------------------------------------------ tools


def which(name):
    return shutil.which(name)


def tool_version(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.splitlines()[0].strip() if out else None


class Case:
    """One program in one build. @build(ctx, case) returns None or raises Skip."""

    def __init__(self, name, group, desc, lang, argv=None, build=None, threads=1,
                 oracle="gdb", needs=(), perch_args=(), gdb_args=(), stdin_data=None,
                 settle="all", ready=True, env=None, timeout=60):
        self.name = name
        self.group = group          # row of the README table
        self.desc = desc            # how it was built, in words
        self.lang = lang            # c, cpp, go, rust, prog
        self.argv = argv or []      # relative to the case's build dir when it starts with ./
        self.build = build
        self.threads = threads      # threads that must be asleep before the snapshot
        self.oracle = oracle        # "gdb", or "eu-stack" (return addresses)
        # programs that must be on PATH: the oracle's too
        self.needs = tuple(needs) + (("gdb",) if oracle == "gdb" else ()) + \
            (("eu-stack",) if oracle == "eu-stack" or settle == "most" else ())
        self.perch_args = list(perch_args)
        self.gdb_args = list(gdb_args)
        self.stdin_data = stdin_data
        self.settle = settle        # "all": every thread asleep; "most": main + 3/4 of them
        self.ready = ready          # the program prints "ready PID"
        self.env = env or {}
        self.timeout = timeout
        self.deep = False           # a thread deeper than perch's default frame limit
        self.dir = None             # where it is built and run
        self.out = None             # where its dumps go
        self.cmdline = None         # the build command(s), for the log


class Skip(Exception):
    pass


def run_build(cmds, cwd, log):
    """Run build commands (lists) in @cwd; raise with their output on failure."""
    for c in cmds:
        log.append(" ".join(c))
        p = subprocess.run(c, cwd=cwd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("build failed: %s\n%s%s" % (" ".join(c), p.stdout, p.stderr))


def up_to_date(out, sources, stamp_text, stamp):
    if not os.path.exists(out) or not os.path.exists(stamp):
        return False
    if open(stamp).read() != stamp_text:
        return False
    t = os.path.getmtime(out)
    return all(os.path.getmtime(s) <= t for s in sources)


def cached_build(case, out, sources, cmds_fn):
    """Build @out in case.dir with the commands cmds_fn() returns, unless nothing changed."""
    cmds = cmds_fn()
    text = "\n".join(" ".join(c) for c in cmds)
    stamp = os.path.join(case.dir, ".cmds")
    case.cmdline = text
    if up_to_date(os.path.join(case.dir, out), sources, text, stamp):
        return
    log = []
    run_build(cmds, case.dir, log)
    with open(stamp, "w") as f:
        f.write(text)


# ------------------------------------------------------------------------ C and C++

C_SRCS = [os.path.join(HERE, "c", f) for f in ("real_main.c", "real_chain.c", "real_block.c")]
CPP_SRCS = [os.path.join(HERE, "cpp", "real.cpp")]


def _strip_cmds(exe, mode):
    """Strip @exe like a distribution does and keep its debug info in a separate file:
    'debuglink': X.debug next to X, named by .gnu_debuglink (gdb and perch look next to the
    binary); 'buildid': sysroot/usr/lib/debug/.build-id/NN/REST.debug, found by the build ID
    only (gdb: debug-file-directory; perch: --sysroot)."""
    cmds = [["objcopy", "--only-keep-debug", exe, exe + ".debug"],
            ["strip", "--strip-all", "--remove-section=.comment", exe]]
    if mode == "minidebuginfo":
        # the symbol table and .debug_frame, xz-compressed into .gnu_debugdata (what Fedora
        # ships for symbols, and Android's only CFI for many libraries)
        return cmds + [["objcopy", "--strip-debug", "--keep-section=.debug_frame",
                        exe + ".debug", "mini"],
                       ["xz", "-f", "mini"],
                       ["objcopy", "--add-section", ".gnu_debugdata=mini.xz", exe],
                       ["rm", "-f", exe + ".debug", "mini.xz"]]
    if mode == "debuglink":
        cmds.append(["objcopy", "--add-gnu-debuglink=" + exe + ".debug", exe])
    else:
        cmds.append(["sh", "-c", 'id=$(readelf -n %s | sed -n "s/.*Build ID: //p"); '
                     'd=sysroot/usr/lib/debug/.build-id/$(echo $id | cut -c1-2); '
                     'mkdir -p $d && mv %s.debug $d/$(echo $id | cut -c3-).debug' % (exe, exe)])
    return cmds


def cc_takes(cc, flag):
    """Whether the compiler accepts @flag (a tiny compile and link)."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("int main(void) { return 0; }\n")
        p = subprocess.run([cc, "-g", flag, "-o", os.path.join(d, "t"), src],
                           capture_output=True)
        return p.returncode == 0


def c_case(name, cc, ld, opt, fp=None, cfi=True, pie=True, dwarf=None, gz=None, strip=None,
           debug=True, deep=0, cpp=False, group=None):
    """A build of the C (or C++) oracle program. @fp: True/False/None (compiler default);
    @cfi False: -fno-asynchronous-unwind-tables -fno-unwind-tables; @gz: zlib (compiler and
    linker) or zstd (linker only: neither gcc 12 nor clang 14 takes -gz=zstd); @strip:
    'debuglink' or 'buildid'."""
    cxx = {"gcc": "g++", "clang": "clang++"}[cc] if cpp else cc
    flags = ["-" + opt, "-pthread"]
    words = ["%s + %s" % (cxx, {"bfd": "GNU ld", "lld": "lld", "gold": "gold"}[ld]), "-" + opt]
    if debug:
        flags.append("-g")
    if dwarf:
        flags.append("-gdwarf-%d" % dwarf)
        words.append("DWARF %d" % dwarf)
    if fp is True:
        flags.append("-fno-omit-frame-pointer")
        words.append("-fno-omit-frame-pointer")
    elif fp is False:
        flags.append("-fomit-frame-pointer")
        words.append("-fomit-frame-pointer")
    if not cfi:
        flags += ["-fno-asynchronous-unwind-tables", "-fno-unwind-tables"]
        words.append("-fno-asynchronous-unwind-tables" + ("" if debug else " (no CFI at all)"))
    if not pie:
        flags += ["-fno-pie", "-no-pie"]
        words.append("non-PIE")
    if gz == "zlib":
        flags += ["-gz=zlib"]
        words.append("-gz=zlib")
    elif gz == "zstd":
        flags += ["-Wl,--compress-debug-sections=zstd"]
        words.append("--compress-debug-sections=zstd")
    elif gz == "cc-zstd":
        flags += ["-gz=zstd"]
        words.append("-gz=zstd")
    flags += ["-fuse-ld=" + ld, "-Wl,--build-id"]
    if strip:
        words.append({"debuglink": "stripped, .gnu_debuglink",
                      "buildid": "stripped, build-id debug file",
                      "minidebuginfo": "stripped, MiniDebugInfo (.gnu_debugdata: symbols "
                      "and .debug_frame, xz)"}[strip])
    if deep:
        words.append("%d-frame recursion" % deep)
    srcs = CPP_SRCS if cpp else C_SRCS
    exe = "prog"

    def build(case):
        if gz == "cc-zstd" and not cc_takes(cxx, "-gz=zstd"):
            raise Skip("%s does not take -gz=zstd (gcc 13 and clang 16 do)" % cxx)

        def cmds():
            c = [[cxx] + flags + ["-I" + os.path.join(HERE, "c"), "-o", exe] + srcs]
            if strip:
                c += _strip_cmds(exe, strip)
            return c
        cached_build(case, exe, srcs, cmds)

    case = Case(name, group or "%s %s" % ("C++" if cpp else "C", cxx + "+" + ld), ", ".join(words),
                "cpp" if cpp else "c", argv=["./" + exe] + ([str(deep)] if deep and not cpp
                                                              else []),
                build=build, threads=4 if cpp else (8 + (1 if deep else 0)),
                needs=(cxx, {"bfd": "ld.bfd", "lld": "ld.lld", "gold": "ld.gold"}[ld]))
    case.deep = deep > 0
    if strip == "buildid":
        case.perch_args = ["--sysroot", "{dir}/sysroot"]
        case.gdb_args = ["-iex", "set debug-file-directory {dir}/sysroot/usr/lib/debug:"
                         "/usr/lib/debug"]
    return case


def c_cases():
    C = c_case
    return [
        # gcc with GNU ld (Debian's default toolchain)
        C("gcc-bfd-O0", "gcc", "bfd", "O0", deep=3000),
        C("gcc-bfd-O2", "gcc", "bfd", "O2"),
        C("gcc-bfd-O3-nopie", "gcc", "bfd", "O3", pie=False),
        C("gcc-bfd-O2-fp", "gcc", "bfd", "O2", fp=True, deep=3000),
        C("gcc-bfd-O0-nofp", "gcc", "bfd", "O0", fp=False),
        C("gcc-bfd-O2-fp-nocfi", "gcc", "bfd", "O2", fp=True, cfi=False),
        C("gcc-bfd-O0-fp-nocfi-nodebug", "gcc", "bfd", "O0", fp=True, cfi=False, debug=False),
        C("gcc-bfd-O2-dwarf4", "gcc", "bfd", "O2", dwarf=4),
        C("gcc-bfd-O2-gz-zlib", "gcc", "bfd", "O2", gz="zlib"),
        C("gcc-bfd-O2-debuglink", "gcc", "bfd", "O2", strip="debuglink"),
        C("gcc-bfd-O2-buildid", "gcc", "bfd", "O2", strip="buildid"),
        C("gcc-bfd-O2-nocfi-minidebuginfo", "gcc", "bfd", "O2", cfi=False,
          strip="minidebuginfo"),
        # gcc with lld and gold
        C("gcc-lld-O0", "gcc", "lld", "O0"),
        C("gcc-lld-O2", "gcc", "lld", "O2"),
        C("gcc-lld-O3-nopie", "gcc", "lld", "O3", pie=False),
        C("gcc-gold-O0", "gcc", "gold", "O0"),
        C("gcc-gold-O2-gz-zstd", "gcc", "gold", "O2", gz="zstd"),
        C("gcc-bfd-O2-cc-zstd", "gcc", "bfd", "O2", gz="cc-zstd"),
        C("clang-lld-O2-cc-zstd", "clang", "lld", "O2", gz="cc-zstd"),
        C("gcc-gold-O2-dwarf4-nopie", "gcc", "gold", "O2", dwarf=4, pie=False),
        # clang with GNU ld, lld and gold
        C("clang-bfd-O0", "clang", "bfd", "O0"),
        C("clang-bfd-O2", "clang", "bfd", "O2"),
        C("clang-lld-O0", "clang", "lld", "O0"),
        C("clang-lld-O2", "clang", "lld", "O2", deep=3000),
        C("clang-lld-O3-nopie", "clang", "lld", "O3", pie=False),
        C("clang-lld-O2-fp-nocfi", "clang", "lld", "O2", fp=True, cfi=False),
        C("clang-lld-O2-dwarf4", "clang", "lld", "O2", dwarf=4),
        C("clang-lld-O2-gz-zlib", "clang", "lld", "O2", gz="zlib"),
        C("clang-lld-O2-debuglink", "clang", "lld", "O2", strip="debuglink"),
        C("clang-lld-O2-buildid", "clang", "lld", "O2", strip="buildid"),
        C("clang-gold-O2", "clang", "gold", "O2"),
        C("clang-gold-O0-nofp", "clang", "gold", "O0", fp=False),
        # C++: exceptions in flight, templates, std::function, lambdas
        C("g++-bfd-O0", "gcc", "bfd", "O0", cpp=True),
        C("g++-bfd-O2", "gcc", "bfd", "O2", cpp=True),
        C("clang++-lld-O2", "clang", "lld", "O2", cpp=True),
    ]


# ------------------------------------------------------------------------ Go and Rust

GO_SRCS = [os.path.join(HERE, "go", "main.go")]
RUST_SRCS = [os.path.join(HERE, "rust", "main.rs")]


def go_case():
    def build(case):
        gocache = os.path.join(case.dir, "gocache")

        def cmds():
            return [["env", "GOCACHE=" + gocache, "GOPATH=" + os.path.join(case.dir, "gopath"),
                     "GO111MODULE=off", "GOFLAGS=",
                     "go", "build", "-o", "prog"] + GO_SRCS]
        cached_build(case, "prog", GO_SRCS, cmds)

    # main, the locked reader thread, sysmon and the scheduler's idle threads
    return Case("go", "Go (go build)", "go build, default flags (%s)" %
                (tool_version(["go", "version"]) or "go"), "go", argv=["./prog"], build=build,
                threads=4, needs=("go",), settle="all")


def rustc_path():
    """Debian's rustc (what CI has) when present, else the one on PATH."""
    return "/usr/bin/rustc" if os.path.exists("/usr/bin/rustc") else which("rustc")


def rust_case(name, flags, words, rustc=None):
    def build(case):
        rc = rustc or rustc_path()
        if not rc:
            raise Skip("no rustc")

        def cmds():
            return [[rc, "-g"] + flags + ["-o", "prog"] + RUST_SRCS]
        cached_build(case, "prog", RUST_SRCS, cmds)

    ver = tool_version([rustc or rustc_path() or "rustc", "--version"]) or "rustc"
    return Case(name, "Rust (%s)" % ver.split(" (")[0], "%s, %s" % (ver.split(" (")[0], words),
                "rust", argv=["./prog"], build=build, threads=5, needs=("rustc",))


def rust_cases():
    cases = [
        rust_case("rust-O0", [], "-g, default linker, legacy mangling"),
        rust_case("rust-O2", ["-C", "opt-level=2"], "-g -C opt-level=2, default linker"),
        rust_case("rust-v0", ["-C", "opt-level=2", "-C", "symbol-mangling-version=v0"],
                  "-g -C opt-level=2 -C symbol-mangling-version=v0"),
        rust_case("rust-lld", ["-C", "opt-level=2", "-C", "link-arg=-fuse-ld=lld"],
                  "-g -C opt-level=2, linked by lld"),
    ]
    # a second rustc (rustup's) when the one on PATH is not Debian's: its default linker is
    # rust-lld from 1.90 on
    path_rustc = which("rustc")
    if path_rustc and os.path.realpath(path_rustc) != os.path.realpath(rustc_path() or ""):
        cases.append(rust_case("rust-path", [], "-g, rustc on PATH, its default linker",
                               rustc=path_rustc))
    return cases


# ------------------------------------------------------------------------ Debian's programs

def prog_version(argv):
    """'name version' of an installed program, for the log and the table."""
    out = tool_version(argv)
    if not out:
        return os.path.basename(argv[0])
    words = out.replace("(", " ").split()
    for w in words:
        w = w.lstrip("v").rstrip(",")
        if w[:1].isdigit() and "." in w:
            return "%s %s" % (os.path.basename(argv[0]), w)
    return os.path.basename(argv[0])


def prog_case(name, argv, threads, needs, version_argv, oracle="gdb", settle="all", desc=None,
              stdin_data=None, env=None, timeout=60):
    ver = prog_version(version_argv) if os.path.exists(version_argv[0]) else name
    return Case(name, ver, "%s: %s" % (ver, desc), "prog", argv=argv, threads=threads,
                oracle=oracle, needs=needs, settle=settle, ready=False, stdin_data=stdin_data,
                env=env, timeout=timeout)


PY_SCRIPT = r"""
import os, threading, time
r, w = os.pipe()
lock = threading.Lock(); lock.acquire()
def locked(n):
    return locked(n - 1) if n else lock.acquire()
def sleeper(n):
    return sleeper(n - 1) if n else time.sleep(100000)
threading.Thread(target=locked, args=(20,), name="locked").start()
threading.Thread(target=sleeper, args=(20,), name="sleeper").start()
def reader(n):
    return reader(n - 1) if n else os.read(r, 1)
reader(50)
"""

PERL_SCRIPT = r"""
pipe(my $r, my $w) or die;
sub f { my $n = shift; return $n ? f($n - 1) : sysread($r, my $b, 1); }
f(50);
"""

BASH_SCRIPT = r"""
f() { if (( $1 > 0 )); then f $(( $1 - 1 )); else read -r x; fi; }
f 30
"""

NODE_SCRIPT = r"""
const fs = require('fs');
function f(n) { return n ? f(n - 1) + 1 : fs.readSync(0, Buffer.alloc(1)); }
f(50);
"""


def prog_cases():
    cases = [
        prog_case("python3", ["/usr/bin/python3", "-c", PY_SCRIPT], 3, ("/usr/bin/python3",),
                  ["/usr/bin/python3", "--version"], desc="a 50-deep Python recursion in os.read on a pipe, "
                  "threads in Lock.acquire and time.sleep"),
        prog_case("perl", ["/usr/bin/perl", "-e", PERL_SCRIPT], 1, ("/usr/bin/perl",),
                  ["/usr/bin/perl", "-e", "print qq(perl $^V)"], desc="a 50-deep sub recursion in sysread on a pipe"),
        prog_case("bash", ["/usr/bin/bash", "-c", BASH_SCRIPT], 1, ("/usr/bin/bash",),
                  ["/usr/bin/bash", "--version"], desc="a 30-deep shell function recursion in the read builtin"),
        prog_case("sqlite3", ["/usr/bin/sqlite3", ":memory:", ".read {dir}/a.sql"], 1,
                  ("/usr/bin/sqlite3",), ["/usr/bin/sqlite3", "--version"],
                  desc="the shell's .read a.sql -> .read b.sql -> .read of a FIFO "
                  "nobody opens for writing (open blocks)"),
        prog_case("node", ["/usr/bin/node", "-e", NODE_SCRIPT], 1, ("/usr/bin/node",),
                  ["/usr/bin/node", "--version"], settle="most",
                  desc="a 50-deep JavaScript recursion in fs.readSync on a pipe; "
                  "V8 and libuv threads idle. The main thread runs through V8's generated code, "
                  "where gdb prints garbage: it is compared with eu-stack by return address"),
        prog_case("chromium", ["/usr/bin/chromium", "--headless", "--no-sandbox",
                               "--disable-gpu", "--disable-background-networking",
                               "--disable-component-update", "--disable-sync",
                               "--no-first-run", "--user-data-dir={dir}/profile",
                               "--remote-debugging-port=0", "about:blank"], 10,
                  ("/usr/bin/chromium",), ["/usr/bin/chromium", "--version"],
                  oracle="eu-stack", settle="most", timeout=120,
                  desc="headless on about:blank, browser process; gdb "
                  "cannot unwind it, so eu-stack is the oracle, by return address"),
    ]
    return cases


def all_cases():
    return c_cases() + [go_case()] + rust_cases() + prog_cases()


def prepare_prog(case):
    """Files a Debian-program case needs in its directory."""
    if case.name == "sqlite3":
        fifo = os.path.join(case.dir, "fifo")
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
        with open(os.path.join(case.dir, "a.sql"), "w") as f:
            f.write(".read %s/b.sql\n" % case.dir)
        with open(os.path.join(case.dir, "b.sql"), "w") as f:
            f.write(".read %s\n" % fifo)
    if case.name == "chromium":
        shutil.rmtree(os.path.join(case.dir, "profile"), ignore_errors=True)
