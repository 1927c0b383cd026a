#!/usr/bin/env python3
"""The report page (`perch report X.perch -o report.html`) as a person would look at it: headless
Chromium opens the page of a real recording, the test drags a time range on the timeline, types
a search, clicks a frame to zoom, picks a thread and a view, and checks what the page shows.

Expected answers come from outside the page:
  - the sample counts, top functions, search and zoom figures from the same recording read by
    `perch report` into folded stacks (with --start/--end/--tid for the range and the thread),
    which the e2e suites check against gdb, perf and the targets themselves;
  - the thread states from the waits target's own design (tests/targets/waits_main.c: reader
    blocks in read() on a FIFO, locker on a mutex, sleeper in nanosleep, spinner runs).
Times in the page are rounded to 1/10 of a sampling period, so a sample within that of a
dragged range's end may fall on either side of it, and a sample can stand for several ticks (a
blocked thread's reused stack, credited for ticks perch was late for on a loaded machine): a
count over a range must lie between perch report's over the range shrunk and grown by MARGIN_S
at each end.
Screenshots go to OUT/ (report-full.png, report-zoomed.png); the layout is checked by element
boxes, not pixels. Ends with "N passed, N failed"; exit 1 on any failure.

usage: check_report_html.py --perch build/perch --targets build/targets --out build/report
"""
import argparse
import base64
import html as html_mod
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RESULTS = {"passed": 0, "failed": 0}
# two of the page's time units at the recording's 100 Hz (a unit is 1/10 of a period)
MARGIN_S = 0.002


def check(ok, what, detail=""):
    RESULTS["passed" if ok else "failed"] += 1
    print("%s: %s%s" % ("ok" if ok else "FAIL", what, "" if ok else "\n    " + str(detail)[:2000]),
          flush=True)
    return ok


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    if r.returncode:
        raise SystemExit("%s exited with %d:\n%s%s" % (cmd, r.returncode, r.stdout, r.stderr))
    return r.stdout


def folded(perch, rec, *args):
    """[(frames without the thread root, count)] of `perch report REC ARGS --format folded`."""
    out = run([perch, "report", "-q", rec, "--format", "folded"] + list(args))
    lines = []
    for line in out.splitlines():
        stack, count = line.rsplit(" ", 1)
        lines.append((stack.split(";")[1:], int(count)))
    return lines


def total(lines, pred=lambda f: True):
    return sum(c for f, c in lines if pred(f))


def self_counts(lines):
    out = {}
    for f, c in lines:
        if f:
            out[f[-1]] = out.get(f[-1], 0) + c
    return out


def record(perch, targets, tmp):
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    rec = os.path.join(tmp, "waits.perch")
    run([perch, "record", "-q", "-d", "3", "--stall", "100", "-o", rec, "--",
         os.path.join(targets, "waits"), "4", fifo])
    return rec


def state(b):
    # a time range waits for the samples block when it comes before the page inflated it
    b.wait_for("!perchReport.state().pending", 30)
    return json.loads(b.eval("JSON.stringify(perchReport.state())"))


def rect(b, sel):
    return b.eval("(function(){var r=document.querySelector(%s).getBoundingClientRect();"
                  "return {left:r.left,top:r.top,width:r.width,height:r.height,"
                  "bottom:r.bottom,right:r.right};})()" % json.dumps(sel))


def scroll_to(b, sel):
    b.eval("document.querySelector(%s).scrollIntoView({block:'start'})" % json.dumps(sel))
    time.sleep(0.05)


