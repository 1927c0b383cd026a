#!/usr/bin/env python3
"""The oracle suite: perch against gdb (and eu-stack), frame by frame, on real toolchains'
binaries and Debian's programs. Run by `make check-real` (part of `make check`).

For each case (tests/real/cases.py): build the program (or take Debian's), start it, wait until
each of its threads sleeps in a system call (/proc/PID/task/*/syscall unchanged over three
polls), run `perch dump -p PID`, then gdb (`thread apply all bt`'s frames, read with
tests/real/gdb_frames.py), one after the other, and compare each thread's frames as sequences of
normalised function names (compare.py lists the normalisations). Where gdb cannot be the oracle
(chromium; node threads running through JIT code, where gdb prints garbage after the first
JIT frame) eu-stack is, by return address.

A thread passes when perch names every function gdb names, in gdb's order (tail-call and
inline frames included), with no frame gdb does not have, and the same file:line where both
have one. A thread failing for a cause in cases.WAITS is XFAIL (the cause and its owner are
printed); one that passes despite its WAITS entry is XPASS. The suite fails on any FAIL.

  oracle.py [--perch PATH] [--out DIR] [--programs DIR] [--only GLOB[,GLOB]] [--list] [-v]
  PERCH=/path/to/perch oracle.py      (the same as --perch)
"""
import argparse
import ctypes
import fnmatch
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402
import compare  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GDB_SCRIPT = os.path.join(HERE, "gdb_frames.py")
PR_SET_PTRACER = 0x59616D61
PR_SET_PTRACER_ANY = ctypes.c_ulong(-1).value


class Log:
    def __init__(self, path, verbose):
        self.f = open(path, "w")
        self.verbose = verbose

    def __call__(self, msg="", detail=False):
        self.f.write(msg + "\n")
        self.f.flush()
        if not detail or self.verbose:
            print(msg, flush=True)


def allow_ptrace():
    """In the child before exec: let any process trace it (Yama ptrace_scope 1)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PTRACER, ctypes.c_ulong(PR_SET_PTRACER_ANY), 0, 0, 0)
    except OSError:
        pass
    os.setsid()


def task_states(pid):
    """{tid: (state, syscall line)} of a process, or None when it is gone."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    for t in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                st = f.read()
            with open("/proc/%d/task/%s/syscall" % (pid, t)) as f:
                sc = f.read().strip()
        except OSError:
            continue
        state = st[st.rfind(")") + 2]
        out[int(t)] = (state, sc)
    return out


def asleep(state):
    s, sc = state
    return s in "SD" and sc and not sc.startswith("running") and not sc.startswith("-1")


def settle(case, pid, deadline):
    """Wait until the process's threads sleep in system calls and stay so for three polls
    (100 ms apart). "all": every thread, at least case.threads of them; "most": the main
    thread and three quarters of at least case.threads threads. Returns a note or raises."""
    prev = None
    same = 0
    while time.monotonic() < deadline:
        st = task_states(pid)
        if st is None:
            raise RuntimeError("the program exited before it was ready")
        sleeping = {t: v for t, v in st.items() if asleep(v)}
        if case.settle == "all":
            ok = len(st) >= case.threads and len(sleeping) == len(st)
        else:
            ok = len(st) >= case.threads and pid in sleeping and \
                4 * len(sleeping) >= 3 * len(st)
        key = tuple(sorted(sleeping.items()))
        if ok and key == prev:
            same += 1
            if same >= 2:
                return "%d threads, %d asleep" % (len(st), len(sleeping))
        else:
            same = 0
        prev = key if ok else None
        time.sleep(0.1)
    st = task_states(pid) or {}
    raise RuntimeError("threads did not settle: %s" % ", ".join(
        "%d:%s:%s" % (t, v[0], v[1].split(" ")[0]) for t, v in sorted(st.items())))


