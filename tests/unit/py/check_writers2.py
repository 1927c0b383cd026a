#!/usr/bin/env python3
"""Consumer-side checks for perch's Sentry and ART trace writers (stdlib only).

  check_writers2.py sentry FILE [--dump]   Relay's rules for a v2 profile chunk
                                           (docs/design/formats.md 5.10)
  check_writers2.py sentry-envelope FILE   an envelope of profile_chunk items (5.1), each checked
  check_writers2.py arttrace FILE [--dump] a perflib-style reader of a non-streaming .trace (6.8)

Exit 0 when the file passes, 1 with "FAIL: ..." otherwise. "warn: ..." lines are what Relay
would drop without rejecting. --dump prints what a reader sees: for sentry one line per sample
"thread_id timestamp leaf;...;root" (function names, "module.function" when a module is set);
for arttrace one line per record "tid enter|exit|unroll wall_us class.method"."""
import json
import re
import struct
import sys

HEX32 = re.compile(r"^[0-9a-f]{32}$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
ADDR = re.compile(r"^0x[0-9a-f]+$")
UNITS = {"nanosecond", "ns", "hertz", "hz", "byte", "percent", "nanojoule", "nj"}
IMAGE_TYPES = {"macho", "symbolic", "sourcemap", "proguard"}
MAX_CHUNK_S = 66.0


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def load_json_text(data, what):
    try:
        text = data.decode("utf-8")  # strict: invalid UTF-8 is an error
    except UnicodeDecodeError as e:
        fail("%s: not UTF-8: %s" % (what, e))
    try:
        return json.loads(text)
    except ValueError as e:
        fail("%s: not JSON: %s" % (what, e))


def check_sentry_chunk(doc, dump=False):
    if not isinstance(doc, dict):
        fail("chunk is not an object")
    if doc.get("version") != "2":
        fail("version %r" % doc.get("version"))
    for k in ("chunk_id", "profiler_id"):
        if not isinstance(doc.get(k), str) or not HEX32.match(doc[k]):
            fail("%s %r is not 32 lowercase hex digits" % (k, doc.get(k)))
    for k in ("platform", "release"):
        if not isinstance(doc.get(k), str) or not doc[k]:
            fail("%s missing" % k)
    if "environment" in doc and not isinstance(doc["environment"], str):
        fail("environment")
    sdk = doc.get("client_sdk")
    if not isinstance(sdk, dict) or not all(isinstance(sdk.get(k), str) and sdk[k]
                                            for k in ("name", "version")):
        fail("client_sdk needs name and version")
    prof = doc.get("profile")
    if not isinstance(prof, dict):
        fail("no profile")
    frames, stacks, samples = prof.get("frames"), prof.get("stacks"), prof.get("samples")
    if not isinstance(samples, list) or not samples:
        fail("no samples (Relay: not enough samples)")
    if not isinstance(stacks, list) or not stacks:
        fail("no stacks")
    if not isinstance(frames, list) or not frames:
        fail("no frames")
    for i, fr in enumerate(frames):
        if not isinstance(fr, dict):
            fail("frame %d is not an object" % i)
        if not any(k in fr for k in ("function", "filename", "instruction_addr")):
            fail("frame %d has no function, filename or instruction_addr" % i)
        for k in ("function", "filename", "abs_path", "module", "package", "platform"):
            if k in fr and not isinstance(fr[k], str):
                fail("frame %d: %s is not a string" % (i, k))
        for k in ("lineno", "colno"):
            if k in fr and (not is_int(fr[k]) or fr[k] < 0):
                fail("frame %d: %s" % (i, k))
        if "in_app" in fr and not isinstance(fr["in_app"], bool):
            fail("frame %d: in_app" % i)
        if "instruction_addr" in fr and not ADDR.match(fr["instruction_addr"]):
            fail("frame %d: instruction_addr %r" % (i, fr["instruction_addr"]))
    for i, st in enumerate(stacks):
        if not isinstance(st, list):
            fail("stack %d is not an array" % i)
        for fi in st:
            if not is_int(fi) or not 0 <= fi < len(frames):
                fail("stack %d: frame index %r out of range" % (i, fi))
    non_idle = {}
    times = []
    for i, s in enumerate(samples):
        if not isinstance(s, dict):
            fail("sample %d" % i)
        if not isinstance(s.get("thread_id"), str):
            fail("sample %d: thread_id %r is not a string" % (i, s.get("thread_id")))
        sid = s.get("stack_id")
        if not is_int(sid) or not 0 <= sid < len(stacks):
            fail("sample %d: stack_id %r out of range" % (i, sid))
        if not is_num(s.get("timestamp")) or s["timestamp"] < 0:
            fail("sample %d: timestamp %r" % (i, s.get("timestamp")))
        times.append(s["timestamp"])
        non_idle.setdefault(s["thread_id"], 0)
        if stacks[sid]:
            non_idle[s["thread_id"]] += 1
    if max(times) - min(times) > MAX_CHUNK_S:
        fail("samples span %.3f s > %d s" % (max(times) - min(times), MAX_CHUNK_S))
    for tid, n in sorted(non_idle.items()):
        if n < 2:
            print("warn: thread %s has %d non-idle sample(s): Relay drops it" % (tid, n))
    tm = prof.get("thread_metadata", {})
    if not isinstance(tm, dict):
        fail("thread_metadata")
    for tid, meta in tm.items():
        if not isinstance(meta, dict):
            fail("thread_metadata %s" % tid)
        if "name" in meta and not isinstance(meta["name"], str):
            fail("thread_metadata %s: name" % tid)
        if "priority" in meta and not is_int(meta["priority"]):
            fail("thread_metadata %s: priority" % tid)
        if tid not in non_idle:
            print("warn: thread_metadata of thread %s without samples" % tid)
    meas = doc.get("measurements", {})
    if not isinstance(meas, dict):
        fail("measurements")
    for name, m in meas.items():
        if not isinstance(m, dict) or m.get("unit") not in UNITS:
            fail("measurement %s: unit %r" % (name, m.get("unit") if isinstance(m, dict) else m))
        if not isinstance(m.get("values"), list) or not m["values"]:
            fail("measurement %s: values is not a non-empty array" % name)
        for v in m["values"]:
            if not isinstance(v, dict) or not is_num(v.get("timestamp")):
                fail("measurement %s: timestamp in %r" % (name, v))
            val = v.get("value")
            if isinstance(val, str):
                try:
                    float(val)
                except ValueError:
                    fail("measurement %s: value %r" % (name, val))
            elif not is_num(val):
                fail("measurement %s: value %r" % (name, val))
    images = doc.get("debug_meta", {}).get("images", [])
    ranges = []
    for im in images:
        if im.get("type") not in IMAGE_TYPES:
            fail("image type %r" % im.get("type"))
        if im["type"] == "symbolic":
            if not UUID.match(im.get("debug_id", "")):
                fail("image debug_id %r" % im.get("debug_id"))
            for k in ("image_addr", "image_vmaddr"):
                if k in im and not ADDR.match(str(im[k])):
                    fail("image %s %r" % (k, im[k]))
            if not is_int(im.get("image_size")) or im["image_size"] <= 0:
                fail("image_size %r" % im.get("image_size"))
            if not isinstance(im.get("code_file"), str):
                fail("image code_file")
            lo = int(im["image_addr"], 16)
            ranges.append((lo, lo + im["image_size"], im["code_file"]))
    ranges.sort()
    for a, b in zip(ranges, ranges[1:]):
        if a[1] > b[0]:
            fail("images %s and %s overlap" % (a[2], b[2]))
    for i, fr in enumerate(frames):
        if "instruction_addr" in fr:
            addr = int(fr["instruction_addr"], 16)
            if not any(lo <= addr < hi for lo, hi, _ in ranges):
                fail("frame %d: instruction_addr %s in no image" % (i, fr["instruction_addr"]))
    if dump:
        def name(fr):
            fn = fr.get("function", fr.get("instruction_addr", "?"))
            return fr["module"] + "." + fn if "module" in fr else fn
        for s in sorted(samples, key=lambda s: (s["timestamp"], s["thread_id"])):
            print("%s %.6f %s" % (s["thread_id"], s["timestamp"],
                                  ";".join(name(frames[i]) for i in stacks[s["stack_id"]])))
        for name_, m in sorted(meas.items()):
            for v in m["values"]:
                print("measurement %s %s %.6f %s" % (name_, m["unit"], v["timestamp"],
                                                     v["value"]))
    return len(samples), len(stacks), len(frames), len(non_idle), min(times), max(times)


def check_sentry(path, dump):
    with open(path, "rb") as f:
        doc = load_json_text(f.read(), path)
    n = check_sentry_chunk(doc, dump)
    print("sentry ok: %d samples, %d stacks, %d frames, %d threads" % n[:4])


def check_envelope(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        fail("envelope does not end in a newline")
    pos = data.index(b"\n")
    head = load_json_text(data[:pos], "envelope header")
    if not HEX32.match(head.get("event_id", "")):
        fail("envelope event_id")
    pos += 1
    chunks, profiler_ids, total = 0, set(), 0
    last_end = None
    while pos < len(data):
        end = data.index(b"\n", pos)
        ih = load_json_text(data[pos:end], "item header")
        pos = end + 1
        if ih.get("type") != "profile_chunk":
            fail("item type %r" % ih.get("type"))
        length = ih.get("length")
        if not is_int(length) or pos + length > len(data):
            fail("item length %r" % length)
        payload = data[pos:pos + length]
        if b"\n" in payload:
            fail("a newline inside an item payload")
        pos += length
        if pos < len(data):
            if data[pos:pos + 1] != b"\n":
                fail("no newline after an item")
            pos += 1
        doc = load_json_text(payload, "chunk %d" % chunks)
        if ih.get("platform") != doc.get("platform"):
            fail("item platform %r != payload platform %r" % (ih.get("platform"),
                                                              doc.get("platform")))
        n = check_sentry_chunk(doc)
        if last_end is not None and n[4] < last_end:
            fail("chunk %d starts before the previous one ends" % chunks)
        last_end = n[5]
        profiler_ids.add(doc["profiler_id"])
        chunks += 1
        total += n[0]
    if not chunks:
        fail("no items")
    if len(profiler_ids) != 1:
        fail("chunks of different profilers")
    print("sentry envelope ok: %d chunks, %d samples" % (chunks, total))


def check_arttrace(path, dump):
    with open(path, "rb") as f:
        data = f.read()
    pos, lines = 0, []
    while True:
        end = data.find(b"\n", pos)
        if end < 0:
            fail("text header without *end")
        line = data[pos:end]
        pos = end + 1  # perflib: offset = sum(len(line) + 1)
        if b"\r" in line:
            fail("CR in the text header")
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            fail("header line not UTF-8: %r" % line)
        if line == "*end":
            break
        lines.append(line)
    if not lines or lines[0] != "*version":
        fail("first line is not *version")
    if len(lines) < 2 or lines[1] not in ("1", "2", "3"):
        fail("version line %r" % (lines[1:2],))
    version = int(lines[1])
    section, opts, threads, methods = "version", {}, {}, {}
    for line in lines[2:]:
        if line.startswith("*"):
            if line not in ("*threads", "*methods"):
                fail("unknown section %r" % line)
            section = line[1:]
            continue
        if section == "version":
            if "=" not in line:
                fail("option line %r" % line)
            k, v = line.split("=", 1)
            opts[k] = v
        elif section == "threads":
            tok = line.split("\t")
            if len(tok) != 2 or not tok[0].isdigit() or not tok[1]:
                fail("thread line %r" % line)
            tid = int(tok[0])
            if tid > 0xffff and version > 1 or tid in threads:
                fail("thread id %d too large or repeated" % tid)
            threads[tid] = tok[1]
        else:
            tok = line.split("\t")
            if not 4 <= len(tok) <= 6 or not all(tok):
                fail("method line %r" % line)
            try:
                mid = int(tok[0], 0)
            except ValueError:
                fail("method id %r" % tok[0])
            if mid & 3 or mid in methods:
                fail("method id %#x: low bits set or repeated" % mid)
            if len(tok) in (4, 5) and not tok[3].startswith("("):
                fail("method line %r: token 4 is not a signature" % line)
            if len(tok) == 6 and not tok[5].isdigit():
                fail("method line %r: last token is not a line number" % line)
            methods[mid] = tok[1] + "." + tok[2]
    if opts.get("clock") not in ("dual", "wall", "thread-cpu", "global"):
        fail("clock=%r" % opts.get("clock"))
    if len(data) < pos + 32:
        fail("no binary header")
    magic, bver, off, start = struct.unpack_from("<IHHQ", data, pos)
    if magic != 0x574F4C53:
        fail("magic %#x" % magic)
    if bver != version:
        fail("version number mismatch: text %d, binary %d" % (version, bver))
    if off < 16:
        fail("data offset %d" % off)
    rsize = {1: 9, 2: 10}.get(version) or struct.unpack_from("<H", data, pos + 16)[0]
    if version == 3 and rsize < (14 if opts["clock"] == "dual" else 10):
        fail("record size %d too small" % rsize)
    body = data[pos + off:]
    if len(body) % rsize:
        fail("trailing partial record (%d bytes)" % (len(body) % rsize))
    nrec = len(body) // rsize
    stacks, last, actions = {}, {}, ("enter", "exit", "unroll")
    tfmt = "<BII" if version == 1 else "<HII"
    for i in range(nrec):
        tid, mv, t1 = struct.unpack_from(tfmt, body, i * rsize)
        wall = t1
        if version == 3 and opts["clock"] == "dual":
            wall = struct.unpack_from("<I", body, i * rsize + 10)[0]
        action, mid = mv & 3, mv & ~3
        if action == 3:
            fail("record %d: action 3" % i)
        if tid not in threads:
            fail("record %d: thread %d not in *threads" % (i, tid))
        if mid not in methods:
            fail("record %d: method %#x not in *methods" % (i, mid))
        if wall < last.get(tid, 0):
            fail("record %d: time goes back on thread %d" % (i, tid))
        last[tid] = wall
        st = stacks.setdefault(tid, [])
        if action == 0:
            st.append(mid)
        elif not st or st[-1] != mid:
            fail("record %d: thread %d exits %s but %s is innermost" %
                 (i, tid, methods[mid], methods[st[-1]] if st else "nothing"))
        else:
            st.pop()
        if dump:
            print("%d %s %d %s" % (tid, actions[action], wall, methods[mid]))
    for tid, st in stacks.items():
        if st:
            fail("thread %d ends inside %s (perch closes every frame)" % (tid, methods[st[-1]]))
    if int(opts.get("num-method-calls", nrec)) != nrec:
        fail("num-method-calls=%s but %d records" % (opts["num-method-calls"], nrec))
    if int(opts.get("elapsed-time-usec", 0)) < max(last.values(), default=0):
        fail("elapsed-time-usec below the last record")
    print("arttrace ok: version %d, %d records, %d methods, %d threads" %
          (version, nrec, len(methods), len(threads)))


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    kind, path, dump = sys.argv[1], sys.argv[2], "--dump" in sys.argv[3:]
    if kind == "sentry":
        check_sentry(path, dump)
    elif kind == "sentry-envelope":
        check_envelope(path)
    elif kind == "arttrace":
        check_arttrace(path, dump)
    else:
        fail("unknown kind " + kind)


if __name__ == "__main__":
    main()
