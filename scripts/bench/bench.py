#!/usr/bin/env python3
"""make bench (issue 3): perch against perf, eu-stack and gdb, every figure measured in this run.

Method (docs: docs/design/perf-baseline.md, section 1): every timed run first waits for
the machine to be idle (idle gate: under 6 % busy over two 0.5 s windows, giving up after
--gate-max s), records other_s (CPU seconds used by anything but the target, the tool and this
driver during the run) and leaves runs with other_s >= --other-max out of the medians when a
clean run of the same configuration exists. Slowdown is the target's own work time (wall time
of a fixed amount of work, measured by the target) against unprofiled runs in this same bench
run; configurations are run round-robin so drift hits them alike.

Writes the table to stdout and OUT/bench.txt, everything (every run) to OUT/bench.json.
Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = time.monotonic()
HZ_TICK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print("bench: [%5.1fs] %s" % (time.monotonic() - T0, msg), file=sys.stderr, flush=True)


def elapsed():
    return time.monotonic() - T0


# ---------------------------------------------------------------- machine state


def cpu_times():
    """(busy, total) seconds from /proc/stat's first line; busy = user+nice+system+irq+softirq."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = v[0] + v[1] + v[2] + v[5] + v[6]
    total = sum(v[:8])
    return busy / HZ_TICK, total / HZ_TICK


def idle_gate(max_wait, window=0.5, limit=0.06):
    """Wait until two consecutive windows are under @limit busy. Returns (passed, waited_s)."""
    start = time.monotonic()
    good = 0
    b0, t0 = cpu_times()
    while True:
        time.sleep(window)
        b1, t1 = cpu_times()
        frac = (b1 - b0) / (t1 - t0) if t1 > t0 else 1.0
        b0, t0 = b1, t1
        good = good + 1 if frac < limit else 0
        if good >= 2:
            return True, time.monotonic() - start
        if time.monotonic() - start >= max_wait:
            return False, time.monotonic() - start


def rusage_s(ru):
    return ru.ru_utime + ru.ru_stime


def self_cpu():
    t = os.times()
    return t.user + t.system


def read_status(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])  # kB
    except OSError:
        pass
    return None


# ---------------------------------------------------------------- processes


