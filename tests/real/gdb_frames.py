# Loaded by gdb (gdb -batch -x gdb_frames.py -p PID): every thread's frames, as
# `thread apply all bt` walks them, one JSON object per thread on a line starting with
# "ORACLE ". Each frame: pc (what bt prints), name (bt's function name or null for "??"),
# type (NORMAL, INLINE, TAILCALL, SIGTRAMP, ...: gdb's own frame kinds), file and line.
# The last frame carries gdb's reason for stopping there. Standard gdb Python API only.
import json

import gdb

TYPES = {}
for _n in ("NORMAL", "DUMMY", "INLINE", "TAILCALL", "SIGTRAMP", "ARCH", "SENTINEL"):
    if hasattr(gdb, _n + "_FRAME"):
        TYPES[getattr(gdb, _n + "_FRAME")] = _n


def frame_info(f):
    info = {"pc": f.pc(), "name": f.name(), "type": TYPES.get(f.type(), str(f.type()))}
    try:
        sal = f.find_sal()
        if sal.symtab is not None:
            info["file"] = sal.symtab.filename
            info["line"] = sal.line
    except gdb.error:
        pass
    if info["name"] is None and f.type() == gdb.SIGTRAMP_FRAME:
        info["name"] = "<signal handler called>"
    return info


def dump():
    for inf in gdb.inferiors():
        for th in sorted(inf.threads(), key=lambda t: t.ptid[1]):
            th.switch()
            frames = []
            err = None
            f = gdb.newest_frame()
            try:
                while f is not None:
                    frames.append(frame_info(f))
                    last = f
                    f = f.older()
                reason = gdb.frame_stop_reason_string(last.unwind_stop_reason())
            except gdb.error as e:
                reason = "error: %s" % e
            print("ORACLE " + json.dumps({"tid": th.ptid[1], "name": th.name,
                                          "frames": frames, "stop": reason}))


dump()
