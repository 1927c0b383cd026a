"""make bench, section "--wait" (issue 19): how soon `perch record --wait NAME` takes its first
sample of a process that starts, and what waiting costs.

Latency: perch waits for bench-waitstart (tests/targets/waitstart_main.c), which is started
once perch says it is waiting; the target writes its own CLOCK_MONOTONIC at the top of main()
(-t FILE, the outside clock) and spins 50 ms in startup_work(). Two figures per run: perch's
own (first sample after the kernel's exec event, or after the last /proc poll that did not see
the process yet), and first sample minus the target's main() time (the target's clock; it
leaves out exec and the dynamic loader, so it is the smaller). Medians of RUNS runs for the
kernel's process events and for /proc polling (PERCH_WAIT_POLL=proc).

Cost: CPU seconds (utime+stime of /proc/PID/stat) of a perch waiting SECONDS for a name that
never comes, quiet and while a shell starts processes in a loop (about 100 a second).
Python 3 standard library only."""
import os
import re
import signal
import statistics
import subprocess
import tempfile
import time

LAT_GOAL_MS = 5.0
CPU_GOAL_PCT = 2.0
HZ = os.sysconf("SC_CLK_TCK")
MODES = (("events", None), ("polling", "proc"))


def _env(poll):
    e = dict(os.environ)
    e.pop("PERCH_WAIT_POLL", None)
    if poll:
        e["PERCH_WAIT_POLL"] = poll
    return e


def _wait_line(p, what, timeout=20):
    end = time.monotonic() + timeout
    text = b""
    while time.monotonic() < end:
        line = p.stderr.readline()
        if not line:
            break
        text += line
        if what in line:
            return text
    return None


def _latency_once(perch, target, poll, tmp):
    tfile = os.path.join(tmp, "t0")
    if os.path.exists(tfile):
        os.unlink(tfile)
    p = subprocess.Popen([perch, "record", "-v", "-F", "1000", "--wait", "bench-waitstart",
                          "--wait-timeout", "30", "-o", os.path.join(tmp, "w.folded")],
                         stderr=subprocess.PIPE, env=_env(poll))
    head = _wait_line(p, b"waiting for a")
    if head is None:
        p.kill()
        p.wait()
        return None
    subprocess.run([target, "-t", tfile, "-s", "50", "-r", "50"], stdout=subprocess.DEVNULL,
                   check=False)
    rest = p.communicate(timeout=60)[1]
    err = (head + rest).decode(errors="replace")
    m = re.search(r"first sample ([0-9.]+) ms after", err)
    a = re.search(r"first sample at CLOCK_MONOTONIC (\d+) ns", err)
    try:
        with open(tfile) as f:
            t0 = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        t0 = None
    return {"perch_ms": float(m.group(1)) if m else None,
            "after_main_ms": (int(a.group(1)) - t0) / 1e6 if a and t0 else None,
            "how": "events" if "kernel process event" in err else "polling"}


def _cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        w = f.read().rsplit(")", 1)[1].split()
    return (int(w[11]) + int(w[12])) / HZ


def _cost_once(perch, poll, seconds, churn):
    sh = None
    if churn:
        sh = subprocess.Popen(["/bin/sh", "-c", "while :; do /bin/true; sleep 0.01; done"],
                              start_new_session=True)
    p = subprocess.Popen([perch, "record", "--wait", "no-such-process-bench", "-o",
                          "/dev/null"], stderr=subprocess.PIPE, env=_env(poll))
    _wait_line(p, b"waiting for a")
    c0, t0 = _cpu_s(p.pid), time.monotonic()
    time.sleep(seconds)
    c1, t1 = _cpu_s(p.pid), time.monotonic()
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=10)
    if sh:
        os.killpg(sh.pid, signal.SIGKILL)
        sh.wait()
    return 100.0 * (c1 - c0) / (t1 - t0)


def run(perch, target, runs=9, seconds=10):
    res = {"runs": runs, "seconds": seconds, "latency": {}, "cost": {}}
    with tempfile.TemporaryDirectory(prefix="perch-bench-wait-") as tmp:
        for name, poll in MODES:
            rows = [r for r in (_latency_once(perch, target, poll, tmp) for _ in range(runs)) if r]
            pm = [r["perch_ms"] for r in rows if r["perch_ms"] is not None]
            om = [r["after_main_ms"] for r in rows if r["after_main_ms"] is not None]
            res["latency"][name] = {
                "runs": rows, "how": rows[0]["how"] if rows else None,
                "perch_ms_median": statistics.median(pm) if pm else None,
                "perch_ms_max": max(pm) if pm else None,
                "after_main_ms_median": statistics.median(om) if om else None}
        for name, poll in MODES:
            res["cost"][name] = {"quiet_pct": _cost_once(perch, poll, seconds, False),
                                 "churn_pct": _cost_once(perch, poll, seconds, True)}
    return res


def fmt(v, f="%.1f"):
    return "-" if v is None else f % v


def render(W):
    L = ["", "--wait NAME (issue 19): first sample after the process appeared (median of %d "
         "runs, max), and perch's CPU while it waits (%d s)" % (W["runs"], W["seconds"]),
         "  %-9s %-9s %14s %10s %18s %12s %14s" % ("mode", "used", "first sample", "max",
                                                 "vs its main()", "CPU quiet",
                                                 "CPU 100 proc/s")]
    for name, _ in MODES:
        la, co = W["latency"].get(name, {}), W["cost"].get(name, {})
        L.append("  %-9s %-9s %11s ms %7s ms %15s ms %10s %% %12s %%" % (
            name, la.get("how") or "-", fmt(la.get("perch_ms_median")),
            fmt(la.get("perch_ms_max")), fmt(la.get("after_main_ms_median")),
            fmt(co.get("quiet_pct"), "%.2f"), fmt(co.get("churn_pct"), "%.2f")))
    return L


def goals(W, add):
    for name, _ in MODES:
        la, co = W["latency"].get(name, {}), W["cost"].get(name, {})
        v = la.get("perch_ms_median")
        add("--wait: first sample <= %g ms after the process appeared (%s)" % (LAT_GOAL_MS, name),
            None if v is None else v <= LAT_GOAL_MS,
            "median %s ms, max %s ms; %s ms vs its main() (target's clock; negative: before main)" % (
                fmt(v), fmt(la.get("perch_ms_max")), fmt(la.get("after_main_ms_median"))))
        c = [x for x in (co.get("quiet_pct"), co.get("churn_pct")) if x is not None]
        add("--wait: waiting costs < %g%% of a CPU (%s)" % (CPU_GOAL_PCT, name),
            max(c) < CPU_GOAL_PCT if c else None,
            "%s %% quiet, %s %% with 100 new processes/s" % (fmt(co.get("quiet_pct"), "%.2f"),
                                                            fmt(co.get("churn_pct"), "%.2f")))