def check_layout(b, st, width):
    order = ["#head", "#controls", "#timeline-sec", "#charts", "#flame-sec", "#tables",
             "#stalls-sec"]
    b.eval("window.scrollTo(0,0)")
    boxes = [rect(b, s) for s in order]
    ok = all(boxes[i]["bottom"] <= boxes[i + 1]["top"] + 0.5 for i in range(len(boxes) - 1))
    check(ok, "sections stacked top to bottom without overlap", boxes)
    check(all(bx["right"] <= width + 0.5 and bx["width"] > width * 0.8 for bx in boxes),
          "sections span the page and stay inside it", boxes)
    tl = rect(b, "#timeline")
    plot = st["timeline"]["plot"]
    lefts = [c["left"] for c in st["charts"]]
    check(lefts and all(abs(tl["left"] + plot["left"] - x) <= 1.5 for x in lefts) and
          all(abs(plot["width"] - c["width"]) <= 1.5 for c in st["charts"]),
          "timeline and charts share one time axis (plot areas line up)",
          (tl["left"] + plot["left"], plot["width"], st["charts"]))
    fl = rect(b, "#flame")
    check(fl["width"] >= width * 0.9 and fl["height"] >= 16 * 5, "flame graph canvas size", fl)
    rows = [r for r in st["timeline"]["rows"] if "tid" in r]
    check(len(rows) == st["threads"] == 5, "one timeline row per thread", rows)
    check(all(rows[i]["y"] < rows[i + 1]["y"] for i in range(len(rows) - 1)),
          "timeline rows in order, one under the other", rows)


# the SVG flame graph's kind labels (src/out/out-flamegraph.c kind_label) -> profile frame kinds
SVG_KINDS = {"native": 0, "pseudo": 1, "kernel": 2, "JIT": 3, "interpreted": 4, "AOT": 5}