def run_tool(argv, timeout, env=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        return None, "timed out after %d s: %s" % (timeout, " ".join(argv)), timeout
    return p, None, time.monotonic() - t0


def clean_env():
    env = dict(os.environ)
    for k in ("DEBUGINFOD_URLS", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME"):
        env.pop(k, None)
    return env


def jit_thread(g, maps):
    """True when gdb's stack for the thread has an unnamed frame outside every file-backed
    executable mapping: gdb went astray (after V8's builtins or JIT code, which have no CFI)
    and eu-stack is the oracle for that thread."""
    for f in g.frames:
        if f.name is None and f.pc:
            for lo, hi, path in maps:
                if lo <= f.pc < hi:
                    if not path or path.startswith("[anon") or path.startswith("/memfd:"):
                        return True
                    break
            else:
                return True
    return False


def read_maps(pid):
    out = []
    try:
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                parts = line.split(None, 5)
                if "x" not in parts[1]:
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi, parts[5].strip() if len(parts) > 5 else ""))
    except OSError:
        pass
    return out


class CaseRun:
    def __init__(self, case):
        self.case = case
        self.verdict = None
        self.results = []
        self.error = None
        self.note = None
        self.seconds = 0.0
        self.build_s = 0.0
        self.oracle_frames = 0
        self.named = 0
        self.seen = set()         # causes recognised in its differences
        self.used_waits = set()   # WAITS causes that explained a difference


def start_program(case, env):
    argv = [a.replace("{dir}", case.dir) for a in case.argv]
    errf = open(os.path.join(case.out, "stderr.txt"), "w")
    p = subprocess.Popen(argv, cwd=case.dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=errf, preexec_fn=allow_ptrace, env=env)
    return p


def stop_program(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            p.kill()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for s in (p.stdin, p.stdout):
        try:
            s.close()
        except OSError:
            pass


def wait_ready(p, deadline):
    """The program's 'ready PID' line (own programs), read with a deadline."""
    import select
    buf = b""
    while time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 0.2)
        if r:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError("the program exited before it printed ready")
            buf += chunk
            if b"ready" in buf:
                return
        if p.poll() is not None:
            raise RuntimeError("the program exited (%d) before it printed ready" % p.returncode)
    raise RuntimeError("no ready line in time")


_HELP = {}


def perch_help(perch):
    """`perch dump --help` (to pass options only a newer perch has)."""
    if perch not in _HELP:
        p = subprocess.run([perch, "dump", "--help"], capture_output=True, text=True)
        _HELP[perch] = p.stdout + p.stderr
    return _HELP[perch]


def snapshot(case, pid, perch, env):
    """perch, then gdb (then eu-stack when the case needs it): never two tracers at once."""
    out = {}
    extra = []
    if case.deep and "--max-frames" in perch_help(perch):
        extra = ["--max-frames", "0"]     # all frames: gdb prints all of them too
    p, err, t = run_tool([perch, "dump", "-p", str(pid)] + extra +
                         [a.replace("{dir}", case.dir) for a in case.perch_args], 120, env)
    if err or p.returncode != 0:
        raise RuntimeError("perch dump failed: %s" % (err or (p.stderr.strip()[-2000:] or
                                                            "exit %d" % p.returncode)))
    out["perch"] = p.stdout
    out["perch_err"] = p.stderr
    out["perch_s"] = t
    if case.oracle in ("gdb",):
        argv = ["gdb", "-q", "-batch", "-nx", "-iex", "set debuginfod enabled off",
                "-iex", "set auto-load no", "-ex", "set backtrace past-main on",
                "-ex", "set print thread-events off"]
        argv += [a.replace("{dir}", case.dir) for a in case.gdb_args]
        argv += ["-x", GDB_SCRIPT, "-p", str(pid)]
        p, err, t = run_tool(argv, 180, env)
        if err:
            raise RuntimeError("gdb: " + err)
        out["gdb"] = p.stdout
        out["gdb_err"] = p.stderr
        out["gdb_s"] = t
        if not compare.parse_gdb(p.stdout):
            raise RuntimeError("gdb printed no threads: %s" % p.stderr.strip()[-2000:])
    out["maps"] = read_maps(pid)
    if case.oracle == "eu-stack" or (case.oracle == "gdb" and needs_eu(case, out)):
        p, err, t = run_tool(["eu-stack", "-p", str(pid)], 120, env)
        if err:
            raise RuntimeError("eu-stack: " + err)
        out["eu"] = p.stdout
        out["eu_s"] = t
    return out


