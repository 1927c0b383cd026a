#!/usr/bin/env python3
"""Consumer-side checks for perch's writers (stdlib only; jsonschema when installed).

  check_writers.py speedscope FILE SCHEMA   schema + index/weight checks
                                            (docs/design/formats.md 3.4)
  check_writers.py chrome FILE              trace events: phases, nesting per thread (4.7)
  check_writers.py chrome-samples FILE      stackFrames/samples references (4.5)
  check_writers.py svg FILE                 well-formed XML, frame geometry of the flame graph

Exit 0 when the file passes, 1 with a message otherwise. Prints "skip: ..." for checks it
cannot run (no jsonschema)."""
import json
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load_json(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")  # strict: invalid UTF-8 is an error
    except UnicodeDecodeError as e:
        fail("not UTF-8: %s" % e)
    try:
        return json.loads(text)
    except ValueError as e:
        fail("not JSON: %s" % e)


def check_speedscope(path, schema_path):
    doc = load_json(path)
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
        print("skip: python3 jsonschema not installed, schema not checked")
    if jsonschema:
        with open(schema_path) as f:
            schema = json.load(f)
        # the file's root is FileFormat.File
        root = dict(schema)
        root["$ref"] = "#/definitions/FileFormat.File"
        try:
            jsonschema.validate(doc, root)
        except jsonschema.ValidationError as e:
            fail("schema: %s at %s" % (e.message, list(e.absolute_path)))
        print("schema ok")
    if doc.get("$schema") != "https://www.speedscope.app/file-format-schema.json":
        fail("$schema")
    nframes = len(doc["shared"]["frames"])
    for fr in doc["shared"]["frames"]:
        if not fr["name"]:
            fail("empty frame name")
    if not doc["profiles"]:
        fail("no profile")
    for p in doc["profiles"]:
        if p["type"] != "sampled":
            fail("unexpected profile type")
        if len(p["samples"]) != len(p["weights"]):
            fail("%s: %d samples, %d weights" % (p["name"], len(p["samples"]), len(p["weights"])))
        for s in p["samples"]:
            for i in s:
                if not (isinstance(i, int) and 0 <= i < nframes):
                    fail("%s: frame index %r" % (p["name"], i))
        if any(w < 0 for w in p["weights"]):
            fail("negative weight")
        if p["endValue"] < p["startValue"]:
            fail("endValue < startValue")
        if p["endValue"] - p["startValue"] != sum(p["weights"]):
            fail("%s: range is not the sum of the weights" % p["name"])
    if doc.get("activeProfileIndex", 0) >= len(doc["profiles"]):
        fail("activeProfileIndex")


def check_chrome(path):
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents array")
    slices = {}
    names = set()
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        if ph not in ("M", "X", "C"):
            fail("unexpected phase %r" % ph)
        if not isinstance(ev.get("pid"), int):
            fail("pid not an integer: %r" % ev)
        if ph == "M":
            if ev.get("name") not in ("process_name", "thread_name", "process_sort_index",
                                      "thread_sort_index"):
                fail("metadata name %r" % ev.get("name"))
            if not (ev["args"].get("name") or isinstance(ev["args"].get("sort_index"), int)):
                fail("empty metadata args %r" % ev)
            if ev["name"] == "thread_name":
                names.add(ev["tid"])
            continue
        if not isinstance(ev.get("ts"), (int, float)) or ev["ts"] < 0:
            fail("bad ts %r" % ev)
        if ph == "C":
            if not ev.get("name") or not ev.get("args") or not all(
                    isinstance(v, (int, float)) for v in ev["args"].values()):
                fail("bad counter %r" % ev)
            continue
        if not isinstance(ev.get("dur"), (int, float)) or ev["dur"] < 0:
            fail("X without a valid dur: %r" % ev)
        if not isinstance(ev.get("tid"), int) or not ev.get("name"):
            fail("X without tid or name: %r" % ev)
        slices.setdefault((ev["pid"], ev["tid"]), []).append(ev)
    nslices = 0
    for key, evs in slices.items():
        if key[1] not in names:
            fail("thread %r has slices but no thread_name" % (key,))
        # in file order, parents come first at equal ts; check strict nesting with a stack
        # (integer ns to avoid float noise)
        stack = []
        last = -1
        for ev in evs:
            b = round(ev["ts"] * 1000)
            e = b + round(ev["dur"] * 1000)
            if b < last:
                fail("slices of %r not in time order" % (key,))
            last = b
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and e > stack[-1][1]:
                fail("slice %r [%d,%d) overlaps its parent %r ending %d" %
                     (ev["name"], b, e, stack[-1][2], stack[-1][1]))
            stack.append((b, e, ev["name"]))
            nslices += 1
    print("chrome ok: %d slices on %d threads" % (nslices, len(slices)))


def check_chrome_samples(path):
    doc = load_json(path)
    frames = doc["stackFrames"]
    for fid, fr in frames.items():
        if not fr.get("name") or "category" not in fr:
            fail("frame %s incomplete" % fid)
        if "parent" in fr and fr["parent"] not in frames:
            fail("frame %s: parent %s missing" % (fid, fr["parent"]))
    tids = {ev["tid"] for ev in doc["traceEvents"] if ev.get("name") == "thread_name"}
    for s in doc["samples"]:
        if str(s["sf"]) not in frames:
            fail("sample sf %r missing" % s["sf"])
        if s["tid"] not in tids:
            fail("sample of unnamed thread %r" % s["tid"])
        if not isinstance(s["ts"], (int, float)) or not isinstance(s["pid"], int):
            fail("bad sample %r" % s)
    print("chrome samples ok: %d frames, %d samples" % (len(frames), len(doc["samples"])))


def check_svg(path):
    try:
        tree = ET.parse(path)
    except ET.ParseError as e:
        fail("not well-formed XML: %s" % e)
    ns = "{http://www.w3.org/2000/svg}"
    svg = tree.getroot()
    if svg.tag != ns + "svg":
        fail("root is %s" % svg.tag)
    for el in svg.iter():
        for attr in ("href", "{http://www.w3.org/1999/xlink}href", "src"):
            if attr in el.attrib:
                fail("external reference %s" % el.attrib[attr])
    total = int(svg.get("data-total"))
    frames = {}
    for g in svg.iter(ns + "g"):
        if g.get("class") != "f":
            continue
        n = int(g.get("data-n"))
        rect = g.find(ns + "rect")
        title = g.find(ns + "title")
        if rect is None or title is None or g.find(ns + "text") is None:
            fail("frame %d incomplete" % n)
        frames[n] = (int(g.get("data-p")), int(g.get("data-s")), int(g.get("data-c")),
                     float(rect.get("x")), float(rect.get("width")), float(rect.get("y")))
        if not title.text or "samples" not in title.text or "%" not in title.text:
            fail("frame %d has no count in its tooltip" % n)
    if total and 0 not in frames:
        fail("no root frame")
    for n, (par, start, count, x, w, y) in frames.items():
        if n == 0:
            if count != total or start != 0:
                fail("root count %d != total %d" % (count, total))
            continue
        if par not in frames:
            fail("frame %d: parent %d missing" % (n, par))
        pp, ps, pc, px, pw, py = frames[par]
        if start < ps or start + count > ps + pc:
            fail("frame %d outside its parent" % n)
        if x + 0.011 < px or x + w > px + pw + 0.011 or y != py - 16:
            fail("frame %d not drawn on top of its parent" % n)
    # children of a node do not overlap
    kids = {}
    for n, f in frames.items():
        if n:
            kids.setdefault(f[0], []).append(f)
    for par, fs in kids.items():
        fs.sort(key=lambda f: f[1])
        for a, b in zip(fs, fs[1:]):
            if a[1] + a[2] > b[1]:
                fail("children of %d overlap" % par)
        if sum(f[2] for f in fs) > frames[par][2]:
            fail("children of %d count more than it" % par)
    scripts = list(svg.iter(ns + "script"))
    if len(scripts) != 1 or not scripts[0].text or "addEventListener" not in scripts[0].text:
        fail("no inline script")
    print("svg ok: %d frames" % len(frames))


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "speedscope":
        check_speedscope(path, sys.argv[3])
    elif kind == "chrome":
        check_chrome(path)
    elif kind == "chrome-samples":
        check_chrome_samples(path)
    elif kind == "svg":
        check_svg(path)
    else:
        fail("unknown kind " + kind)


if __name__ == "__main__":
    main()