def svg_fills(path):
    """{(name, kind number): fill} of the frames of a flame graph SVG written by perch."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for m in re.finditer(r'data-k="([^"]*)" data-name="([^"]*)">.*?fill="(rgb\([^)]*\))"',
                             f.read()):
            if m.group(1) in SVG_KINDS:
                name = html_mod.unescape(m.group(2))
                out[(name, SVG_KINDS[m.group(1)])] = m.group(3)
    return out


def check_colours(b, st, perch, rec, tmp):
    """Frames keep the SVG flame graph's colour per kind: the page's frames against the SVG of
    the same recording, the page's colour function against a stored SVG that has kernel and
    interpreted frames too, and no two kinds share a colour."""
    svg = os.path.join(tmp, "same.svg")
    run([perch, "report", "-q", rec, "-o", svg])
    fills = svg_fills(svg)
    pairs = [(f["name"], f["kind"], f["colour"]) for f in st["frames"]
             if f["kind"] < 100 and not f["hit"]]
    bad = [(n, k, c, fills.get((n, k))) for n, k, c in pairs if fills.get((n, k)) != c]
    check(len(pairs) >= 5 and not bad,
          "flame frames have the SVG flame graph's colours (same recording)", bad[:5])
    # names the SVG had to clean (invalid UTF-8, control characters) are coloured by their raw
    # bytes there, which the page never sees: left out
    gold = {k: v for k, v in svg_fills(os.path.join(ROOT, "fixtures/golden/flamegraph/demo.svg"))
            .items() if "\ufffd" not in k[0] and not re.search(r"[\x00-\x1f]", k[0])}
    got = b.eval("(function(q){return q.map(function(x){return perchReport.colour(x[0],x[1]);});})"
                 "(%s)" % json.dumps([list(k) for k in gold]))
    bad = [(k, g, gold[k]) for k, g in zip(gold, got) if g != gold[k]]
    check(len({k for _, k in gold}) >= 4 and not bad,
          "the page colours the golden demo.svg's native, pseudo, kernel and interpreted "
          "frames as perch's SVG does", bad[:5])
    names = ["f%d" % i for i in range(300)]
    cols = b.eval("(function(n){var o=[];for(var k=0;k<6;k++)o.push(n.map(function(x){"
                  "return perchReport.colour(x,k);}));return o;})(%s)" % json.dumps(names))
    shared = [(i, j) for i in range(6) for j in range(i + 1, 6) if set(cols[i]) & set(cols[j])]
    check(not shared, "the six frame kinds never share a colour", shared)


def check_hostile(b, html, tmp):
    """A page whose data blocks were damaged (cut short; a call-tree node that is its own
    parent, which would send the tree walk round in circles) says it cannot show the report,
    in time, and does not hang: the page must survive what it is given."""
    m = re.search(r'(<script id="perch-data"[^>]*>)([^<]*)(</script>)', html)
    raw = zlib.decompress(base64.b64decode(m.group(2).strip()))
    jlen = struct.unpack("<I", raw[8:12])[0]
    head = json.loads(raw[12:12 + jlen])
    off = 12 + jlen + head["nodes"]["parent"][0]
    looped = raw[:off] + b"\0" + raw[off + 1:]  # node 1: parent = itself
    cases = {"cut short": m.group(2).strip()[:len(m.group(2)) // 2],
             "a node that is its own parent": base64.b64encode(zlib.compress(looped)).decode()}
    for what, data in cases.items():
        page = os.path.join(tmp, "hostile.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html[:m.start(2)] + data + html[m.end(2):])
        b.navigate("file://" + page)
        try:
            b.wait_for("window.perchReport && (perchReport.ready || perchReport.error)", 30)
            err = b.eval("perchReport.error")
            shown = b.eval("document.getElementById('status').textContent")
        except cdp.CdpError as e:
            err, shown = None, str(e)
        check(err and "cannot show this report" in shown,
              "a data block %s: the page says it cannot show it" % what, (err, shown))
    # the samples block (read after the first view is drawn) cut short: the first view is
    # shown, then the page says it cannot show the report
    m = re.search(r'(<script id="perch-samples"[^>]*>)([^<]*)(</script>)', html)
    page = os.path.join(tmp, "hostile.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(html[:m.start(2)] + m.group(2).strip()[:len(m.group(2)) // 2] + html[m.end(2):])
    b.navigate("file://" + page)
    try:
        b.wait_for("window.perchReport && perchReport.error", 30)
        err = b.eval("perchReport.error")
        shown = b.eval("document.getElementById('status').textContent")
    except cdp.CdpError as e:
        err, shown = None, str(e)
    check(err and "cannot show this report" in shown,
          "the samples block cut short: the page says it cannot show it", (err, shown))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perch", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    a = ap.parse_args()
    perch = os.path.abspath(a.perch)
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="perch-report-")
    width, height = 1400, 1000
    b = None
    try:
        rec = record(perch, os.path.abspath(a.targets), tmp)
        page = os.path.join(tmp, "report.html")
        run([perch, "report", "-q", rec, "-o", page])
        everything = folded(perch, rec)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        check(not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html, re.I),
              "the page names no outside resource")

        b = cdp.Browser(a.chromium, width, height)
        b.navigate("file://" + page)
        b.wait_for("window.perchReport && (perchReport.ready || perchReport.error)", 60)
        check(b.eval("perchReport.error") is None, "the page loads", b.eval("perchReport.error"))
        st = state(b)
        all_total = total(everything)
        check(st["samples"] == all_total, "samples shown == perch report's folded total",
              (st["samples"], all_total))
        selfs = self_counts(everything)
        top = st["topSelf"][0]
        best = max(selfs.values())
        check(int(top["cells"][1]) == best and selfs.get(top["name"]) == best,
              "top function by self == the folded stacks' hottest leaf", (top, best))
        check_colours(b, st, perch, rec, tmp)
        summary = b.eval("document.getElementById('summary').textContent")
        check(all(w in summary for w in ("waits (pid", "3.00 s", "100 Hz", "wall",
                                          "%d in 5 threads" % all_total, "unwound to root",
                                          "missed ticks")),
              "the summary: target, duration, rate, mode, samples, unwind, errors", summary)
        states = {r["name"]: r["states"] for r in st["timeline"]["rows"] if "tid" in r}
        expect = {"reader": "I/O", "locker": "lock", "sleeper": "sleeping", "spinner": "running"}
        for name, want in expect.items():
            sh = states.get(name, {})
            check(sh and max(sh, key=sh.get) == want and sh[want] >= 0.8 * sum(sh.values()),
                  "thread %s is mostly %s on the timeline" % (name, want), sh)
        b.screenshot(os.path.join(a.out, "report-full.png"))
        check_layout(b, st, width)

        # drag a time range on the timeline, across the spinner's row
        scroll_to(b, "#timeline-sec")
        tl = rect(b, "#timeline")
        plot = st["timeline"]["plot"]
        row = [r for r in st["timeline"]["rows"] if r.get("name") == "spinner"][0]
        xs = [tl["left"] + plot["left"] + s / st["end"] * plot["width"] for s in (0.8, 2.2)]
        y = tl["top"] + row["y"] + 7
        b.drag(xs[0], y, xs[1], y)
        st = state(b)
        px = st["end"] / plot["width"]
        rng = st["range"]
        check(rng and abs(rng[0] - 0.8) <= 2 * px and abs(rng[1] - 2.2) <= 2 * px,
              "dragging 0.8 s to 2.2 s on the timeline selects that range", rng)
        start, end = rng[0] - st["first"], rng[1] - st["first"]
        win = ["--start", "%.6f" % start, "--end", "%.6f" % end]
        inner = ["--start", "%.6f" % (start + MARGIN_S), "--end", "%.6f" % (end - MARGIN_S)]
        outer = ["--start", "%.6f" % max(0.0, start - MARGIN_S), "--end", "%.6f" % (end + MARGIN_S)]
        part = folded(perch, rec, *win)
        lo, hi = total(folded(perch, rec, *inner)), total(folded(perch, rec, *outer))
        tol = max(st["threads"], hi - lo)
        check(lo <= st["samples"] <= hi,
              "samples in the range == perch report --start/--end",
              (st["samples"], lo, total(part), hi))
        psel = self_counts(part)
        top = st["topSelf"][0]
        range_samples, range_top = st["samples"], top["name"]
        check(abs(int(top["cells"][1]) - max(psel.values())) <= tol and
              abs(psel.get(top["name"], 0) - max(psel.values())) <= tol,
              "top function by self in the range matches", (top, sorted(psel.items())[:8]))
        check(b.eval("document.getElementById('range').textContent").startswith(
            "%.3f s" % rng[0]), "the range is shown in the controls",
            b.eval("document.getElementById('range').textContent"))

        # search: type into the search box
        scroll_to(b, "#controls")
        sr = rect(b, "#search")
        b.click(sr["left"] + 20, sr["top"] + sr["height"] / 2)
        b.type_text("spinner|locker")
        st = state(b)
        want = total(part, lambda f: any(re.search("spinner|locker", x) for x in f))
        check(st["matched"] is not None and abs(st["matched"] - want) <= tol,
              "search 'spinner|locker' matches the folded stacks' count", (st["matched"], want))
        text = b.eval("document.getElementById('matched').textContent")
        check(text.startswith("Matched: ") and str(st["matched"]) in text,
              "the match share is shown", text)
        check(any(f["hit"] and f["name"] == "spinner" for f in st["frames"]) and
              not any(f["hit"] and not re.search("spinner|locker", f["name"])
                      for f in st["frames"]), "matching frames (and only they) are highlighted")

        # zoom: click the spinner frame
        scroll_to(b, "#flame-sec")
        fr = rect(b, "#flame")
        sp = [f for f in st["frames"] if f["name"] == "spinner" and not f["faded"]][0]
        b.click(fr["left"] + sp["x"] + sp["w"] / 2, fr["top"] + sp["y"] + 8)
        st = state(b)
        want = total(part, lambda f: "spinner" in f)
        check(st["zoomed"] == "spinner" and abs(st["zoomedSamples"] - want) <= tol,
              "clicking spinner zooms on it (samples == folded stacks through spinner)",
              (st["zoomed"], st["zoomedSamples"], want))
        sp = [f for f in st["frames"] if f["name"] == "spinner" and not f["faded"]]
        check(sp and abs(sp[0]["w"] - fr["width"]) <= 1, "the zoomed frame spans the width",
              (sp, fr["width"]))
        check(all(f["faded"] for f in st["frames"] if f["depth"] < sp[0]["depth"]),
              "its callers are drawn faded above/below it")
        check(st["func"] == "spinner" and any(r["name"] == "start_thread" for r in st["callers"])
              and any(r["name"] == "[self]" for r in st["callees"]),
              "callers (start_thread) and callees ([self]) of the selected function",
              (st["callers"], st["callees"]))
        b.screenshot(os.path.join(a.out, "report-zoomed.png"))
        b.key("Escape", "Escape", 27)

        # one thread: the locker
        idx = [i for i, r in enumerate(r for r in st["timeline"]["rows"] if "tid" in r)
               if r["name"] == "locker"][0]
        tid = [r["tid"] for r in st["timeline"]["rows"] if r.get("name") == "locker"][0]
        b.eval("(function(){var s=document.getElementById('thread-filter');s.value='t:%d';"
               "s.dispatchEvent(new Event('change'));})()" % idx)
        st = state(b)
        lo = total(folded(perch, rec, "--tid", str(tid), *inner))
        hi = total(folded(perch, rec, "--tid", str(tid), *outer))
        want = (lo, total(folded(perch, rec, "--tid", str(tid), *win)), hi)
        check(lo <= st["samples"] <= hi and
              any(f["name"] == "[lock futex]" for f in st["frames"]) and
              not any(f["name"] == "spinner" for f in st["frames"]),
              "the thread filter shows the locker alone (== perch report --tid)",
              (st["samples"], want))
        b.eval("(function(){var s=document.getElementById('thread-filter');s.value='all';"
               "s.dispatchEvent(new Event('change'));})()")

        # views: icicle puts the root on top; left-heavy orders by weight
        b.eval("(function(){var s=document.getElementById('view');s.value='left-heavy';"
               "s.dispatchEvent(new Event('change'));})()")
        st = state(b)
        root = [f for f in st["frames"] if f["depth"] == 0][0]
        kids = sorted([f for f in st["frames"] if f["depth"] == 1], key=lambda f: f["x"])
        check(root["y"] == 0 and all(kids[i]["samples"] >= kids[i + 1]["samples"]
                                     for i in range(len(kids) - 1)),
              "left-heavy: root on top, heaviest first", kids)

        # a double-click on the timeline gives the whole recording back
        scroll_to(b, "#timeline-sec")
        tl = rect(b, "#timeline")
        b.mouse("mouseMoved", xs[0], tl["top"] + row["y"] + 7)
        b.mouse("mousePressed", xs[0], tl["top"] + row["y"] + 7, buttons=1, clicks=2)
        b.mouse("mouseReleased", xs[0], tl["top"] + row["y"] + 7, clicks=2)
        st = state(b)
        check(st["range"] is None and st["samples"] == all_total,
              "double-click: the whole recording again", (st["range"], st["samples"]))

        # the same range asked for as soon as the first view is shown (most likely before the
        # page has read its samples block: it then waits for it)
        b.eval("window.perchLeft = true")
        b.navigate("file://" + page)
        for _ in range(50):  # evaluated in the page being left: again in the new one
            try:
                early = b.eval("new Promise(function (res) { (function c() { if (!window.perchLeft "
                               "&& window.perchReport && perchReport.ready) { perchReport.setRange("
                               "%r, %r); res(perchReport.state().pending); } else setTimeout(c, 1);"
                               " })(); })" % (rng[0], rng[1]), await_promise=True)
                break
            except cdp.CdpError:
                time.sleep(0.05)
        st = state(b)
        check(st["samples"] == range_samples and st["topSelf"][0]["name"] == range_top,
              "a range selected at once (before the samples were read: %s) gives the same "
              "samples and top function" % early,
              (st["samples"], range_samples, st["topSelf"][0]["name"], range_top))

        b.pump(0.3)
        problems = b.problems()
        check(not problems, "no console errors or warnings, no network requests", problems)
        check_hostile(b, html, tmp)
    finally:
        if b:
            b.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