def needs_eu(case, out):
    g = compare.parse_gdb(out.get("gdb", ""))
    return any(jit_thread(t, out["maps"]) for t in g.values())


def compare_case(case, snap):
    """[(thread Result, oracle name)] for every thread either side has."""
    pt = compare.parse_perch(snap["perch"])
    results = []
    lang_rust = case.lang == "rust"
    if "gdb" in snap:
        gt = compare.parse_gdb(snap["gdb"])
        eu = compare.parse_eu_stack(snap.get("eu", ""))
        for tid in sorted(set(gt) | set(pt)):
            g = gt.get(tid)
            p = pt.get(tid)
            if g is None:
                r = compare.Result(tid, p.name)
                r.note = "gdb has no such thread"
                r.diffs.append(compare.Diff("extra", 0, p.frames[0] if p.frames else
                                            compare.Frame("??", 0), "thread gdb does not list"))
                results.append((r, "gdb"))
                continue
            if p is not None:
                g.name = p.name
            if tid in eu and jit_thread(g, snap["maps"]):
                e = eu[tid]
                e.name = g.name
                results.append((compare.compare_addrs(e, p), "eu-stack"))
                continue
            if case.lang == "go":
                compare.go_cut(g)
            if lang_rust:
                compare.rustify(g)
                if p is not None:
                    compare.rustify(p)
            results.append((compare.compare_gdb(g, p), "gdb"))
    else:
        eu = compare.parse_eu_stack(snap["eu"])
        for tid in sorted(set(eu) | set(pt)):
            e = eu.get(tid)
            p = pt.get(tid)
            if e is None:
                r = compare.Result(tid, p.name)
                r.note = "eu-stack has no such thread"
                results.append((r, "eu-stack"))
                continue
            e.name = p.name if p else None
            results.append((compare.compare_addrs(e, p), "eu-stack"))
    return results


def group_diffs(diffs):
    """Consecutive differences of the same kind, name and reason, as one line with a count."""
    out = []
    for d in diffs:
        if out and out[-1][0].what == d.what and out[-1][0].reason == d.reason and \
                out[-1][0].frame.key == d.frame.key and out[-1][-1].index + 1 == d.index:
            out[-1].append(d)
        else:
            out.append([d])
    lines = []
    for grp in out:
        if len(grp) == 1:
            lines.append(grp[0].show())
        else:
            lines.append("%s (x%d, to #%d)" % (grp[0].show(), len(grp), grp[-1].index))
    return lines


