"""make bench, section "scale" (issue 38): what blocked threads cost perch, and perch at 10,000
threads.

Per tick: bench-idle (tests/bench/idle_main.c) with 200 blocked threads and 2 busy ones, and
with the 2 busy ones alone; perch records it at 1000 Hz for 6 s and its own CPU is read from
its threads' schedstat (run time, ns) between 1.5 s and 4.5 s: attach and the first samples
of every thread are left out, what is left is what each tick costs. Rounds alternate the two;
medians. Goal: 200 blocked threads add at most 5 us of perch's CPU per tick.

10,000 threads: bench-idle with 10,000 blocked threads and 2 busy ones, perch at 100 Hz from
before the busy threads start until they are done (work_s, the target's own clock): the ticks
perch served, its CPU (rusage over its wall time), the size of its recording per minute, and
the busy threads' slowdown against the same run without perch, beside the same with no blocked
thread. Goals: at least 95% of the ticks, less than one core, the slowdown within 2 points of
the case without blocked threads.

EINTR: the eintr target (threads in epoll_wait(), semtimedop(), sigtimedwait(), counting their
own EINTRs) across attach, 10 s at 1000 Hz and detach. Goal: 0.
Python 3 standard library only."""
import os
import re
import statistics
import subprocess
import tempfile
import time

TICK_GOAL_US = 5.0
SERVED_GOAL = 95.0
SLOWDOWN_GOAL = 2.0


