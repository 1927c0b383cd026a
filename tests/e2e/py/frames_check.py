#!/usr/bin/env python3
"""The frames of a recording against the app's own frame log (tests/e2e/check_frames.c).

  frames_check.py outputs LOG TRACE_JSON SENTRY_JSON
      LOG is the frames target's log (tests/targets/frames_main.c): the truth. The Chrome
      trace's frame slices must be exactly the log's frames (Flags 0) that start between the
      first and the last frame slice, in order, with the same durations (to 1 us) and the
      same slow/frozen marks (duration over the vsync period / over 700 ms), i.e. no frame
      lost between two polls of the 120-frame ring and none twice; the Sentry chunk's
      slow_frame_renders and frozen_frame_renders must hold those frames' durations and
      screen_frame_rates the log's refresh rate. Prints "frames ok: ..." or fails (exit 1).
  frames_check.py page HTML
      The report page in headless Chromium (tests/report/cdp.py): it loads without a console
      error and its summary names the frame counts; prints the summary's frames row.
"""
import json
import os
import sys

sys.dont_write_bytecode = True
FROZEN_NS = 700000000


def fail(msg):
    print("frames_check: " + msg)
    sys.exit(1)


def load_log(path):
    frames = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) != 6 or w[5] != ".":
                continue
            flags, intended, _start, end, period = (int(x) for x in w[:5])
            if flags == 0:
                frames.append((intended, end - intended, period))
    return frames


def classify(dur, period):
    return "frozen" if dur > FROZEN_NS else "slow" if dur > period else "ok"


def outputs(log_path, trace_path, sentry_path):
    log = load_log(log_path)
    with open(trace_path) as f:
        trace = json.load(f)
    tracks = {ev["tid"] for ev in trace["traceEvents"]
              if ev.get("ph") == "M" and ev["name"] == "thread_name"
              and ev["args"]["name"].startswith("frames")}
    slices = sorted((ev for ev in trace["traceEvents"]
                     if ev.get("ph") == "X" and ev.get("cat") == "frame"), key=lambda e: e["ts"])
    if not slices:
        fail("no frame slices in %s" % trace_path)
    if any(ev["tid"] not in tracks for ev in slices):
        fail("a frame slice is on a track not named 'frames'")
    # align: the first slice is the log frame whose start is ts * 1000 ns after the trace's
    # base, i.e. the log frames from the first slice's on, matched in order by duration
    durs = [round(ev["dur"] * 1000) for ev in slices]
    first = None
    for i in range(len(log)):
        if abs(log[i][1] - durs[0]) <= 1000 and all(
                i + k < len(log) and abs(log[i + k][1] - durs[k]) <= 1000
                for k in range(min(5, len(durs)))):
            first = i
            break
    if first is None:
        fail("the first frame slice (%.3f ms) matches no logged frame" % (durs[0] / 1e6))
    want = log[first:first + len(slices)]
    if len(want) != len(slices):
        fail("%d frame slices, the log has %d frames from the first one on" %
             (len(slices), len(want)))
    base = want[0][0] - round(slices[0]["ts"] * 1000)
    slow = frozen = 0
    for ev, (start, dur, period) in zip(slices, want):
        ts = base + round(ev["ts"] * 1000)
        if abs(ts - start) > 2000 or abs(round(ev["dur"] * 1000) - dur) > 1000:
            fail("frame slice at %.3f ms (%.3f ms long) is not the logged frame at +%.3f ms "
                 "(%.3f ms long): a frame lost or doubled" %
                 (ev["ts"] / 1e3, ev["dur"] / 1e3, (start - base) / 1e6, dur / 1e6))
        c = classify(dur, period)
        name = {"ok": "frame", "slow": "slow frame", "frozen": "frozen frame"}[c]
        if ev["name"] != name or ev["args"]["slow"] != (c == "slow") or \
                ev["args"]["frozen"] != (c == "frozen"):
            fail("frame of %.3f ms (budget %.3f ms) is %r, want %r" %
                 (dur / 1e6, period / 1e6, ev["name"], name))
        slow += c == "slow"
        frozen += c == "frozen"
    if len(slices) <= 120:
        fail("only %d frames: the recording should hold more than one 120-frame ring" %
             len(slices))

    with open(sentry_path) as f:
        chunk = json.load(f)
    m = chunk.get("measurements", {})
    for name, unit in (("slow_frame_renders", "nanosecond"), ("frozen_frame_renders", "nanosecond"),
                       ("screen_frame_rates", "hz")):
        if name in m and m[name].get("unit") != unit:
            fail("%s unit %r" % (name, m[name].get("unit")))
    got_slow = sorted(v["value"] for v in m.get("slow_frame_renders", {}).get("values", []))
    got_frozen = sorted(v["value"] for v in m.get("frozen_frame_renders", {}).get("values", []))
    want_slow = sorted(d for _, d, p in want if classify(d, p) == "slow")
    want_frozen = sorted(d for _, d, p in want if classify(d, p) == "frozen")
    if got_slow != want_slow or got_frozen != want_frozen:
        fail("Sentry slow %s frozen %s, the log says slow %s frozen %s" %
             (got_slow, got_frozen, want_slow, want_frozen))
    rates = m.get("screen_frame_rates", {}).get("values", [])
    hz = 1e9 / want[0][2]
    if not rates or abs(rates[0]["value"] - hz) > 0.01:
        fail("screen_frame_rates %r, want %.3f Hz" % (rates, hz))
    print("frames ok: %d frames (%d slow, %d frozen) match the app's log; Sentry: %d slow, "
          "%d frozen, %.2f Hz" % (len(slices), slow, frozen, len(got_slow), len(got_frozen),
                                  rates[0]["value"]))


def page(path):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "report"))
    import cdp  # noqa: E402
    b = cdp.Browser()
    try:
        b.navigate("file://" + os.path.abspath(path))
        b.wait_for("window.perchReport && (perchReport.ready || perchReport.error)", 60)
        if b.eval("perchReport.error") is not None:
            fail("the page did not load: %s" % b.eval("perchReport.error"))
        summary = b.eval("document.getElementById('summary').textContent")
        legend = b.eval("document.getElementById('legend').textContent")
        problems = b.problems()
    finally:
        b.close()
    if problems:
        fail("console problems: %r" % (problems,))
    i = summary.find("Android frames")
    if i < 0 or "slow frame" not in legend:
        fail("no frames in the summary or legend: %r %r" % (summary, legend))
    print("page ok: frames %s" % summary[i - 12:summary.find("(marked", i)].split("frames", 1)[-1])


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "outputs":
        outputs(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "page":
        page(sys.argv[2])
    else:
        print(__doc__)
        sys.exit(64)


if __name__ == "__main__":
    main()