def run_case(case, args, log, env):
    cr = CaseRun(case)
    t0 = time.monotonic()
    case.dir = os.path.join(args.programs, case.name)
    case.out = os.path.join(args.out, case.name)
    os.makedirs(case.dir, exist_ok=True)
    os.makedirs(case.out, exist_ok=True)
    missing = [n for n in case.needs if not C.which(n)]
    if missing:
        cr.verdict = "SKIP"
        cr.note = "not installed: " + ", ".join(missing)
        return cr
    try:
        if case.build:
            case.build(case)
        else:
            C.prepare_prog(case)
        cr.build_s = time.monotonic() - t0
    except C.Skip as e:
        cr.verdict = "SKIP"
        cr.note = str(e)
        return cr
    except RuntimeError as e:
        cr.verdict = "FAIL"
        cr.error = str(e)
        return cr
    attempts = 2 if case.lang == "prog" else 1
    for attempt in range(attempts):
        p = start_program(case, env)
        try:
            deadline = time.monotonic() + case.timeout
            if case.ready:
                wait_ready(p, deadline)
            cr.note = settle(case, p.pid, deadline)
            snap = snapshot(case, p.pid, args.perch, env)
        except RuntimeError as e:
            cr.verdict = "FAIL"
            cr.error = str(e)
            stop_program(p)
            return cr
        finally:
            pass
        stop_program(p)
        for k in ("perch", "perch_err", "gdb", "gdb_err", "eu"):
            if k in snap:
                with open(os.path.join(case.out, k + ".txt"), "w") as f:
                    f.write(snap[k])
        results = compare_case(case, snap)
        if not any(r.moved for r, _ in results) or attempt == attempts - 1:
            break
        log("   (a thread ran between the snapshots: once more)", detail=True)
    cr.results = results
    cr.seconds = time.monotonic() - t0
    verdicts = []
    for r, oracle in results:
        case_cause = C.waits_for(case.name, r.name)
        r.oracle = oracle
        failing = [d for d in r.diffs if d.failing]
        causes = set()
        unexplained = 0
        # names perch leaves mangled cannot be aligned: in a thread with v0 differences the
        # others (an inline frame out of place, a shim) are put down to the same cause
        v0 = any(d.cause == "rust-v0" for d in failing)
        for d in failing:
            if v0 and d.cause is None and not case_cause:
                d.cause = "rust-v0"
            cause = d.cause if d.cause in C.PENDING else None
            if cause is None and case_cause in C.PENDING:
                cause = case_cause
                cr.used_waits.add(case_cause)
            if cause:
                causes.add(cause)
            else:
                unexplained += 1
        if r.moved:
            v = "MOVED"
        elif not failing:
            v = "XPASS" if case_cause in C.PENDING else "PASS"
        else:
            v = "FAIL" if unexplained else "XFAIL"
        r.verdict = v
        r.cause = ", ".join("%s (%s)" % (c, C.CAUSES[c][0]) for c in sorted(causes)) or \
            (case_cause if v == "XPASS" else None)
        for d in failing:
            if d.cause:
                cr.seen.add(d.cause)
        verdicts.append(v)
        if not r.moved:
            cr.oracle_frames += r.oracle_frames
            cr.named += r.named
    if "FAIL" in verdicts or not results:
        cr.verdict = "FAIL"
    elif "XFAIL" in verdicts:
        cr.verdict = "XFAIL"
    elif "XPASS" in verdicts:
        cr.verdict = "XPASS"
    else:
        cr.verdict = "PASS"
    if case.lang == "prog" and results and all(r.moved for r, _ in results):
        cr.verdict = "FAIL"
        cr.error = "every thread ran between the snapshots"
    return cr


def report_case(cr, log):
    c = cr.case
    log("== %-28s %-5s perch has %d of gdb's %d frames, %.1f s (build %.1f)  [%s]" % (
        c.name, cr.verdict, cr.named, cr.oracle_frames, cr.seconds, cr.build_s, c.desc))
    if cr.note:
        log("   " + cr.note, detail=cr.verdict != "SKIP")
    if cr.error:
        log("   error: " + cr.error)
    for r, oracle in cr.results:
        head = "   thread %-7d %-16s %-5s %s %d frames, perch has %d" % (
            r.tid, (r.name or "")[:16], r.verdict, oracle, r.oracle_frames, r.named)
        if r.cause and r.verdict == "XFAIL":
            head += "  [waits for: %s]" % r.cause
        elif r.cause and r.verdict == "FAIL":
            head += "  [known: %s; the others are not]" % r.cause
        elif r.cause and r.verdict == "XPASS":
            head += "  [passes: remove %s from cases.WAITS]" % r.cause
        log(head, detail=r.verdict == "PASS")
        # the console gets the differences of failing threads (the first few); the log
        # file gets every difference of every thread
        quiet = r.verdict != "FAIL"
        if r.note:
            log("      " + r.note, detail=quiet)
        lines = group_diffs(r.diffs)
        for i, line in enumerate(lines):
            log("      " + line, detail=quiet or i >= 8)
        if len(lines) > 8 and not log.verbose and not quiet:
            print("      ... %d more in the log" % (len(lines) - 8))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perch", default=os.environ.get("PERCH", "build/perch"))
    ap.add_argument("--out", default=os.environ.get("REAL_OUT", "build/real"),
                    help="the log, results and each case's dumps")
    ap.add_argument("--programs", default=None,
                    help="where the programs are built and run (default: --out); shared by "
                    "runs with different perch builds")
    ap.add_argument("--only", default=os.environ.get("REAL_ONLY", ""),
                    help="comma-separated case name globs")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.perch = os.path.abspath(args.perch)
    args.out = os.path.abspath(args.out)
    args.programs = os.path.abspath(args.programs or args.out)
    os.makedirs(args.out, exist_ok=True)

    cases = C.all_cases()
    if args.only:
        globs = args.only.split(",")
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.name, g) for g in globs)]
    if args.list:
        for c in cases:
            print("%-28s %s" % (c.name, c.desc))
        return 0
    if not os.access(args.perch, os.X_OK):
        print("oracle: no perch at %s (build it, or set PERCH=)" % args.perch)
        return 2
    log = Log(os.path.join(args.out, "oracle.log"), args.verbose)
    env = clean_env()
    t0 = time.monotonic()
    log("oracle: perch %s against gdb (%s) and eu-stack; %d cases; log %s" % (
        args.perch, C.tool_version(["gdb", "--version"]), len(cases),
        os.path.join(args.out, "oracle.log")))
    log("normalisations (tests/real/compare.py):", detail=True)
    for n in compare.NORMALISATIONS:
        log("  - " + n, detail=True)
    runs = []
    for case in cases:
        cr = run_case(case, args, log, env)
        if not cr.seconds:
            cr.seconds = 0.0
        report_case(cr, log)
        runs.append(cr)
    total = time.monotonic() - t0
    seen = set()
    for cr in runs:
        seen |= cr.seen
    for cr in runs:
        cause = None
        for r, _ in cr.results:
            cause = cause or C.waits_for(cr.case.name, r.name)
        if cause in C.PENDING and cr.verdict in ("PASS", "XPASS", "XFAIL") and \
                cause not in cr.used_waits:
            log("oracle: %s no longer needs its WAITS entry (%s): remove it" %
                (cr.case.name, cause))
    if not args.only:
        for c in sorted(C.PENDING - seen - {w[2] for w in C.WAITS}):
            log("oracle: cause %s (%s) no longer shows: remove it from cases.PENDING" %
                (c, C.CAUSES[c][0]))
    counts = {}
    for cr in runs:
        counts[cr.verdict] = counts.get(cr.verdict, 0) + 1
    log("")
    log("oracle: %s in %.0f s" % (", ".join("%d %s" % (n, v) for v, n in sorted(counts.items())),
                                  total))
    save_results(runs, args, total)
    return 1 if counts.get("FAIL") else 0