def _ready(p, timeout=120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = p.stdout.readline()
        if not line:
            break
        if line.startswith("ready "):
            return int(line.split()[1])
    return None


def _run_ns(pid):
    """perch's CPU so far: the sum of its threads' schedstat run times, ns."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total


def _idle_target(idle_bin, nidle, units, delay_ms):
    return subprocess.Popen([idle_bin, "-i", str(nidle), "-b", "2", "-n", str(units), "-d",
                             str(delay_ms)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)


def _stop(p):
    if p.poll() is None:
        p.kill()
    p.wait()


def _reap(p):
    """stderr and rusage CPU seconds of perch @p, once it is done."""
    err = p.stderr.read()
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return err, ru.ru_utime + ru.ru_stime


def per_tick(perch, idle_bin, nidle, tmp, hz=1000, secs=6):
    t = _idle_target(idle_bin, nidle, 10 ** 9, 0)
    try:
        pid = _ready(t)
        if not pid:
            return None
        p = subprocess.Popen([perch, "record", "-F", str(hz), "-p", str(pid), "-d", str(secs),
                              "-o", os.path.join(tmp, "tick.folded")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        a, ta = _run_ns(p.pid), time.monotonic()
        time.sleep(3.0)
        b, tb = _run_ns(p.pid), time.monotonic()
        err = _reap(p)[0]
        if a is None or b is None:
            return None
        m = re.search(r"ticks: (\d+).*?missed ticks: (\d+)", err, re.S)
        served = int(m.group(1)) / (int(m.group(1)) + int(m.group(2))) if m else 1.0
        return (b - a) / 1e3 / ((tb - ta) * hz * served)
    finally:
        _stop(t)


def ten_thousand(perch, idle_bin, nidle, tmp, units):
    """work_s unprofiled and with perch at 100 Hz, perch's figures."""
    res = {}
    for profiled in (False, True):
        t = _idle_target(idle_bin, nidle, units, 6000)
        try:
            pid = _ready(t)
            if not pid:
                return None
            if profiled:
                rec = os.path.join(tmp, "scale.perch")
                start = time.monotonic()
                p = subprocess.Popen([perch, "record", "-F", "100", "-p", str(pid), "-o", rec],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
            out = t.stdout.read()
            m = re.search(r"work_s ([\d.]+)", out)
            t.wait()
            if profiled:
                p.send_signal(2)  # SIGINT: the busy threads are done
                err, cpu = _reap(p)
                wall = time.monotonic() - start
                m2 = re.search(r"ticks: (\d+).*?missed ticks: (\d+)", err, re.S)
                res["served_pct"] = (100.0 * int(m2.group(1)) /
                                     (int(m2.group(1)) + int(m2.group(2))) if m2 else None)
                res["perch_wall_s"] = wall
                res["recording_mb_per_min"] = (os.path.getsize(rec) / 1e6 / wall * 60
                                               if os.path.exists(rec) else None)
                res["perch_cpu_core"] = cpu / wall
            res["work_s_perch" if profiled else "work_s"] = float(m.group(1)) if m else None
        finally:
            _stop(t)
    if res.get("work_s") and res.get("work_s_perch"):
        res["slowdown_pct"] = 100.0 * (res["work_s_perch"] / res["work_s"] - 1)
    return res


def eintr(perch, eintr_bin):
    t = subprocess.Popen([eintr_bin, "4"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        pid = _ready(t)
        if not pid:
            return None
        with tempfile.TemporaryDirectory(prefix="perch-bench-eintr-") as tmp:
            subprocess.run([perch, "record", "-F", "1000", "-d", "10", "-p", str(pid), "-o",
                            os.path.join(tmp, "e.folded")], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
        t.stdin.write("count\n")
        t.stdin.flush()
        m = re.search(r"eintr epoll (\d+) sem (\d+) sigwait (\d+)", t.stdout.readline())
        return sum(int(x) for x in m.groups()) if m else None
    finally:
        _stop(t)


def run(perch, idle_bin, eintr_bin, rounds=3, units=60000):
    res = {"per_tick_us": {200: [], 0: []}}
    with tempfile.TemporaryDirectory(prefix="perch-bench-scale-") as tmp:
        for _ in range(rounds):
            for nidle in (200, 0):
                v = per_tick(perch, idle_bin, nidle, tmp)
                if v is not None:
                    res["per_tick_us"][nidle].append(v)
        res["big"] = {n: ten_thousand(perch, idle_bin, n, tmp, units) for n in (10000, 0)}
    res["eintr"] = eintr(perch, eintr_bin)
    return res


def fmt(v, f="%.1f"):
    return "-" if v is None else f % v


def _med(v):
    return statistics.median(v) if v else None


def render(S):
    a, b = _med(S["per_tick_us"][200]), _med(S["per_tick_us"][0])
    big, none = S["big"].get(10000) or {}, S["big"].get(0) or {}
    return ["", "scale (issue 38): perch's CPU per tick at 1000 Hz between 1.5 s and 4.5 s of the "
            "recording, median of %d rounds; 10,000 blocked threads at 100 Hz" %
            len(S["per_tick_us"][200]),
            "  200 blocked + 2 busy: %s us/tick; 2 busy alone: %s us/tick; added: %s us" % (
                fmt(a), fmt(b), fmt(None if a is None or b is None else a - b)),
            "  10,000 blocked + 2 busy: %s%% of the ticks served, perch %s of a core, recording "
            "%s MB/min, busy threads %s slower (no blocked thread: %s)" % (
                fmt(big.get("served_pct")), fmt(big.get("perch_cpu_core"), "%.2f"),
                fmt(big.get("recording_mb_per_min"), "%.2f"),
                fmt(big.get("slowdown_pct"), "%+.1f%%"), fmt(none.get("slowdown_pct"), "%+.1f%%")),
            "  EINTRs in the target across attach, 10 s at 1000 Hz and detach: %s" %
            fmt(S.get("eintr"), "%d")]


def goals(S, add):
    a, b = _med(S["per_tick_us"][200]), _med(S["per_tick_us"][0])
    d = None if a is None or b is None else a - b
    add("200 blocked threads add <= %g us of perch's CPU per tick at 1000 Hz" % TICK_GOAL_US,
        None if d is None else d <= TICK_GOAL_US, "%s us (%s with them, %s without)" % (
            fmt(d), fmt(a), fmt(b)))
    big, none = S["big"].get(10000) or {}, S["big"].get(0) or {}
    v = big.get("served_pct")
    add("10,000 blocked threads at 100 Hz: >= %g%% of the ticks served" % SERVED_GOAL,
        None if v is None else v >= SERVED_GOAL, "%s%%" % fmt(v))
    v = big.get("perch_cpu_core")
    add("10,000 blocked threads at 100 Hz: perch under one core", None if v is None else v < 1,
        "%s of a core, recording %s MB/min" % (fmt(v, "%.2f"),
                                             fmt(big.get("recording_mb_per_min"), "%.2f")))
    x, y = big.get("slowdown_pct"), none.get("slowdown_pct")
    add("10,000 blocked threads: busy threads' slowdown within %g points of none blocked" %
        SLOWDOWN_GOAL, None if x is None or y is None else x - y <= SLOWDOWN_GOAL,
        "%s against %s" % (fmt(x, "%+.1f%%"), fmt(y, "%+.1f%%")))
    e = S.get("eintr")
    add("no EINTR in the target across attach, 10 s at 1000 Hz and detach",
        None if e is None else e == 0, "%s" % fmt(e, "%d"))
