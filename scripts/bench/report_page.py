"""make bench, section "report page" (issue 20): the size of `perch report X.perch -o
report.html` for a 10-minute, 50-thread, 100 Hz recording (3 million samples) and the time
headless Chromium takes to show it.

The recording is written by build/bench/bin/report-gen (tests/bench/report_gen.c) through
perch's own recording writer, with app-like content (2000 functions, hot stacks 8-40 deep that
change every 30 s, wait frames, counters, stalls): recording 10 minutes for real would take 10
minutes. Render time = from Page.navigate to the page's ready mark (every view drawn, after two
animation frames; awaited through a promise the page resolves, not by polling), median of RUNS
loads in one browser (the samples block, which the first view does not need, may still be
being parsed then: the page reads it when idle or when a range is first selected); the
renderer's CPU seconds (SystemInfo.getProcessInfo) are given too, since other load on the
machine stretches wall time. `report_page.py --compare OLD.html NEW.html [ROUNDS]` loads two
pages interleaved in one browser (medians; the first round not counted).
Python 3 standard library only (tests/report/cdp.py)."""
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "report"))
sys.dont_write_bytecode = True
import cdp  # noqa: E402

SIZE_GOAL = 15e6
TIME_GOAL = 2.0


READY = "window.perchReport && (perchReport.ready || perchReport.error)"
# a promise the page resolves itself within 5 ms of its ready mark: polling from here every 50
# ms (cdp.Browser.wait_for) added 50-70 ms of the poll's own to every load
READY_PROMISE = ("new Promise(function (res) { (function check() { if (%s) res(true); else "
                 "setTimeout(check, 5); })(); })" % READY)


def wait_ready(b):
    try:
        b.eval(READY_PROMISE, await_promise=True)
    except cdp.CdpError:  # evaluated in the page being left: poll the new one
        b.wait_for(READY, 180)


def load(b, page):
    """One load of @page in browser @b: (wall s from navigation to the ready mark, renderer CPU
    s, the page's own timing)."""
    def cpu():
        info = b.send("SystemInfo.getProcessInfo", _browser=True)["processInfo"]
        return sum(p["cpuTime"] for p in info if p["type"] == "renderer")
    c0, t = cpu(), time.monotonic()
    b.navigate("file://" + os.path.abspath(page))
    wait_ready(b)
    wall = time.monotonic() - t
    err = b.eval("perchReport.error")
    if err:
        raise RuntimeError("the page failed: " + err)
    return wall, cpu() - c0, b.eval("perchReport.timing")


def run(perch, gen, out, runs=3, seconds=600, threads=50, hz=100):
    rec = os.path.join(out, "report-%ds-%dt-%dhz.perch" % (seconds, threads, hz))
    page = os.path.join(out, "report-page.html")
    res = {"seconds": seconds, "threads": threads, "hz": hz}
    t = time.monotonic()
    subprocess.run([gen, rec, str(seconds), str(threads), str(hz)], check=True)
    res["gen_s"] = time.monotonic() - t
    res["recording_bytes"] = os.path.getsize(rec)
    t = time.monotonic()
    subprocess.run([perch, "report", "-q", rec, "-o", page], check=True)
    res["report_s"] = time.monotonic() - t
    res["page_bytes"] = os.path.getsize(page)
    b = cdp.Browser(timeout=180)
    loads = []
    try:
        for _ in range(runs):
            wall, cpu, timing = load(b, page)
            loads.append({"wall_s": wall, "renderer_cpu_s": cpu, "timing": timing})
        b.pump(0.2)
        res["problems"] = b.problems()
    finally:
        b.close()
    res["loads"] = loads
    res["render_s"] = statistics.median(x["wall_s"] for x in loads)
    res["renderer_cpu_s"] = statistics.median(x["renderer_cpu_s"] for x in loads)
    res["samples"] = seconds * threads * hz
    with open("/proc/loadavg") as f:
        res["loadavg"] = f.read().split()[0]
    return res


def compare(pages, runs=8):
    """Load @pages in turn in one browser, @runs rounds (the first round is a warm-up, not
    counted): per page the medians of wall time, renderer CPU and the page's own
    navigation-to-ready time (performance.now() at its ready mark)."""
    b = cdp.Browser(timeout=180)
    got = {p: [] for p in pages}
    try:
        for r in range(runs + 1):
            for p in (pages if r % 2 else pages[::-1]):
                wall, cpu, timing = load(b, p)
                if r:
                    got[p].append((wall, cpu, timing["sinceStart"] / 1000.0))
    finally:
        b.close()
    out = {}
    for p, v in got.items():
        out[p] = {"wall_s": statistics.median(x[0] for x in v),
                  "renderer_cpu_s": statistics.median(x[1] for x in v),
                  "ready_s": statistics.median(x[2] for x in v),
                  "ready_all": [round(x[2], 3) for x in v]}
    return out


def render(res):
    if not res:
        return []
    t = res["loads"][len(res["loads"]) // 2]["timing"]
    return [
        "",
        "Report page (perch report X.perch -o report.html; recording by report-gen: %d s, %d "
        "threads, %d Hz, %d samples)" % (res["seconds"], res["threads"], res["hz"],
                                         res["samples"]),
        "  recording %.1f MB (written in %.1f s), page %.2f MB (written in %.1f s)   goal < %.0f MB: %s"
        % (res["recording_bytes"] / 1e6, res["gen_s"], res["page_bytes"] / 1e6, res["report_s"],
           SIZE_GOAL / 1e6, "ok" if res["page_bytes"] < SIZE_GOAL else "MISS"),
        "  headless Chromium: shown in %.2f s (median of %d loads; renderer CPU %.2f s; load "
        "average %s)   goal < %.0f s: %s" % (
            res["render_s"], len(res["loads"]), res["renderer_cpu_s"], res["loadavg"], TIME_GOAL,
            "ok" if res["render_s"] < TIME_GOAL else "MISS"),
        "  in the page: its script starts %.0f ms after navigation (the browser reads and parses "
        "the page before it), inflate %.0f ms, decode %.0f ms (%s), draw %.0f ms (%s)%s" % (
            t.get("scriptStart", 0), t["inflate"], t["decode"],
            ", ".join("%s %.0f" % kv for kv in t.get("decodeSteps", {}).items()), t["draw"],
            ", ".join("%s %.0f" % kv for kv in t["steps"].items()),
            "" if not res["problems"] else "; PROBLEMS: " + "; ".join(res["problems"])),
    ]


if __name__ == "__main__":
    # python3 scripts/bench/report_page.py --compare OLD.html NEW.html [RUNS]: the same
    # recording's page before and after a change, loads interleaved in one browser
    if len(sys.argv) >= 4 and sys.argv[1] == "--compare":
        with open("/proc/loadavg") as f:
            print("load average before: " + f.read().strip())
        res = compare(sys.argv[2:4], int(sys.argv[4]) if len(sys.argv) > 4 else 8)
        for page, r in res.items():
            print("%s: ready %.3f s (page's own navigation to ready), wall %.3f s, renderer CPU "
                  "%.3f s, median of %d; loads %s" % (page, r["ready_s"], r["wall_s"],
                                                      r["renderer_cpu_s"], len(r["ready_all"]),
                                                      r["ready_all"]))
        with open("/proc/loadavg") as f:
            print("load average after: " + f.read().strip())
    else:
        sys.exit("usage: report_page.py --compare OLD.html NEW.html [RUNS]")