def save_results(runs, args, total):
    git = subprocess.run(["git", "-C", os.path.dirname(args.perch), "describe", "--always",
                          "--dirty"], capture_output=True, text=True).stdout.strip()
    data = {"date": time.strftime("%Y-%m-%d"), "seconds": round(total),
            "perch": args.perch, "perch_version": git or "?", "cases": []}
    for cr in runs:
        data["cases"].append({
            "name": cr.case.name, "group": cr.case.group, "desc": cr.case.desc,
            "verdict": cr.verdict, "oracle_frames": cr.oracle_frames, "named": cr.named,
            "error": cr.error, "note": cr.note,
            "threads": [{"tid": r.tid, "name": r.name, "verdict": r.verdict,
                         "oracle": o, "frames": r.oracle_frames, "named": r.named,
                         "cause": r.cause, "diffs": group_diffs(r.diffs)}
                        for r, o in cr.results]})
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(data, f, indent=1)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table(data))


def table(data):
    """The README's table: per case, how many of the oracle's frames perch has."""
    out = ["Oracle suite on %s (%d s; perch %s): per case, how many of the oracle's frames "
           "(all threads) perch has, by name (gdb) or by return address (eu-stack), and the "
           "threads whose stacks are the same in full." % (data["date"], data["seconds"],
                                                          data.get("perch_version", "?")),
           "",
           "| case | oracle | frames perch has | threads passing | verdict | open causes |",
           "|---|---|---|---|---|---|"]
    for c in data["cases"]:
        th = c["threads"]
        if c["verdict"] == "SKIP":
            out.append("| %s | - | - | - | SKIP | %s |" % (c["name"], c["note"] or ""))
            continue
        oracles = sorted({t["oracle"] for t in th}) or ["-"]
        npass = sum(1 for t in th if t["verdict"] in ("PASS", "XPASS"))
        causes = sorted({x.strip() for t in th if t["cause"] and t["verdict"] == "XFAIL"
                         for x in t["cause"].split(",")})
        out.append("| %s | %s | %d/%d | %d/%d | %s | %s |" % (
            c["name"], ", ".join(oracles), c["named"], c["oracle_frames"], npass, len(th),
            c["verdict"], "; ".join(causes)))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