class Proc:
    """A child we reap ourselves with wait4, to get its rusage."""

    def __init__(self, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=None):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env,
                                  start_new_session=True)
        self.pid = self.p.pid
        self.status = None
        self.ru = None
        self.t_start = time.monotonic()
        self.t_end = None

    def wait(self, timeout=None):
        """Reap; returns (exit status, rusage). Output pipes must be drained by the caller
        (small outputs only: stderr summaries, result lines)."""
        if self.status is not None:
            return self.status, self.ru
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pid, st, ru = os.wait4(self.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.monotonic() >= deadline:
                self.kill()
                pid, st, ru = os.wait4(self.pid, 0)
                break
            time.sleep(0.005)
        self.t_end = time.monotonic()
        self.status = os.waitstatus_to_exitcode(st)
        self.p.returncode = self.status
        self.ru = ru
        return self.status, ru

    def kill(self, sig=signal.SIGKILL):
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def alive(self):
        if self.status is not None:
            return False
        pid, st, ru = os.wait4(self.pid, os.WNOHANG)
        if pid:
            self.t_end = time.monotonic()
            self.status = os.waitstatus_to_exitcode(st)
            self.p.returncode = self.status
            self.ru = ru
            return False
        return True

    def out(self):
        o = self.p.stdout.read().decode(errors="replace") if self.p.stdout else ""
        e = self.p.stderr.read().decode(errors="replace") if self.p.stderr else ""
        return o, e


def start_target(argv):
    """Start a target and wait for its "ready PID" line."""
    t = Proc(argv, stderr=subprocess.DEVNULL)
    line = t.p.stdout.readline().decode()
    if not line.startswith("ready "):
        t.kill()
        t.wait()
        raise RuntimeError("target %s did not start: %r" % (argv, line))
    return t


def parse_kv(text):
    """'work_s 1.2 cpu_s 1.1' lines -> dict of floats (last line wins)."""
    d = {}
    for line in text.splitlines():
        w = line.split()
        for i in range(0, len(w) - 1, 2):
            try:
                d[w[i]] = float(w[i + 1])
            except ValueError:
                pass
    return d


# ---------------------------------------------------------------- perch summary

SUMMARY_RES = {
    "head": re.compile(r"recorded process \d+ for ([\d.]+) s at ([\d.]+) Hz"),
    "samples": re.compile(r"samples: (\d+)\s+\((\d+) stops, (?:\d+ of blocked threads read from "
                          r"/proc, )?(\d+) of blocked threads left alone, "
                          r"(\d+) credited[^;\n]*(?:; (\d+) of threads waiting for a CPU)?"),
    # --mode cpu: threads seen on a CPU at a tick, stops where perch did not take the CPU and
    # those not counted, runnable threads waiting
    "cpu_samples": re.compile(r"samples: (\d+)\s+\((\d+) times a thread was on a CPU[^;]*; (\d+) "
                              r"stops where perch did not take the CPU, (\d+) counted[^;]*; (\d+) "
                              r"runnable threads waiting"),
    "ticks": re.compile(r"threads seen: (\d+)\s+ticks: (\d+).*?missed ticks: (\d+)"),
    "stop": re.compile(r"stop window per sample: p50 (\d+) us, p99 (\d+) us"),
    "tick_late": re.compile(r"states read p50 (\d+) us, p99 (\d+) us after the tick; timer set "
                            r"(\d+) us early"),
    "unwind": re.compile(r"unwound to root: ([\d.]+)%.*?fallback ([\d.]+)%.*?stopped early "
                         r"([\d.]+)%,(?: cut at \d+ frames [\d.]+%,)? ([\d.]+) frames, "
                         r"unwind ([\d.]+) us, symbolize ([\d.]+) us"),
    "verify": re.compile(r"verify: (\d+) of (\d+) samples differ"),
    "java": re.compile(r"Java frames \(interpreted\): ([\d.]+) per sample, named in ([\d.]+) us"),
    "errors": re.compile(r"errors: registers (\d+), stack copy (\d+), dropped \(perch behind\) "
                         r"(\d+)"),
}


def parse_perch_summary(text):
    s = {}
    m = SUMMARY_RES["head"].search(text)
    if m:
        s["elapsed_s"], s["hz"] = float(m[1]), float(m[2])
    m = SUMMARY_RES["samples"].search(text)
    if m:
        s["samples"], s["stops"], s["left_alone"], s["credited"] = map(int, m.groups()[:4])
        s["unmoved"] = int(m[5] or 0)  # runnable threads that had not run: no stop
    m = SUMMARY_RES["cpu_samples"].search(text)
    if m:
        s["samples"], oncpu, unseen, counted, s["waiting"] = map(int, m.groups())
        s["stops"], s["not_counted"] = oncpu + unseen, unseen - counted
    m = SUMMARY_RES["ticks"].search(text)
    if m:
        s["threads_seen"], s["ticks"], s["missed_ticks"] = map(int, m.groups())
    m = SUMMARY_RES["stop"].search(text)
    if m:
        s["stop_p50_us"], s["stop_p99_us"] = map(int, m.groups())
    m = SUMMARY_RES["tick_late"].search(text)
    if m:
        s["tick_p50_us"], s["tick_p99_us"], s["lead_us"] = map(int, m.groups())
    m = SUMMARY_RES["unwind"].search(text)
    if m:
        (s["to_root_pct"], s["fp_fallback_pct"], s["stopped_early_pct"], s["frames"],
         s["unwind_us"], s["symbolize_us"]) = map(float, m.groups())
    m = SUMMARY_RES["verify"].search(text)
    if m:
        s["verify_differ"], s["verify_samples"] = map(int, m.groups())
    m = SUMMARY_RES["java"].search(text)
    if m:
        s["java_frames"], s["java_us"] = map(float, m.groups())
    m = SUMMARY_RES["errors"].search(text)
    if m:
        s["err_regs"], s["err_stack"], s["dropped"] = map(int, m.groups())
    m = re.search(r"idle gate: (\d+) of .*\((\d+) rescans\)", text)
    if m:
        s["gated"], s["rescans"] = map(int, m.groups())
    m = re.search(r"flight recorder: .*?(\d+) windows saved on triggers.*at most (\d+) samples "
                  r"held", text)
    if m:
        s["ring_saves"], s["ring_held_max"] = map(int, m.groups())
    return s


def read_folded(path):
    stacks = []
    try:
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                stack, _, n = line.rpartition(" ")
                try:
                    stacks.append((stack.split(";"), int(n)))
                except ValueError:
                    pass
    except OSError:
        pass
    return stacks


# ---------------------------------------------------------------- one timed run


class Bench:
    def __init__(self, args):
        self.a = args
        self.bin = args.bin
        self.perch = args.perch
        self.tmp = tempfile.mkdtemp(prefix="perch-bench-")
        # perch's symbolization cache starts empty: the first perch run of each section is
        # cold, the others warm (perch-nocache rows turn it off)
        os.environ["PERCH_CACHE_DIR"] = os.path.join(self.tmp, "cache")
        # the rows read perch record's whole summary (its default is the first lines), and a
        # run short of ticks is a figure here (ticks served), not a failure (exit 4)
        os.environ.setdefault("PERCH_SUMMARY", "full")
        os.environ.setdefault("PERCH_ALLOW_PARTIAL", "1")
        self.runs = []  # every timed run, for the JSON
        self.rejected = 0
        self.gate_failed = 0

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def b(self, name):
        return os.path.join(self.bin, name)

    def timed_run(self, label, target_argv, tool, nthreads=1):
        """Start the target, attach @tool, wait for both. tool: None, ("perch", hz),
        ("perf", mode), ("loop", "eu-stack"|"gdb")."""
        passed, waited = idle_gate(self.gate_max())
        if not passed:
            self.gate_failed += 1
        busy0, _ = cpu_times()
        self0 = self_cpu()
        tgt = start_target(target_argv)
        tool_proc = None
        run = {"label": label, "tool": list(tool) if tool else None, "gate_passed": passed,
               "gate_wait_s": round(waited, 2)}
        tool_cpu = 0.0
        folded = os.path.join(self.tmp, "out.folded")
        perfdata = os.path.join(self.tmp, "perf.data")
        if tool and tool[0] == "perch":
            tool_proc = Proc([self.perch, "record", "-p", str(tgt.pid), "-F", str(tool[1]),
                              *tool[2:], "-o", folded], stdout=subprocess.DEVNULL)
        elif tool and tool[0] == "perf":
            cg = ["-g"] if tool[1] == "fp" else ["--call-graph", "dwarf"]
            tool_proc = Proc(["perf", "record", "-e", "cpu-clock", "-F",
                              str(tool[2]), *cg, "-o", perfdata, "-p", str(tgt.pid)],
                             stdout=subprocess.DEVNULL)
        elif tool and tool[0] == "loop":
            snaps, loop_t0 = 0, time.monotonic()
            cmd = self.snapshot_cmd(tool[1], tgt.pid)
            while tgt.alive():
                sp = Proc(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, ru = sp.wait(timeout=30)
                tool_cpu += rusage_s(ru)
                if sp.status == 0:
                    snaps += 1
            run["snapshots"] = snaps
            run["snapshots_per_s"] = snaps / (time.monotonic() - loop_t0)
        st, ru = tgt.wait(timeout=120)
        out, _ = tgt.out()
        run.update(parse_kv(out))
        run["target_cpu_s"] = rusage_s(ru)
        if tool_proc:
            _, pru = tool_proc.wait(timeout=60)
            _, err = tool_proc.out()
            tool_cpu = rusage_s(pru)
            run["tool_maxrss_kb"] = pru.ru_maxrss
            run["tool_status"] = tool_proc.status
            if tool[0] == "perch":
                run["perch"] = parse_perch_summary(err)
                if not run["perch"]:
                    run["perch_stderr"] = err[-2000:]
            else:
                m = re.search(r"\((\d+) samples\)", err)
                run["perf_samples"] = int(m[1]) if m else None
                m = re.search(r"wrote ([\d.]+) MB", err)
                run["perf_data_mb"] = float(m[1]) if m else None
                if not m:
                    run["perf_stderr"] = err[-1000:]
        busy1, _ = cpu_times()
        run["tool_cpu_s"] = tool_cpu
        run["other_s"] = round((busy1 - busy0) - run["target_cpu_s"] - tool_cpu
                               - (self_cpu() - self0), 3)
        run["clean"] = run["other_s"] < self.a.other_max
        if not run["clean"]:
            self.rejected += 1
        for p in (folded, perfdata):
            if os.path.exists(p):
                os.unlink(p)
        self.runs.append(run)
        log("%-22s work_s %s other_s %.2f%s%s" % (
            label, "%.3f" % run["work_s"] if "work_s" in run else "?", run["other_s"],
            "" if passed else " (gate gave up)",
            "  stop p50/p99 %s/%s us" % (run["perch"].get("stop_p50_us"),
                                         run["perch"].get("stop_p99_us"))
            if "perch" in run else ""))
        return run

    def gate_max(self):
        # the gate waits less when the budget runs short
        left = self.a.budget - elapsed()
        return max(0.5, min(self.a.gate_max, left / 60))

    def snapshot_cmd(self, tool, pid, cache=None):
        if tool == "eu-stack":
            return ["eu-stack", "-p", str(pid)]
        if tool == "eu-stack -il":  # with inlines and file:line, like perch dump
            return ["eu-stack", "-i", "-l", "-p", str(pid)]
        if tool == "gdb":
            return ["gdb", "-p", str(pid), "-batch", "-nx", "-iex", "set debuginfod enabled off",
                    "-ex", "thread apply all bt"]
        if tool == "perch-nocache":  # every run reads the DWARF again
            return ["env", "PERCH_CACHE_DIR=off", self.perch, "dump", "-p", str(pid)]
        if cache:  # a symbol cache of this bench's own
            return ["env", "PERCH_CACHE_DIR=" + cache, self.perch, "dump", "-p", str(pid)]
        return [self.perch, "dump", "-p", str(pid)]

    # ------------------------------------------------------------ sections

    def slowdown(self, name, target_argv, nthreads, rounds, deadline):
        """Round-robin: base, perch 100/1000, perf fp/dwarf; then one eu-stack and gdb loop."""
        configs = [("unprofiled", None), ("perch -F 100", ("perch", 100)),
                   ("perch -F 1000", ("perch", 1000)),
                   ("perf -F 1000 -g", ("perf", "fp", 1000)),
                   ("perf -F 1000 dwarf", ("perf", "dwarf", 1000))]
        res = {c[0]: [] for c in configs}
        for r in range(rounds):
            t_round = time.monotonic()
            for label, tool in configs:
                res[label].append(self.timed_run("%s %s" % (name, label), target_argv, tool,
                                                 nthreads))
            took = time.monotonic() - t_round
            # rounds after the first only while they fit this section's share of the budget
            if r + 1 < rounds and elapsed() + took > deadline:
                log("%s: stopping after %d rounds (time budget)" % (name, r + 1))
                break
        # one more run of the configurations that have no clean run, while time allows
        for label, tool in configs:
            if not any(x["clean"] for x in res[label]) and elapsed() + 6 < deadline:
                res[label].append(self.timed_run("%s %s (again)" % (name, label), target_argv,
                                                 tool, nthreads))
        for label, tool in (("eu-stack loop", ("loop", "eu-stack")),
                            ("gdb loop", ("loop", "gdb"))):
            res[label] = [self.timed_run("%s %s" % (name, label), target_argv, tool, nthreads)]
        return summarize_slowdown(res, nthreads)

    def accuracy(self, hz, secs):
        passed, waited = idle_gate(self.gate_max())
        busy0, _ = cpu_times()
        self0 = self_cpu()
        tgt = start_target([self.b("bench-split"), "-d", "300", "-s", str(secs)])
        folded = os.path.join(self.tmp, "split.folded")
        pp = Proc([self.perch, "record", "-p", str(tgt.pid), "-F", str(hz), "-o", folded],
                  stdout=subprocess.DEVNULL)
        _, tru = tgt.wait(timeout=secs + 60)
        truth = parse_kv(tgt.out()[0])
        _, pru = pp.wait(timeout=60)
        summ = parse_perch_summary(pp.out()[1])
        busy1, _ = cpu_times()
        a = b = other = 0
        for frames, n in read_folded(folded):
            if "split_a" in frames:
                a += n
            elif "split_b" in frames:
                b += n
            else:
                other += n
        share = 100.0 * a / (a + b) if a + b else None
        p = (truth.get("truth_a") or 0) / 100
        se = 100 * (p * (1 - p) / (a + b)) ** 0.5 if a + b else None
        res = {"hz": hz, "seconds": secs, "truth_a_pct": truth.get("truth_a"),
               "perch_a_pct": share, "samples_a": a, "samples_b": b, "samples_other": other,
               "diff_points": (share - truth["truth_a"]) if share is not None and
               "truth_a" in truth else None,
               "binomial_se_points": se, "perch": summ, "gate_passed": passed,
               "other_s": round((busy1 - busy0) - rusage_s(tru) - rusage_s(pru)
                                - (self_cpu() - self0), 3)}
        log("accuracy %d Hz: truth %.2f perch %s (%d+%d samples)" % (
            hz, truth.get("truth_a", -1), "%.2f" % share if share is not None else "?", a, b))
        return res

    def pinned(self, cpu):
        """taskset prefix that puts a process on @cpu, or [] on a 1-CPU machine."""
        if (os.cpu_count() or 1) < 2 or not shutil.which("taskset"):
            return []
        return ["taskset", "-c", str(cpu)]

    def syscall_bias(self, hz, secs, extra):
        """bench-syscall (user work + cached preads, its own truth) on CPU 0, perch on CPU 1:
        perch's share of sys_io() among the samples in sys_user() or sys_io() against the
        target's truth (issue 15). @extra: more perch options (--no-cpu-hold)."""
        passed, _ = idle_gate(self.gate_max())
        tgt = start_target(self.pinned(0) + [self.b("bench-syscall"), "-d", "300", "-s",
                                             str(secs)])
        folded = os.path.join(self.tmp, "syscall.folded")
        pp = Proc(self.pinned(1) + [self.perch, "record", "-p", str(tgt.pid), "-F", str(hz),
                                    "--mode", "cpu", *extra, "-o", folded],
                  stdout=subprocess.DEVNULL)
        tgt.wait(timeout=secs + 60)
        truth = parse_kv(tgt.out()[0])
        pp.wait(timeout=60)
        err = pp.out()[1]
        io = user = 0
        for frames, n in read_folded(folded):
            if "sys_io" in frames:
                io += n
            elif "sys_user" in frames:
                user += n
        share = 100.0 * io / (io + user) if io + user else None
        p = (truth.get("truth_io") or 0) / 100
        m = re.search(r"system-call bias: (\d+) of (\d+) running-thread samples", err)
        res = {"hz": hz, "seconds": secs, "options": " ".join(extra), "gate_passed": passed,
               "truth_io_pct": truth.get("truth_io"), "perch_io_pct": share,
               "samples": io + user,
               "diff_points": share - truth["truth_io"] if share is not None and
               "truth_io" in truth else None,
               "binomial_se_points": 100 * (p * (1 - p) / (io + user)) ** 0.5
               if io + user else None,
               "held": int(m[1]) if m else None, "running_samples": int(m[2]) if m else None,
               "perch": parse_perch_summary(err)}
        log("syscall bias %d Hz %s: truth %.2f perch %s (%d samples)" % (
            hz, res["options"] or "(default)", truth.get("truth_io", -1),
            "%.2f" % share if share is not None else "?", io + user))
        return res

    def states(self, hz, secs, specs, competitor):
        """bench-duty (threads with duty cycles, their own R truth) recorded in wall mode;
        @competitor: a busy process beside it. Returns per-thread R% of perch vs truth."""
        passed, _ = idle_gate(self.gate_max())
        comp = None
        if competitor:
            comp = Proc([self.b("bench-duty"), str(secs + 3), "busy"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # perch launches it, so that the recording covers the window of the threads' truth
        # (their whole run; attached for part of it, the two differed by chance alone)
        pp = Proc([self.perch, "record", "-F", str(hz), "-o", os.path.join(self.tmp, "duty.folded"),
                   "--", self.b("bench-duty"), str(secs), *specs])
        pp.wait(timeout=secs + 60)
        out, err = pp.out()
        if comp:
            comp.kill()
            comp.wait()
        truth = {}
        for line in out.splitlines():
            w = line.split()
            if w and w[0] == "truth":
                kv = dict(zip(w[3::2], w[4::2]))
                truth[w[1]] = float(kv["r_pct"])
        rows = []
        table = err[err.find("threads by CPU"):] if "threads by CPU" in err else ""
        for line in table.splitlines():
            w = line.split()
            # "perch:  TID  NAME  CPU%  R%  S%  D%  T%  other%"
            if len(w) >= 5 and w[2] in truth:
                try:
                    r = float(w[4])
                except ValueError:
                    continue
                rows.append({"thread": w[2], "spec": specs[int(w[2][1:])],
                             "truth_r_pct": truth[w[2]], "perch_r_pct": r,
                             "diff_points": r - truth[w[2]]})
        res = {"hz": hz, "seconds": secs, "competitor": competitor, "gate_passed": passed,
               "threads": rows, "perch": parse_perch_summary(err)}
        log("states %d Hz%s: %s" % (hz, " +busy" if competitor else "", ", ".join(
            "%s %.1f/%.1f" % (r["spec"], r["perch_r_pct"], r["truth_r_pct"]) for r in rows)))
        return res

    def latency(self, argv, n, timeout=60):
        """Wall time of @argv run @n times (median, min, max, ms) and its last output."""
        return self.latencies({"": argv}, {"": n}, timeout)[""]

    def latencies(self, cmds, ns, timeout=60):
        """latency() of several commands run in turns (one run of each per round), so that
        the load of the machine weighs on all of them alike: {name: (result, last output)}."""
        ts = {k: [] for k in cmds}
        cpu = {k: [] for k in cmds}
        fails = {k: 0 for k in cmds}
        outs = {k: "" for k in cmds}
        for r in range(max(ns.values())):
            for k, argv in cmds.items():
                if r >= ns[k]:
                    continue
                env = None
                if argv[0] == "env":  # set here: env(1)'s own start is not the tool's time
                    env, i = dict(os.environ), 1
                    while "=" in argv[i]:
                        name, value = argv[i].split("=", 1)
                        env[name] = value
                        i += 1
                    argv = argv[i:]
                t0 = time.monotonic()
                with tempfile.TemporaryFile() as fo:
                    p = subprocess.Popen(argv, stdout=fo, stderr=subprocess.DEVNULL, env=env)
                    timer = threading.Timer(timeout, p.kill)  # a hung tool fails its run
                    timer.start()
                    try:
                        _, status, ru = os.wait4(p.pid, 0)
                    except BaseException:
                        p.kill()
                        raise
                    finally:
                        timer.cancel()
                    p.returncode = os.waitstatus_to_exitcode(status)
                    ts[k].append((time.monotonic() - t0) * 1000)
                    cpu[k].append((ru.ru_utime + ru.ru_stime) * 1000)
                    fo.seek(0)
                    outs[k] = fo.read().decode(errors="replace")
                if p.returncode != 0:
                    fails[k] += 1
        # cpu_ms: the command's own user + system time, which other load disturbs less than
        # the wall time (a busy machine delays the stops of the target's busy threads)
        return {k: ({"median_ms": statistics.median(t), "min_ms": min(t), "max_ms": max(t),
                     "cpu_ms": round(statistics.median(cpu[k]), 2),
                     "n": len(t), "failed": fails[k], "all_ms": [round(x, 2) for x in t]},
                    outs[k]) for k, t in ts.items()}

    def dump(self):
        """perch dump warm (a private symbol cache, filled by one dump first) and cold
        (PERCH_CACHE_DIR=off: every run reads the DWARF), eu-stack with and without
        file:line, gdb, run in turns on the same 5-thread process."""
        idle_gate(self.gate_max())
        tgt = start_target([self.b("bench-chain"), "-t", "4", "-f", "-d", "0"])
        time.sleep(0.3)
        res = {}
        cache = tempfile.mkdtemp(prefix="perch-bench-cache-")
        try:
            tools = (("perch", self.a.dump_n), ("perch-nocache", self.a.dump_n),
                     ("eu-stack", self.a.dump_n), ("eu-stack -il", self.a.dump_n),
                     ("gdb", max(2, self.a.dump_n // 3)))
            cmds = {t: self.snapshot_cmd(t, tgt.pid, cache) for t, _ in tools}
            subprocess.run(cmds["perch"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60)  # fills the cache: the runs measured are warm
            got = self.latencies(cmds, dict(tools))
            for tool, n in tools:
                r, out = got[tool]
                # frames named leaf: one per busy worker when the stacks are complete
                r["threads_in_leaf"] = len(re.findall(r"\bleaf\b", out))
                r["f27_frames"] = len(re.findall(r"\bf27\b", out))
                res[tool] = r
                log("dump %-8s median %.1f ms (n=%d, failed %d)" % (tool, r["median_ms"], n,
                                                                     r["failed"]))
        finally:
            tgt.kill()
            tgt.wait()
            shutil.rmtree(cache, ignore_errors=True)
        return res

    def first_sample(self):
        """Time to the first symbolized sample: perch record -d 0.001 on a process with 120
        libraries whose call chain crosses all of them (upper bound: includes attach, one
        tick, unwinding, symbolizing, writing the output and detaching); 1 library as the
        control. perch dump, eu-stack and gdb on the same process for reference."""
        res = {}
        for nlibs in (self.a.nlibs, 1):
            idle_gate(self.gate_max())
            tgt = start_target([self.b("bench-libs"), "-l", str(nlibs), "-s", "120"])
            time.sleep(0.3)
            r = {"libraries": nlibs}
            try:
                with open("/proc/%d/maps" % tgt.pid) as f:
                    r["maps_lines"] = sum(1 for _ in f)
                folded = os.path.join(self.tmp, "libs.folded")
                ts, named, samples, work = [], [], [], []
                for _ in range(self.a.first_n):
                    # -F 10 -d 0.1: the tick at attach is the only one, unless the stop
                    # comes late; retried with a longer duration when no stop was collected
                    for dur in ("0.1", "0.3", "1"):
                        t0 = time.monotonic()
                        p = subprocess.run([self.perch, "record", "-p", str(tgt.pid), "-F",
                                            "10", "-d", dur, "-o", folded],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                           timeout=120)
                        t = (time.monotonic() - t0) * 1000
                        s = parse_perch_summary(p.stderr.decode(errors="replace"))
                        if s.get("stops"):
                            break
                    ts.append(t)
                    samples.append(s.get("stops", 0))
                    work.append((s.get("unwind_us", 0) + s.get("symbolize_us", 0)) / 1000 *
                                s.get("stops", 0))
                    libs = set()
                    for frames, n in read_folded(folded):
                        libs.update(f for f in frames if f.startswith("bench_lib_"))
                    named.append(len(libs))
                r["record_first_sample_ms"] = statistics.median(ts)
                r["record_all_ms"] = [round(t, 1) for t in ts]
                r["stops_per_run"] = samples
                r["unwind_symbolize_ms"] = statistics.median(work)
                r["record_duration_s"] = dur
                r["lib_frames_named"] = named
                for tool, n in (("perch dump", self.a.first_n), ("eu-stack", self.a.first_n),
                                ("gdb", 2)):
                    lat, out = self.latency(self.snapshot_cmd(tool.split()[0], tgt.pid), n)
                    lat["lib_frames_named"] = len(set(re.findall(r"\bbench_lib_\d+\b", out)))
                    r[tool] = lat
            finally:
                tgt.kill()
                tgt.wait()
            log("first sample, %d libs: perch record %.0f ms (%s lib frames named), "
                "perch dump %.0f ms, eu-stack %.0f ms, gdb %.0f ms" % (
                    nlibs, r["record_first_sample_ms"], r["lib_frames_named"],
                    r["perch dump"]["median_ms"], r["eu-stack"]["median_ms"],
                    r["gdb"]["median_ms"]))
            res[str(nlibs)] = r
        return res

    def memory(self, secs, threads=50, hz=1000):
        idle_gate(self.gate_max())
        tgt = start_target([self.b("bench-long"), "-t", str(threads), "-s", str(secs + 30)])
        folded = os.path.join(self.tmp, "long.folded")
        # the recording streamed to disk when perch can write one (issue 6); the folded
        # file is rendered from it afterwards, as a user would
        rec = os.path.join(self.tmp, "long.perch")
        streamed = b".perch" in subprocess.run([self.perch, "record", "--help"],
                                               stdout=subprocess.PIPE).stdout
        out = rec if streamed else folded
        ring = self.a.mem_ring
        args = [self.perch, "record", "-p", str(tgt.pid), "-F", str(hz), "-d", str(secs)]
        if ring:
            # the flight recorder: the last `ring` seconds only, a window saved every 30 s
            out = os.path.join(self.tmp, "ring.folded")
            args += ["--ring", str(ring), "--trigger", "signal:USR2"]
        pp = Proc(args + ["-o", out], stdout=subprocess.DEVNULL)
        series = []
        next_save = 30.0
        while pp.alive():
            if ring and time.monotonic() - pp.t_start >= next_save:
                os.kill(pp.pid, signal.SIGUSR2)
                next_save += 30.0
            rss = read_status(pp.pid, "VmRSS")
            hwm = read_status(pp.pid, "VmHWM")
            if rss is not None:
                series.append((round(time.monotonic() - pp.t_start, 2), rss, hwm))
            time.sleep(1.0)
        _, pru = pp.wait()
        summ = parse_perch_summary(pp.out()[1])
        tgt.kill()
        tgt.wait()
        rec_kb = None
        if ring:
            folded = out
            streamed = False
        if streamed and os.path.exists(rec):
            rec_kb = os.path.getsize(rec) // 1024
            subprocess.run([self.perch, "report", rec, "-o", folded],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out_kb = os.path.getsize(folded) // 1024 if os.path.exists(folded) else None
        nstacks = len(read_folded(folded))
        # growth: least squares over the last 5 minutes (the second half of a shorter run)
        window = min(300.0, secs / 2)
        half = [(t, r) for t, r, _ in series if t >= secs - window]
        slope = None
        if len(half) >= 3:
            mt = statistics.fmean(t for t, _ in half)
            mr = statistics.fmean(r for _, r in half)
            den = sum((t - mt) ** 2 for t, _ in half)
            slope = sum((t - mt) * (r - mr) for t, r in half) / den if den else None
        peak_mb = pru.ru_maxrss / 1024
        res = {"seconds": secs, "threads": threads, "hz": hz, "peak_rss_mb": peak_mb,
               "growth_window_s": window,
               "rss_series": series, "growth_mb_per_min": slope * 60 / 1024 if slope is not None
               else None, "folded_kb": out_kb, "distinct_stacks": nstacks, "perch": summ,
               "perch_cpu_s": rusage_s(pru),
               "output": ("streamed recording %s KiB, folded rendered by perch report" % rec_kb
                          if streamed else
                          "--ring %g with a window saved every 30 s (%s saved; the -o file "
                          "holds the last %g s)" % (ring, summ.get("ring_saves"), ring)
                          if ring else "folded, profile kept in memory")}
        if slope is not None:
            last = series[-1][1] / 1024 if series else peak_mb
            res["extrapolated_10min_mb"] = max(peak_mb, last + slope / 1024 * (600 - secs))
        # RSS at each minute, for the docs
        res["rss_by_minute_mb"] = [round(r / 1024, 1) for t, r, _ in series
                                   if int(t) % 60 == 0 and t >= 59][:60]
        log("memory: peak %.1f MB after %d s, growth %s MB/min over the last %d s" % (
            peak_mb, secs, "%.2f" % res["growth_mb_per_min"] if slope is not None else "?",
            window))
        return res

    def verify(self, secs, hz=1000):
        """--verify: every sample also unwound in the stop by libunwind-ptrace; perch's
        frames must be the same."""
        idle_gate(self.gate_max())
        folded = os.path.join(self.tmp, "verify.folded")
        units = max(2000, int(self.a.units_1t * secs / 5))
        p = subprocess.run([self.perch, "record", "--verify", "-F", str(hz), "-o", folded, "--",
                            self.b("bench-chain"), "-d", "0", "-n", str(units)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        s = parse_perch_summary(p.stderr.decode(errors="replace"))
        log("verify: %s of %s samples differ" % (s.get("verify_differ"), s.get("verify_samples")))
        return {"hz": hz, "units": units, "perch": s}

    def realart(self, runs, secs=3, hz=1000):
        """perch record on the real Android 11 runtime (the e2e-realart fixture, mk/realart.mk):
        tests/realart/app Deep in spin mode (main > run > down x 7 > spin) in each interpreter;
        perch's summary says how long naming the Java frames took per sample."""
        ra = self.a.realart
        if not os.path.exists(os.path.join(ra, "realart-launcher")):
            log("realart: no fixture in %s (make targets builds it); skipped" % ra)
            return {}
        rt = os.path.join(self.tmp, "realart")
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(ra, "lib"))
        for var, sub in (("ANDROID_ROOT", "root"), ("ANDROID_DATA", "data"),
                         ("ANDROID_ART_ROOT", "art"), ("ANDROID_I18N_ROOT", "i18n"),
                         ("ANDROID_TZDATA_ROOT", "tz")):
            env[var] = os.path.join(rt, sub)
            os.makedirs(env[var], exist_ok=True)
        res = {}
        # states: tests/realart/app/States (12 threads: 7 waiting in Java states or native
        # methods, whose native-method frames and ART states are read per sample)
        for name, opts in (("nterp", []), ("mterp", ["-Xint"]),
                           ("switch", ["-Xint", "-Xmethod-trace",
                                       "-Xmethod-trace-file:" + os.path.join(rt, "trace.bin")]),
                           ("states", [])):
            prog = ["perch/realart/States", "0"] if name == "states" else ["perch/realart/Deep", "1"]
            rows = []
            for _ in range(runs):
                idle_gate(self.gate_max())
                t = Proc([os.path.join(ra, "realart-launcher"),
                          "%s/core.dex:%s/app.dex" % (ra, ra)] + prog + [
                          "-Ximage:" + os.path.join(rt, "none.art"), "-Xnoimage-dex2oat",
                          "-Xusejit:false"] + opts, stderr=subprocess.DEVNULL, env=env)
                try:
                    if not t.p.stdout.readline().startswith(b"ready "):
                        raise RuntimeError("realart target did not start")
                    p = subprocess.run([self.perch, "record", "-p", str(t.pid), "-F", str(hz),
                                        "-d", str(secs), "--summary", "-o",
                                        os.path.join(self.tmp, "realart.folded")],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       timeout=120)
                    rows.append(parse_perch_summary(p.stderr.decode(errors="replace")))
                finally:
                    t.kill()
                    t.wait()
            row = {k: med([r[k] for r in rows if k in r])
                   for k in ("java_us", "java_frames", "unwind_us", "symbolize_us", "frames")}
            row["java_us_all"] = [r.get("java_us") for r in rows]
            res[name] = row
            log("realart %-6s Java frames %s/sample named in %s us (runs %s)" % (
                name, f(row["java_frames"]), f(row["java_us"]), row["java_us_all"]))
        return res

    def idle(self, rounds, hzs, deadline):
        """Issue 18: 2 busy threads with N idle ones and with none, at each rate in @hzs
        (the first one also with --no-idle-reuse, which reads every thread at every tick)."""
        configs = []
        for nidle in (self.a.idle_threads, 0):
            argv = [self.b("bench-idle"), "-i", str(nidle), "-b", "2", "-n",
                    str(self.a.idle_units), "-d", "300"]
            configs.append(("%d idle unprofiled" % nidle, argv, None))
            for hz in hzs:
                configs.append(("%d idle perch -F %d" % (nidle, hz), argv, ("perch", hz)))
            if nidle:
                configs.append(("%d idle perch -F %d --no-idle-reuse" % (nidle, hzs[0]), argv,
                                ("perch", hzs[0], "--no-idle-reuse")))
        res = {c[0]: [] for c in configs}
        for r in range(rounds):
            t_round = time.monotonic()
            for label, argv, tool in configs:
                res[label].append(self.timed_run("idle: " + label, argv, tool))
            if r + 1 < rounds and elapsed() + time.monotonic() - t_round > deadline:
                log("idle: stopping after %d rounds (time budget)" % (r + 1))
                break
        return res


# ---------------------------------------------------------------- aggregation


def pick(runs):
    """Runs used for the medians: the clean ones if any, else all (flagged noisy)."""
    clean = [r for r in runs if r.get("clean")]
    return (clean, False) if clean else (runs, True)


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def summarize_slowdown(res, nthreads):
    out = {}
    base_runs, base_noisy = pick(res["unprofiled"])
    base = med(r.get("work_s") for r in base_runs)
    for label, runs in res.items():
        used, noisy = pick(runs)
        w = med(r.get("work_s") for r in used)
        row = {"runs": len(runs), "clean_runs": sum(1 for r in runs if r.get("clean")),
               "noisy": noisy or base_noisy, "noisy_self": noisy, "noisy_base": base_noisy,
               "work_s": w,
               "work_s_all": [round(r.get("work_s", float("nan")), 3) for r in runs],
               "other_s_all": [r["other_s"] for r in runs],
               "slowdown_pct": 100 * (w / base - 1) if w and base else None,
               "tool_cpu_s": med(r["tool_cpu_s"] for r in used)}
        if runs[0]["tool"] and runs[0]["tool"][0] == "perch":
            ps = [r.get("perch", {}) for r in used]
            keys = ["elapsed_s", "samples", "stops", "left_alone", "unmoved", "credited", "ticks",
                    "missed_ticks", "stop_p50_us", "stop_p99_us", "unwind_us", "symbolize_us",
                    "frames", "to_root_pct", "dropped", "threads_seen", "tick_p50_us",
                    "tick_p99_us"]
            for k in keys:
                row[k] = med(p.get(k) for p in ps)
            hz = runs[0]["tool"][1]
            row["hz"] = hz
            nom = [nthreads * hz * p["elapsed_s"] for p in ps if "elapsed_s" in p]
            row["nominal"] = med(nom)
            row["achieved_pct"] = med(100 * (p["stops"] + p["left_alone"] + p.get("unmoved", 0)) /
                                      (nthreads * hz * p["elapsed_s"])
                                      for p in ps if "stops" in p and p.get("elapsed_s"))
            row["weighted_pct"] = med(100 * p["samples"] / (nthreads * hz * p["elapsed_s"])
                                      for p in ps if "samples" in p and p.get("elapsed_s"))
            row["cpu_per_stop_us"] = med(1e6 * r["tool_cpu_s"] / r["perch"]["stops"]
                                         for r in used if r.get("perch", {}).get("stops"))
            row["samples_in_work"] = med(r["perch"]["stops"] for r in used
                                         if r.get("perch", {}).get("stops"))
            row["maxrss_mb"] = med(r.get("tool_maxrss_kb", 0) / 1024 for r in used)
            # load-independent: perch's own CPU per tick (all its threads), gate figures
            row["cpu_per_tick_us"] = med(1e6 * r["tool_cpu_s"] / r["perch"]["ticks"]
                                         for r in used if r.get("perch", {}).get("ticks"))
            row["gated"] = med(r.get("perch", {}).get("gated") for r in used)
            row["rescans"] = med(r.get("perch", {}).get("rescans") for r in used)
        elif runs[0]["tool"] and runs[0]["tool"][0] == "perf":
            row["samples"] = med(r.get("perf_samples") for r in used)
            row["cpu_per_sample_us"] = med(1e6 * r["tool_cpu_s"] / r["perf_samples"]
                                           for r in used if r.get("perf_samples"))
            row["data_mb"] = med(r.get("perf_data_mb") for r in used)
        elif runs[0]["tool"] and runs[0]["tool"][0] == "loop":
            row["snapshots_per_s"] = med(r.get("snapshots_per_s") for r in used)
            row["snapshots"] = med(r.get("snapshots") for r in used)
        n = row.get("stops") or row.get("samples") or row.get("snapshots")
        if n and w and base and label != "unprofiled":
            row["lost_per_sample_us"] = 1e6 * (w - base) / n
        out[label] = row
    lo, hi = out.get("perch -F 100"), out.get("perch -F 1000")
    if lo and hi and lo.get("stops") and hi.get("stops") and hi["stops"] > lo["stops"]:
        # perch's start-up (debug info loading) cancels out between the two rates
        hi["marginal_cpu_per_stop_us"] = 1e6 * (hi["tool_cpu_s"] - lo["tool_cpu_s"]) / (
            hi["stops"] - lo["stops"])
    return out


# ---------------------------------------------------------------- table


def f(v, fmt="%.1f", none="-"):
    return none if v is None else fmt % v


def render(R):
    L = []
    m = R["machine"]
    L.append("perch bench  %s  %s  (%s, %d CPUs, kernel %s, %s)" % (
        R["date"], m["host"], m["cpu"], m["cpus"], m["kernel"], m["virt"]))
    L.append("A verdict ending in '?' was judged on runs disturbed by other load (no clean run).")
    L.append("runtime %.0f s; runs with other_s >= %.2f s are left out of medians when a clean "
             "run exists (rejected %d, idle gate gave up %d times)" % (
                 R["runtime_s"], R["params"]["other_max"], R["rejected_runs"],
                 R["gate_gave_up"]))
    for key, title in (("t1", "1 CPU-bound thread, 35-frame stack (f00..f27 -> leaf)"),
                       ("t4", "4 CPU-bound threads + blocked main (5 threads) on 2 CPUs")):
        if key not in R:
            continue
        S = R[key]
        L.append("")
        L.append("Target slowdown: %s; target's own work time, median of clean runs" % title)
        L.append("  %-20s %-24s %9s %10s %12s %13s" % ("tool", "work_s median (all)", "slowdown",
                                                     "samples", "tool CPU/smp", "lost/sample"))
        for label, row in S.items():
            n = row.get("stops") or row.get("samples") or row.get("snapshots")
            per = row.get("cpu_per_stop_us") or row.get("cpu_per_sample_us")
            if row.get("snapshots_per_s"):
                nstr = "%.1f/s" % row["snapshots_per_s"]
                per = 1e6 * row["tool_cpu_s"] / row["snapshots"] if row.get("snapshots") else None
            else:
                nstr = f(n, "%d")
            L.append("  %-20s %-24s %9s %10s %12s %13s%s" % (
                label, "%s (%s)" % (f(row["work_s"], "%.3f"),
                                    " ".join("%.2f" % x for x in row["work_s_all"])),
                "base" if label == "unprofiled" else f(row["slowdown_pct"], "%+.1f%%"),
                nstr, f(per, "%.0f us"), f(row.get("lost_per_sample_us"), "%.0f us"),
                "  NOISY (no clean run)" if row["noisy_self"] else
                "  NOISY (baseline: no clean run)" if row["noisy"] else
                ("  %d/%d clean" % (row["clean_runs"], row["runs"])
                 if row["clean_runs"] < row["runs"] else "")))
        L.append("  perch detail   %-9s %-9s %8s %8s %7s %6s %-28s %9s %6s  %s" % (
            "stop p50", "stop p99", "CPU/stop", "unwind", "symbol", "frames",
            "samples: stops+alone+credit", "achieved", "missed", "states read after the tick"))
        for label, row in S.items():
            if "stop_p50_us" not in row:
                continue
            L.append("  %-14s %-9s %-9s %8s %8s %7s %6s %-28s %9s %6s  %s" % (
                label.replace("perch ", ""), f(row["stop_p50_us"], "%d us"),
                f(row["stop_p99_us"], "%d us"), f(row["cpu_per_stop_us"], "%.0f us"),
                f(row["unwind_us"], "%.1f us"), f(row["symbolize_us"], "%.1f us"),
                f(row["frames"], "%.1f"),
                "%s+%s+%s of %s" % (f(row["stops"], "%d"),
                                    f((row["left_alone"] or 0) + (row.get("unmoved") or 0), "%d"),
                                    f(row["credited"], "%d"), f(row["nominal"], "%.0f")),
                f(row["achieved_pct"], "%.0f%%"), f(row["missed_ticks"], "%d"),
                "p50 %s, p99 %s" % (f(row.get("tick_p50_us"), "%d us"),
                                    f(row.get("tick_p99_us"), "%d us"))))
        hi = S.get("perch -F 1000", {})
        if hi.get("marginal_cpu_per_stop_us") is not None:
            L.append("  perch CPU per stop includes its start-up (debug info loading); between "
                     "100 and 1000 Hz it costs %.0f us per extra stop" %
                     hi["marginal_cpu_per_stop_us"])
    if "accuracy" in R:
        L.append("")
        L.append("Accuracy: 70/30 split (bench-split), truth measured by the target itself")
        for a in R["accuracy"]:
            L.append("  %4d Hz %3d s: truth a %.2f%%, perch a %s%% of a+b (%+.2f points; "
                     "%d samples, 1 SE = %.2f points)" % (
                         a["hz"], a["seconds"], a["truth_a_pct"] or 0, f(a["perch_a_pct"], "%.2f"),
                         a["diff_points"] or 0, a["samples_a"] + a["samples_b"],
                         a["binomial_se_points"] or 0))
    if "syscall" in R:
        S = R["syscall"]
        L.append("")
        L.append("System-call bias: bench-syscall (user work + cached 4 KiB preads, truth measured "
                 "by itself) on CPU 0, perch -p on CPU 1, --mode cpu")
        for a in S["runs"] + [S["uncorrected"]]:
            L.append("  %4d Hz %2d s %-14s truth io %.2f%%, perch %s%% (%s points; %d samples, "
                     "1 SE %.2f; %s of %s running samples held)" % (
                         a["hz"], a["seconds"], a["options"] or "(default)",
                         a["truth_io_pct"] or 0, f(a["perch_io_pct"], "%.2f"),
                         f(a["diff_points"], "%+.2f"), a["samples"],
                         a["binomial_se_points"] or 0, f(a["held"], "%d"),
                         f(a["running_samples"], "%d")))
    if "states" in R:
        L.append("")
        L.append("Wall-mode R share: bench-duty threads (pON/OFF ms periodic, rMIN-MAX/DUTY% "
                 "random bursts) measure their running+runnable time; perch launches them, default rules")
        for a in R["states"]:
            errs = [abs(t["diff_points"]) for t in a["threads"]]
            L.append("  %4d Hz %-6s %s  (max error %s points)" % (
                a["hz"], "+busy" if a["competitor"] else "idle", "  ".join(
                    "%s %.1f/%.1f" % (t["spec"], t["perch_r_pct"], t["truth_r_pct"])
                    for t in a["threads"]), f(max(errs) if errs else None, "%.1f")))
        L.append("  (each pair: perch's R%/the thread's truth)")
    if "dump" in R:
        D = R["dump"]
        L.append("")
        L.append("Dump latency, 5-thread target (4 busy in the 35-frame chain + main in join), "
                 "wall time per snapshot (eu-stack -il: with inlines and file:line, as perch;"
                 " perch: its symbolization cache warm after the first run; perch-nocache: "
                 "every run reads the DWARF)")
        for tool, r in D.items():
            L.append("  %-13s median %8.1f ms, CPU %s ms  (min %.1f, max %.1f, n=%d, failed %d; "
                     "threads in leaf %d)" % (tool, r["median_ms"], f(r.get("cpu_ms")),
                                               r["min_ms"], r["max_ms"], r["n"], r["failed"],
                                               r["threads_in_leaf"]))
        if D.get("perch") and D.get("eu-stack"):
            L.append("  perch dump is %.2fx eu-stack's speed, %.1fx gdb's" % (
                D["eu-stack"]["median_ms"] / D["perch"]["median_ms"],
                D["gdb"]["median_ms"] / D["perch"]["median_ms"]))
    if "first_sample" in R:
        L.append("")
        L.append("Time to the first symbolized sample, attaching to a running process whose "
                 "stack crosses every library")
        L.append("  (perch record -F 10 -d 0.1: one tick; whole command, attach .. unwind .. "
                 "name .. write .. detach; 'naming' = perch's own unwind+symbolize time)")
        for k, r in R["first_sample"].items():
            L.append("  %3d libraries (%d maps lines): perch record %.0f ms (naming %.0f ms; "
                     "stops %s; library frames named %s), perch dump %.0f ms, eu-stack %.0f ms, "
                     "gdb %.0f ms" % (
                         r["libraries"], r["maps_lines"], r["record_first_sample_ms"],
                         r["unwind_symbolize_ms"], "/".join(str(x) for x in r["stops_per_run"]),
                         "/".join(str(x) for x in r["lib_frames_named"]),
                         r["perch dump"]["median_ms"], r["eu-stack"]["median_ms"],
                         r["gdb"]["median_ms"]))
    if "memory" in R:
        M = R["memory"]
        p = M["perch"]
        L.append("")
        L.append("perch memory: %d threads (bench-long) at %d Hz for %d s%s" % (
            M["threads"], M["hz"], M["seconds"], "" if M["seconds"] >= 600 else
            " (make bench-long runs the real 10 minutes)"))
        L.append("  peak RSS %.1f MB; growth over the last %d s %s MB/min%s" % (
            M["peak_rss_mb"], M.get("growth_window_s", M["seconds"] / 2),
            f(M.get("growth_mb_per_min"), "%.2f"),
            "" if M["seconds"] >= 600 else "; EXTRAPOLATED to 10 min: %s MB" %
            f(M.get("extrapolated_10min_mb"), "%.0f")))
        if M.get("rss_by_minute_mb"):
            L.append("  RSS at each minute (MB): %s" % " ".join(
                "%.1f" % x for x in M["rss_by_minute_mb"]))
        L.append("  samples %s (stops %s, left alone %s), ticks %s, missed ticks %s, stop "
                 "p50/p99 %s/%s us; %s distinct stacks, folded %s KiB; perch CPU %.1f s" % (
                     p.get("samples"), p.get("stops"), p.get("left_alone"), p.get("ticks"),
                     p.get("missed_ticks"), p.get("stop_p50_us"), p.get("stop_p99_us"),
                     M["distinct_stacks"], M["folded_kb"], M["perch_cpu_s"]))
        L.append("  output: %s" % M.get("output", "folded (kept in memory)"))
    if "idle" in R:
        I = R["idle"]
        L.append("")
        L.append("Idle threads left alone: 2 busy threads + N threads blocked in "
                 "pthread_cond_wait, with the reuse rule and without it (--no-idle-reuse)")
        for label, row in I["rows"].items():
            L.append("  %-24s work_s %s (%s) slowdown %s%s" % (
                label, f(row["work_s"], "%.3f"), " ".join("%.2f" % x for x in row["work_s_all"]),
                "base" if row.get("slowdown_pct") is None else "%+.1f%%" % row["slowdown_pct"],
                "  perch CPU %.2f s (%s us per tick), stops %s, left alone %s (gated %s, %s "
                "rescans), stop p50/p99 %s/%s us" % (
                    row["tool_cpu_s"], f(row.get("cpu_per_tick_us"), "%.0f"),
                    f(row.get("stops"), "%d"), f(row.get("left_alone"), "%d"),
                    f(row.get("gated"), "%d"), f(row.get("rescans"), "%d"),
                    f(row.get("stop_p50_us"), "%d"), f(row.get("stop_p99_us"), "%d"))
                if row.get("stops") is not None else ""))
        if I.get("note"):
            L.append("  " + I["note"])
    if "verify" in R:
        V = R["verify"]["perch"]
        L.append("")
        L.append("--verify (bench-chain, 1 thread, 1000 Hz): %s of %s samples differ from "
                 "libunwind-ptrace run in the stop; stop p50/p99 %s/%s us with it" % (
                     V.get("verify_differ"), V.get("verify_samples"), V.get("stop_p50_us"),
                     V.get("stop_p99_us")))
    A = R.get("realart") or {}
    if A:
        L.append("")
        L.append("Real Android runtime (Debian android-libart 11, libart.so.0): Deep in spin "
                 "mode (states: the States program's 12 threads), perch record -F 1000 -d 3; "
                 "median of runs")
        L.append("  %-8s %12s %16s %10s %10s %8s" % ("interp", "Java frames", "naming Java/smp",
                                                    "unwind", "symbol", "frames"))
        for name, row in A.items():
            L.append("  %-8s %12s %16s %10s %10s %8s" % (
                name, f(row.get("java_frames")), f(row.get("java_us"), "%.1f us"),
                f(row.get("unwind_us"), "%.1f us"), f(row.get("symbolize_us"), "%.1f us"),
                f(row.get("frames"))))

    if R.get("goals"):  # whatever sections ran
        L.append("")
        L.append("Goals (issues 3, 18 and 19)")
        for g in R["goals"]:
            L.append("  %-5s %-58s %s" % (g["verdict"], g["goal"], g["measured"]))
    return "\n".join(L) + "\n"


# ---------------------------------------------------------------- goals


def goals(R):
    G = []

    def add(goal, ok, measured, noisy=False):
        v = "?" if ok is None else ("ok" if ok else "MISS")
        if noisy and ok is not None:
            v += "?"  # judged on runs that other load disturbed: not a verdict
            measured += "  [NOISY: a row or its baseline has no clean run]"
        G.append({"goal": goal, "verdict": v, "measured": measured})

    t1 = R.get("t1", {})
    p1000 = t1.get("perch -F 1000", {})
    if p1000:
        v = p1000.get("stop_p50_us")
        add("stop window p50 < 20 us (1 thread, 1000 Hz)", None if v is None else v < 20,
            "%s us (p99 %s us)" % (v, p1000.get("stop_p99_us")))
        v = p1000.get("stop_p99_us")
        add("stop window p99 < 300 us (1 thread, 1000 Hz)", None if v is None else v < 300,
            "%s us" % v)
        v = p1000.get("unwind_us")
        add("unwind < 10 us per ~30-frame sample (warm)", None if v is None else v < 10,
            "%s us for %s frames (perch's mean over the run)" % (v, p1000.get("frames")))
    V = R.get("verify", {}).get("perch", {})
    if V.get("verify_samples"):
        add("same frames as libunwind-ptrace on every sample (--verify)",
            V["verify_differ"] == 0, "%d of %d samples differ" % (V["verify_differ"],
                                                                 V["verify_samples"]))
    for key, name in (("t1", "1 thread"), ("t4", "4 threads")):
        S = R.get(key, {})
        p, d = S.get("perch -F 1000", {}), S.get("perf -F 1000 dwarf", {})
        ps, ds = p.get("slowdown_pct"), d.get("slowdown_pct")
        if ps is not None and ds is not None:
            # ratio of slowdowns: (1 + perch) / (1 + dwarf) would be a ratio of work times;
            # the issue compares slowdowns, so compare the percentages (floored at 1 %)
            ratio = max(ps, 1.0) / max(ds, 1.0)
            add("1000 Hz slowdown <= 1.5x perf --call-graph dwarf (%s)" % name, ratio <= 1.5,
                "%+.1f%% vs %+.1f%% (%.1fx)" % (ps, ds, ratio), p["noisy"] or d["noisy"])
    D = R.get("dump", {})
    if D.get("perch") and D.get("eu-stack"):
        x = D["eu-stack"]["median_ms"] / D["perch"]["median_ms"]
        add("perch dump 10x faster than eu-stack (5 threads)", x >= 10,
            "%.1f ms vs %.1f ms (%.2fx); without the cache %s ms" % (
                D["perch"]["median_ms"], D["eu-stack"]["median_ms"], x,
                f(D.get("perch-nocache", {}).get("median_ms"))))
    # issue 18: a cold dump (no symbol cache) with file:line as fast as eu-stack without
    # lines, measured in the same run; a warm one (cache filled by the first dump) <= 5 ms
    cold, eu, eul = (D.get(k, {}).get("median_ms") for k in ("perch-nocache", "eu-stack",
                                                             "eu-stack -il"))
    if cold is not None and eu is not None:
        add("perch dump cold (no cache, with lines) <= 24 ms and <= eu-stack (5 threads)",
            cold <= 24 and cold <= eu,
            "%.1f ms (eu-stack %.1f ms, eu-stack -il %s ms); CPU %s ms (eu-stack %s, -il %s)" % (
                cold, eu, f(eul), f(D["perch-nocache"].get("cpu_ms")),
                f(D["eu-stack"].get("cpu_ms")), f(D.get("eu-stack -il", {}).get("cpu_ms"))))
    warm = D.get("perch", {}).get("median_ms")
    if warm is not None:
        add("perch dump warm (symbol cache) <= 5 ms (5 threads)", warm <= 5,
            "%.1f ms (eu-stack %s ms); CPU %s ms" % (warm, f(eu),
                                                    f(D["perch"].get("cpu_ms"))))
    for a in R.get("accuracy", []):
        if a.get("diff_points") is not None:
            add("accuracy within 1 point (70/30, %d Hz)" % a["hz"], abs(a["diff_points"]) <= 1,
                "%+.2f points (1 SE %.2f)" % (a["diff_points"], a["binomial_se_points"]))
    S = R.get("syscall")
    if S and S.get("median_diff_points") is not None:
        d = S["median_diff_points"]
        u = S["uncorrected"].get("diff_points")
        add("system-call bias within 2 points (perch on another CPU, median of %d runs)" %
            len(S["runs"]), abs(d) <= 2,
            "%+.2f points (without the CPU hold: %s)" % (d, f(u, "%+.2f")))
    for hz in (100, 1000):
        rows = [t for a in R.get("states", []) if a["hz"] == hz for t in a["threads"]]
        if rows:
            worst = max(abs(t["diff_points"]) for t in rows)
            add("wall-mode R share within 3 points of the truth (%d Hz, idle and beside a busy "
                "process)" % hz, worst <= 3,
                "worst %.1f points over %d threads" % (worst, len(rows)))
    I = (R.get("idle") or {}).get("rows", {})
    n = R.get("params", {}).get("idle_threads", 200)
    for hz, want in ((1000, 12.0), (100, 1.5)):
        a, z = I.get("%d idle perch -F %d" % (n, hz), {}), I.get("0 idle perch -F %d" % hz, {})
        ps, zs = a.get("slowdown_pct"), z.get("slowdown_pct")
        if ps is not None:
            # issue 18: at most 2 points above the same rate without idle threads, too
            ok = ps <= want and (zs is None or ps <= max(zs, 0) + 2)
            add("%d idle + 2 busy threads, %d Hz: slowdown <= +%g%% and <= 2 points above 0 "
                "idle" % (n, hz, want), ok,
                "%+.1f%% (0 idle %s); perch %s us CPU per tick (0 idle %s)" % (
                    ps, f(zs, "%+.1f%%"), f(a.get("cpu_per_tick_us"), "%.0f"),
                    f(z.get("cpu_per_tick_us"), "%.0f")),
                a.get("noisy") or z.get("noisy"))
    for name, row in (R.get("realart") or {}).items():
        v = row.get("java_us")
        add("naming Java frames < 30 us per sample (real ART, %s)" % name,
            None if v is None else v < 30,
            "%s us for %s Java frames" % (f(v), f(row.get("java_frames"))))
        sy = row.get("symbolize_us")
        add("symbolize + naming Java frames <= 30 us per sample (real ART, %s)" % name,
            None if v is None or sy is None else v + sy <= 30,
            "%s us + %s us" % (f(sy), f(v)))
    M = R.get("memory")
    if M:
        real = M["seconds"] >= 600
        e = M["peak_rss_mb"] if real else M.get("extrapolated_10min_mb")
        g = M.get("growth_mb_per_min")
        add("memory < 48 MB, 50 threads at 1000 Hz for 10 min", None if e is None else e < 48,
            "peak %.1f MB in %d s%s" % (M["peak_rss_mb"], M["seconds"], "" if real else
                                        ", %s MB extrapolated to 10 min" % f(e, "%.0f")))
        add("memory growth < 0.5 MB/min over the last 5 min of 10", None if g is None or not real
            else g < 0.5, "%s MB/min over the last %d s" % (f(g, "%.2f"),
                                                           M.get("growth_window_s", 0)))
    if R.get("wait"):
        import wait_start
        wait_start.goals(R["wait"], add)
    if R.get("servers"):
        import servers
        servers.goals(R["servers"], add)
    if R.get("scale"):
        import scale
        scale.goals(R["scale"], add)
    t4 = R.get("t4", {})
    for hz, want in ((100, 80), (1000, 50)):
        row = t4.get("perch -F %d" % hz, {})
        if row.get("achieved_pct") is not None:
            busy = None
            if row.get("stops") and row.get("nominal"):
                # the 4 busy threads: their stops and waits left alone against 4 x Hz x
                # elapsed (main, blocked in join, is the rest of "left alone")
                busy = 100 * (row["stops"] + (row.get("unmoved") or 0)) / (row["nominal"] * 4 / 5)
            add(">= %d%% of nominal samples, 4 busy threads on 2 CPUs, %d Hz" % (want, hz),
                row["achieved_pct"] >= want,
                "%.0f%% of all 5 threads (stops+left alone); busy threads' %s%% of 4xHz"
                % (row["achieved_pct"], f(busy, "%.0f")))
    return G


# ---------------------------------------------------------------- setup


def ensure_tools():
    """Install the peers from Debian when missing (idempotent, like scripts/install-deps.sh)."""
    need = {"perf": "linux-perf", "eu-stack": "elfutils", "gdb": "gdb"}
    missing = [pkg for tool, pkg in need.items() if not shutil.which(tool)]
    if not missing:
        return
    sudo = [] if os.geteuid() == 0 else (["sudo"] if shutil.which("sudo") else None)
    if sudo is None:
        sys.exit("bench: missing %s; run as root or install them" % " ".join(missing))
    log("installing " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                           *missing], check=True, env=env, stdout=subprocess.DEVNULL)


class PerfParanoid:
    """perf record on another process needs perf_event_paranoid <= 1 unless we are root
    with CAP_PERFMON; lower it for the run when perf refuses, and restore it."""
    PATH = "/proc/sys/kernel/perf_event_paranoid"

    def __init__(self):
        self.old = None

    def __enter__(self):
        p = subprocess.Popen(["sleep", "0.3"])
        r = subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "100", "-o", "/dev/null",
                            "-p", str(p.pid)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        p.wait()
        if r.returncode != 0 and b"paranoid" in r.stderr and os.geteuid() == 0:
            with open(self.PATH) as f:
                self.old = f.read().strip()
            with open(self.PATH, "w") as f:
                f.write("-1\n")
            log("perf_event_paranoid %s -> -1 for the run" % self.old)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            with open(self.PATH, "w") as f:
                f.write(self.old + "\n")


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    virt = subprocess.run(["systemd-detect-virt"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL).stdout.decode().strip() \
        if shutil.which("systemd-detect-virt") else ""
    if not virt:
        try:
            virt = "hypervisor" if " hypervisor" in open("/proc/cpuinfo").read() else "bare metal"
        except OSError:
            virt = "?"
    return {"host": platform.node(), "cpu": cpu, "cpus": os.cpu_count(),
            "kernel": platform.release(), "virt": virt,
            "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)}


def versions():
    v = {}
    for name, argv in (("perf", ["perf", "--version"]), ("eu-stack", ["eu-stack", "--version"]),
                       ("gdb", ["gdb", "--version"])):
        try:
            v[name] = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
                                     ).stdout.decode().splitlines()[0]
        except (OSError, IndexError):
            v[name] = None
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perch", required=True)
    ap.add_argument("--bin", required=True, help="directory of the bench-* targets")
    ap.add_argument("--out", required=True, help="directory for bench.txt and bench.json")
    ap.add_argument("--rounds", type=int, default=3, help="runs per slowdown configuration")
    ap.add_argument("--units-1t", type=int, default=60000, help="bench-chain units, 1 thread")
    ap.add_argument("--units-4t", type=int, default=30000, help="bench-chain units per thread")
    ap.add_argument("--accuracy", default="1000:10",
                    help="HZ:SECONDS[,HZ:SECONDS...] runs of the split target")
    ap.add_argument("--dump-n", type=int, default=9)
    ap.add_argument("--first-n", type=int, default=3)
    ap.add_argument("--nlibs", type=int, default=120)
    ap.add_argument("--mem-seconds", type=int, default=45)
    ap.add_argument("--mem-ring", type=float, default=0,
                    help="memory section: record with --ring SEC --trigger signal:USR2, a "
                         "save asked for every 30 s (the flight recorder's memory)")
    ap.add_argument("--idle-threads", type=int, default=200)
    ap.add_argument("--idle-units", type=int, default=50000)
    ap.add_argument("--idle-rounds", type=int, default=2)
    ap.add_argument("--gate-max", type=float, default=3.0, help="idle gate: give up after S")
    ap.add_argument("--other-max", type=float, default=0.5, help="reject runs with other_s >=")
    ap.add_argument("--budget", type=float, default=540, help="seconds for the whole bench")
    ap.add_argument("--syscall", default="500:8:3",
                    help="HZ:SECONDS:RUNS of the system-call bias target (perch on another CPU)")
    ap.add_argument("--states-secs", type=int, default=6,
                    help="seconds per run of the wall-mode state target at 1000 Hz")
    ap.add_argument("--states-secs-100", type=int, default=20,
                    help="the same at 100 Hz: an ideal sampler's R share of a random-burst "
                    "thread varies by 1.1-1.6 points (one SD) over 6 s at 100 Hz, 0.2 at 1000 Hz")
    ap.add_argument("--only",
                    default="t1,t4,accuracy,syscall,states,dump,first,memory,idle,verify,realart,"
                    "html,wait,servers,scale")
    ap.add_argument("--realart", default=None,
                    help="the real-ART fixture (default: targets/realart beside perch)")
    ap.add_argument("--realart-runs", type=int, default=3)
    ap.add_argument("--html-runs", type=int, default=3, help="report page: loads in Chromium")
    ap.add_argument("--wait-runs", type=int, default=9, help="--wait: latency runs per mode")
    ap.add_argument("--servers-rounds", type=int, default=3,
                    help="servers: rounds of the redis throughput comparison")
    args = ap.parse_args()
    only = set(args.only.split(","))

    ensure_tools()
    os.makedirs(args.out, exist_ok=True)
    args.perch = os.path.abspath(args.perch)
    args.bin = os.path.abspath(args.bin)
    if not args.realart:
        args.realart = os.path.join(os.path.dirname(args.perch), "targets", "realart")
    B = Bench(args)
    R = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
         "machine": machine(), "versions": versions(),
         "params": {k: v for k, v in vars(args).items()}}
    try:
        with PerfParanoid():
            if "t1" in only:
                R["t1"] = B.slowdown("1T", [B.b("bench-chain"), "-d", "300", "-n",
                                            str(args.units_1t)], 1, args.rounds,
                                     0.27 * args.budget)
            if "t4" in only:
                R["t4"] = B.slowdown("4T", [B.b("bench-chain"), "-d", "300", "-t", "4", "-n",
                                            str(args.units_4t)], 5, args.rounds,
                                     0.55 * args.budget)
        if "accuracy" in only:
            R["accuracy"] = []
            for spec in args.accuracy.split(","):
                hz, secs = spec.split(":")
                R["accuracy"].append(B.accuracy(int(hz), int(secs)))
        if "syscall" in only:
            hz, secs, runs = (int(x) for x in args.syscall.split(":"))
            runs_ = [B.syscall_bias(hz, secs, []) for _ in range(runs)]
            diffs = sorted(r["diff_points"] for r in runs_ if r["diff_points"] is not None)
            R["syscall"] = {"runs": runs_, "median_diff_points":
                            diffs[len(diffs) // 2] if diffs else None,
                            "uncorrected": B.syscall_bias(hz, secs, ["--no-cpu-hold"])}
        if "states" in only:
            R["states"] = []
            for hz, sets in ((100, (["p10/10", "p5/15", "p15/5"],
                                    ["r1-20/25", "r1-20/50", "r1-20/75"])),
                             (1000, (["p1/1", "p0.5/1.5", "p1.5/0.5"],
                                     ["r1-20/25", "r1-20/50", "r1-20/75"]))):
                for competitor in (False, True):
                    for specs in sets:
                        secs = args.states_secs_100 if hz == 100 else args.states_secs
                        R["states"].append(B.states(hz, secs, specs, competitor))
        if "dump" in only:
            R["dump"] = B.dump()
        if "first" in only:
            R["first_sample"] = B.first_sample()
        if "idle" in only:
            raw = B.idle(args.idle_rounds, (1000, 100), 0.8 * args.budget)
            rows = {}
            for nidle in (args.idle_threads, 0):
                labels = ["%d idle perch -F 1000" % nidle, "%d idle perch -F 100" % nidle]
                if nidle:
                    labels.append("%d idle perch -F 1000 --no-idle-reuse" % nidle)
                sub = summarize_slowdown(dict([("unprofiled", raw["%d idle unprofiled" % nidle])]
                                              + [(l, raw[l]) for l in labels if l in raw]),
                                         nidle + 3)
                rows["%d idle unprofiled" % nidle] = sub["unprofiled"]
                for l in labels:
                    if l in sub:
                        rows[l] = sub[l]
            a = rows.get("%d idle perch -F 1000" % args.idle_threads)
            b = rows.get("%d idle perch -F 1000 --no-idle-reuse" % args.idle_threads)
            note = ""
            if a and b:
                note = ("%d idle threads: perch CPU %.2f s with reuse, %.2f s without (%s of the "
                        "samples left alone); target slowdown %s vs %s." % (
                            args.idle_threads, a["tool_cpu_s"], b["tool_cpu_s"],
                            f(a.get("left_alone"), "%d"),
                            f(a.get("slowdown_pct"), "%+.1f%%"),
                            f(b.get("slowdown_pct"), "%+.1f%%")))
            R["idle"] = {"rows": rows, "note": note}
        if "verify" in only:
            R["verify"] = B.verify(5)
        if "realart" in only:
            R["realart"] = B.realart(args.realart_runs)
        if "html" in only:
            import report_page
            R["html"] = report_page.run(args.perch, os.path.join(args.bin, "report-gen"),
                                        args.out, args.html_runs)
        if "wait" in only:
            import wait_start
            R["wait"] = wait_start.run(args.perch, os.path.join(args.bin, "bench-waitstart"),
                                       args.wait_runs)
        if "servers" in only:
            import servers
            R["servers"] = servers.run(args.perch, os.path.join(args.bin, "bench-syscpu"),
                                       args.servers_rounds)
        if "scale" in only:
            import scale
            R["scale"] = scale.run(args.perch, os.path.join(args.bin, "bench-idle"),
                                   os.path.join(os.path.dirname(args.perch), "targets", "eintr"))
        if "memory" in only:
            secs = int(min(args.mem_seconds, args.budget - elapsed() - 10))
            R["memory"] = B.memory(max(15, secs))
    finally:
        R["runtime_s"] = elapsed()
        R["rejected_runs"] = B.rejected
        R["gate_gave_up"] = B.gate_failed
        R["runs"] = B.runs
        R["goals"] = goals(R)
        B.cleanup()
        text = render(R)
        if R.get("html"):
            import report_page
            text += "\n".join(report_page.render(R["html"])) + "\n"
        if R.get("wait"):
            import wait_start
            text += "\n".join(wait_start.render(R["wait"])) + "\n"
        if R.get("servers"):
            import servers
            text += "\n".join(servers.render(R["servers"])) + "\n"
        if R.get("scale"):
            import scale
            text += "\n".join(scale.render(R["scale"])) + "\n"
        with open(os.path.join(args.out, "bench.json"), "w") as fj:
            json.dump(R, fj, indent=1, default=str)
        with open(os.path.join(args.out, "bench.txt"), "w") as ft:
            ft.write(text)
        sys.stdout.write(text)
        log("wrote %s/bench.txt and bench.json" % args.out)


if __name__ == "__main__":
    main()
