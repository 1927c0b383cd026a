"""Parsing and comparing backtraces for the oracle suite (tests/real/oracle.py).

Three readers: perch's `perch dump` text, gdb's frames (tests/real/gdb_frames.py prints them as
JSON, the frames `thread apply all bt` walks) and eu-stack's text. One comparison: a thread's
frames from perch against the same thread's frames from gdb, as sequences of normalised
function names, or against eu-stack as sequences of return addresses.

Every normalisation is in norm() and listed in NORMALISATIONS (printed at the top of the log
and in docs). Standard library only.
"""
import json
import os
import re

NORMALISATIONS = [
    "'??' (gdb has no name): matches any one perch frame, named or not (perch is not asked to "
    "name what gdb cannot); counted as named only when perch names it",
    "gdb's '<signal handler called>' and perch's name for the same frame (__restore_rt, the "
    "signal trampoline) are both '<signal>'",
    "symbol versions and PLT marks dropped: 'x@@GLIBC_2.34', 'x@plt' -> 'x'",
    "glibc's internal aliases: '__GI_', '__libc_' and leading '_' dropped repeatedly "
    "('__GI___libc_read' and 'read' are both 'read'; '___pthread_cond_wait' is "
    "'pthread_cond_wait')",
    "compiler clone suffixes dropped: '.constprop.N', '.isra.N', '.part.N', '.cold', "
    "'.lto_priv.N', ' [clone ...]'",
    "C++/Rust parameter lists dropped ('f(int) const' -> 'f'); template and generic arguments "
    "dropped ('std::vector<int>::at' -> 'std::vector::at'); a Rust qualified path keeps its "
    "'<T as Trait>' with the arguments inside dropped",
    "C++ return types dropped (perch shows demangled template functions with theirs: "
    "'void std::__invoke_impl<void, F>(...)' -> 'std::__invoke_impl'); a lambda's body, "
    "'f()::{lambda()#1}::operator()' in perch, is 'operator()' as gdb names it",
    "namespaces are kept; '(anonymous namespace)' and '{anonymous}' are the same",
    "Rust: legacy hashes '::h0123456789abcdef' and v0 crate disambiguators '[0123abcd]' dropped; "
    "closures '{{closure}}' and '{closure#N}' are both '{closure}'",
    "gdb does not expand inline frames in a tail-call frame: where the tail call sits in an "
    "inlined function, gdb shows one tail-call frame named after the inlined function; perch "
    "shows that frame and the function around it (same pc): the second is a 'note', not a "
    "difference",
    "inline frames: both tools show one frame per inlined call at the same pc; they are "
    "compared like any frame (perch marks them [inlined], gdb's frame type is INLINE)",
    "tail-call frames: gdb rebuilds them from DW_TAG_call_site (frame type TAILCALL); perch "
    "must show them too (perch marks them '(tail call)' after the frame); marks after the "
    "frame ('[inlined]', '(tail call)') are not part of the name",
    "Rust only: gdb names impl blocks '{impl#N}' (DWARF) where symbols say '<T as Trait>' or "
    "the type; only the function's own name and the closures in it are compared "
    "('<std::fs::File as std::io::Read>::read' and 'std::fs::{impl#5}::read' are 'read'); "
    "'{{vtable.shim}}' and '{shim:vtable#0}' dropped",
    "Go only: gdb's frames after a Go stack's outermost function (runtime.mstart, goexit, "
    "rt0_go, mcall, morestack, systemstack) are not compared, except runtime.clone right "
    "after mstart; past them gdb reads beyond the stack (perch's frames there are listed as "
    "'beyond', not counted)",
    "a last gdb frame at pc 0 (gdb's end of Go thread stacks) is not a frame",
    "consecutive frames with the same normalised name are compared as one run with a count, so "
    "3000 recursive frames align in linear time; every frame of the run still counts",
]

# ---------------------------------------------------------------------------------- names

_CLONE = re.compile(r"(\.(constprop|isra|part|lto_priv|cold|localalias)(\.\d+)?)+$|"
                    r"( \[clone [^\]]*\])+$")
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
_RUST_DISAMB = re.compile(r"\[[0-9a-f]{1,16}\]")
_CLOSURE = re.compile(r"\{\{closure\}\}|\{closure#\d+\}")
_MARKER = re.compile(r"( \[[a-z -]+\])+$")
SIGNAL = "<signal>"
_SIGNAL_NAMES = {"<signal handler called>", "__restore_rt", "restore_rt", "__kernel_rt_sigreturn",
                 "[signal]", "[signal frame]"}


def _strip_generics(s):
    """Drop <...> that follow a name (template/generic arguments); keep a qualified path's
    '<T as Trait>' brackets (Rust) and operator<, operator<<, operator->, operator<=>."""
    out = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "<":
            if s[:i].endswith("operator") or s[:i].endswith("operator<"):
                out.append(c)
                i += 1
                continue
            prev = out[-1] if out else ""
            if prev and (prev.isalnum() or prev in "_>]}"):
                depth = 0
                while i < n:
                    if s[i] == "<":
                        depth += 1
                    elif s[i] == ">" and s[i - 1] != "-":
                        depth -= 1
                        if depth == 0:
                            break
                    i += 1
                i += 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _strip_params(s):
    """Drop a trailing parameter list '(...)' and qualifiers after it ('f(int) const')."""
    t = re.sub(r"\s*(const|volatile|&&|&|noexcept)\s*$", "", s)
    while t != s:
        s = t
        t = re.sub(r"\s*(const|volatile|&&|&|noexcept)\s*$", "", s)
    if not s.endswith(")") or s.endswith("operator()") or s.endswith("(anonymous namespace)"):
        return s
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        if s[i] == ")":
            depth += 1
        elif s[i] == "(":
            depth -= 1
            if depth == 0:
                head = s[:i]
                if not head or head.endswith("operator"):
                    return s
                return head.rstrip()
    return s


def _strip_return_type(s):
    """'void std::__invoke_impl<void, F>' -> 'std::__invoke_impl<void, F>': perch shows
    demangled template functions with their return type; cut at the last space outside
    brackets (not in 'operator new' and the like)."""
    depth = 0
    cut = -1
    for i, c in enumerate(s):
        if c in "<([":
            depth += 1
        elif c in ">)]" and depth:
            depth -= 1
        elif c == " " and depth == 0 and not s[:i].endswith("operator") and \
                not s[i + 1:].startswith("as ") and not s[:i].endswith(" as"):
            cut = i
    return s[cut + 1:] if cut >= 0 else s


def norm(name):
    """A function name as both tools are compared on, or None for 'no name' (gdb's ??).
    Each step is one line of NORMALISATIONS."""
    if name is None:
        return None
    s = name.strip()
    if s in ("", "??", "[unknown]") or s.startswith("0x"):
        return None
    s = _MARKER.sub("", s)
    if s in _SIGNAL_NAMES:
        return SIGNAL
    s = s.split("@", 1)[0] if not s.startswith("@") else s
    s = s.replace("{anonymous}", "(anonymous namespace)")
    s = _CLOSURE.sub("{closure}", s)
    s = _RUST_HASH.sub("", s)
    s = _RUST_DISAMB.sub("", s)
    s = _CLONE.sub("", s)
    s = _strip_params(s)
    s = _strip_return_type(s)
    s = _strip_generics(s)
    if s.endswith("::operator()") and "{lambda" in s:
        s = "operator()"
    s = _CLONE.sub("", s)
    changed = True
    while changed:
        changed = False
        for p in ("__GI_", "__libc_", "_"):
            if s.startswith(p) and len(s) > len(p):
                s = s[len(p):]
                changed = True
    return s


def is_unnamed(name):
    """perch's way of printing a frame it could not name: '[module+0xoff]' (before issue 39
    'module+0xoff'), '0x...', '??'."""
    return name is None or norm(name) is None or re.search(r"\+0x[0-9a-f]+\]?$", name) is not None


def _split_path(s):
    """'a::<b::c as d>::e' -> ['a', '<b::c as d>', 'e'] (no split inside <...>)."""
    out, depth, cur, i = [], 0, "", 0
    while i < len(s):
        if s[i] == "<":
            depth += 1
        elif s[i] == ">" and depth:
            depth -= 1
        if depth == 0 and s.startswith("::", i):
            out.append(cur)
            cur = ""
            i += 2
            continue
        cur += s[i]
        i += 1
    out.append(cur)
    return out


def rust_key(name):
    """Rust only, on top of norm(): gdb names impl blocks from DWARF ('std::fs::{impl#5}::read')
    where symbols name them by type or trait ('<std::fs::File as std::io::Read>::read',
    'std::thread::Builder::spawn_unchecked_'); neither can be derived from the other, so only
    the function's own name and the closures nested in it are compared ('read',
    'spawn_unchecked_::{closure}::{closure}'); '{{vtable.shim}}' is dropped."""
    s = norm(name)
    if s is None:
        return None
    s = re.sub(r"\{\{vtable\.shim\}\}|\{vtable\.shim\}|::\{shim:vtable#\d+\}", "", s)
    segs = [x for x in _split_path(s) if x and not x.startswith("{impl") and
            not x.startswith("<")]
    if not segs:
        return s
    i = len(segs) - 1
    while i > 0 and segs[i] == "{closure}":
        i -= 1
    return "::".join(segs[i:])


def rustify(thread):
    """Re-key a thread's frames with rust_key() (Rust cases)."""
    for f in thread.frames:
        if f.key is not None:
            f.key = rust_key(f.name)


# ---------------------------------------------------------------------------------- readers

class Frame:
    __slots__ = ("name", "pc", "kind", "module", "file", "line", "key", "tail")

    def __init__(self, name, pc, kind="NORMAL", module=None, file=None, line=None, tail=False):
        self.tail = tail or kind == "TAILCALL"   # a tail-call frame (also when inlined)
        self.name = name
        self.pc = pc
        self.kind = kind
        self.module = module
        self.file = file
        self.line = line
        self.key = None if is_unnamed(name) else norm(name)

    def show(self):
        name = self.name if self.name is not None else "??"
        if len(name) > 90:
            name = name[:60] + "..." + name[-27:]
        s = "0x%x %s" % (self.pc or 0, name)
        if self.kind not in ("NORMAL", None):
            s += " [%s]" % self.kind.lower()
        if self.file:
            s += " at %s:%s" % (os.path.basename(self.file), self.line)
        return s


class Thread:
    def __init__(self, tid, name):
        self.tid = tid
        self.name = name
        self.frames = []
        self.stop = None
        self.note = None


_PERCH_FRAME = re.compile(r"^#(\d+)\s+0x([0-9a-f]+) (.*?) \(([^()]*)\)"
                          r"(?: at (.*?):(\d+))?((?: \[[a-z -]+\]| \([a-z -]+\))*)\s*$")
_PERCH_TID = re.compile(r'^TID (\d+) "(.*)" \((.)\)')


def parse_perch(text):
    """`perch dump` output -> {tid: Thread}. Frame lines:
    #3  0x000055926394b1ba f1 (t1) at /tmp/t1.c:6 [inlined]"""
    threads = {}
    cur = None
    for line in text.splitlines():
        m = _PERCH_TID.match(line)
        if m:
            cur = Thread(int(m.group(1)), m.group(2))
            threads[cur.tid] = cur
            continue
        if cur is None:
            continue
        m = _PERCH_FRAME.match(line)
        if m:
            marks = m.group(7) or ""
            kind = "NORMAL"
            if "inlined" in marks:
                kind = "INLINE"
            elif "tail" in marks:
                kind = "TAILCALL"
            name = m.group(3)
            cur.frames.append(Frame(name, int(m.group(2), 16), kind, m.group(4), m.group(5),
                                    int(m.group(6)) if m.group(6) else None,
                                    tail="tail" in marks))
        elif line.startswith("    (") or line.startswith("#"):
            cur.note = (cur.note + "; " if cur.note else "") + line.strip()
    return threads


def parse_gdb(text):
    """gdb_frames.py output ('ORACLE {json}' lines) -> {tid: Thread}."""
    threads = {}
    for line in text.splitlines():
        if not line.startswith("ORACLE "):
            continue
        d = json.loads(line[7:])
        t = Thread(d["tid"], d.get("name"))
        t.stop = d.get("stop")
        for f in d["frames"]:
            t.frames.append(Frame(f["name"], f["pc"], f["type"], None, f.get("file"),
                                  f.get("line")))
        threads[t.tid] = t
    return threads


_EU_TID = re.compile(r"^TID (\d+):")
_EU_FRAME = re.compile(r"^#(\d+)\s+0x([0-9a-f]+)\s*(.*)$")


def parse_eu_stack(text):
    """`eu-stack -p PID` output -> {tid: Thread} (names as eu-stack prints them)."""
    threads = {}
    cur = None
    for line in text.splitlines():
        m = _EU_TID.match(line)
        if m:
            cur = Thread(int(m.group(1)), None)
            threads[cur.tid] = cur
            continue
        m = _EU_FRAME.match(line)
        if m and cur is not None:
            name = m.group(3).strip() or None
            if name and name.startswith("- "):
                name = None
            cur.frames.append(Frame(name, int(m.group(2), 16), "NORMAL"))
    return threads


# ---------------------------------------------------------------------------------- compare

def _runs(keys):
    """Run-length encode a key list: [(key, start, count)]."""
    runs = []
    for i, k in enumerate(keys):
        if runs and runs[-1][0] == k and k is not None:
            runs[-1][2] += 1
        else:
            runs.append([k, i, 1])
    return runs


def align(gkeys, pkeys, wildcard=True):
    """Align two key sequences in order (weighted LCS over runs of equal keys). A None in gkeys
    matches any one perch frame when @wildcard. Returns [(gi, pi)] of matched indexes."""
    gr, pr = _runs(gkeys), _runs(pkeys)
    n, m = len(gr), len(pr)
    score = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best = max(score[i + 1][j], score[i][j + 1])
            gk, pk = gr[i][0], pr[j][0]
            if (gk is not None and gk == pk) or (gk is None and wildcard):
                best = max(best, score[i + 1][j + 1] + min(gr[i][2], pr[j][2]))
            score[i][j] = best
    pairs = []
    i = j = 0
    while i < n and j < m:
        gk, pk = gr[i][0], pr[j][0]
        ok = (gk is not None and gk == pk) or (gk is None and wildcard)
        if ok and score[i][j] == score[i + 1][j + 1] + min(gr[i][2], pr[j][2]):
            c = min(gr[i][2], pr[j][2])
            # a run of gdb frames matched to a longer perch run: the outermost frames pair up
            # when both runs end the same way (recursion cut at the top is the usual case)
            for k in range(c):
                pairs.append((gr[i][1] + k, pr[j][1] + k))
            i += 1
            j += 1
        elif score[i][j] == score[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


class Diff:
    """One difference between perch and the oracle in one thread."""

    def __init__(self, what, frame_index, frame, reason, cause=None):
        self.what = what          # "missing" (oracle only), "extra" (perch only), "line",
        #                           "beyond" (perch only, past where the oracle gave up: listed,
        #                           not a failure)
        self.index = frame_index
        self.frame = frame
        self.reason = reason
        self.cause = cause        # a known cause (cases.CAUSES), when recognised

    @property
    def failing(self):
        return self.what in ("missing", "extra", "line")  # not "beyond", "note"

    def show(self):
        return "%-8s #%-4d %s -- %s%s" % (self.what, self.index, self.frame.show(), self.reason,
                                          " [%s]" % self.cause if self.cause else "")


class Result:
    def __init__(self, tid, name):
        self.tid = tid
        self.name = name
        self.oracle_frames = 0
        self.named = 0            # oracle frames perch has (by name; ?? frames by place)
        self.diffs = []
        self.moved = False
        self.note = None
        self.verdict = None
        self.cause = None
        self.oracle = None

    @property
    def ok(self):
        return not self.moved and not any(d.what in ("missing", "extra", "line") for d in
                                           self.diffs)


GO_TOP = ("runtime.mstart", "runtime.goexit", "runtime.rt0_go", "runtime.mcall",
          "runtime.morestack", "runtime.systemstack")


def go_cut(g):
    """Go: gdb's frames after the first outermost frame of a Go stack (runtime.mstart,
    goexit, rt0_go, mcall, morestack, systemstack: the functions Go's own traceback stops at)
    are not compared, except runtime.clone right after mstart (it did call mstart); past them
    gdb reads beyond the goroutine's or g0's stack. Returns the cut frames."""
    for i, f in enumerate(g.frames):
        if f.name in GO_TOP:
            end = i + 1
            if f.name == "runtime.mstart" and end < len(g.frames) and \
                    g.frames[end].name == "runtime.clone":
                end += 1
            cut = g.frames[end:]
            del g.frames[end:]
            if cut:
                g.stop = "Go top frame %s" % f.name
            return cut
    return []


def compare_gdb(g, p, check_lines=True):
    """Compare perch's thread @p with gdb's thread @g by names. Returns a Result."""
    # gdb ends some stacks (Go's threads) with a frame at pc 0: the end, not a function
    while g.frames and g.frames[-1].pc == 0 and g.frames[-1].key is None:
        g.frames.pop()
    r = Result(g.tid, g.name)
    r.oracle_frames = len(g.frames)
    if p is None:
        r.diffs.append(Diff("missing", 0, g.frames[0] if g.frames else Frame("??", 0),
                            "perch has no such thread"))
        return r
    if not p.frames:
        r.note = p.note
        for i, f in enumerate(g.frames):
            r.diffs.append(Diff("missing", i, f, "perch has no stack: %s" % (p.note or "?")))
        return r
    if g.frames and g.frames[0].pc != p.frames[0].pc:
        r.moved = True
        r.note = "frame #0 differs (gdb 0x%x, perch 0x%x): the thread ran between the two " \
                 "snapshots" % (g.frames[0].pc, p.frames[0].pc)
        return r
    gk = [f.key for f in g.frames]
    pk = [f.key for f in p.frames]
    pairs = align(gk, pk)
    gmap = dict(pairs)
    pmatched = {pi for _, pi in pairs}
    pgmap = {pi: gi for gi, pi in pairs}
    last_p = max(pmatched) if pmatched else -1
    # unmatched perch frames by pc: what perch shows in place of a missing gdb frame
    by_pc = {}
    for pi, f in enumerate(p.frames):
        if pi not in pmatched:
            by_pc.setdefault(f.pc, []).append(pi)
    instead = {}
    instead_cause = {}
    for gi, f in enumerate(g.frames):
        if gi in gmap:
            pf = p.frames[gmap[gi]]
            r.named += 1
            if check_lines and f.file and f.line and not (pf.file and pf.line):
                r.diffs.append(Diff("line", gi, pf, "perch has no file:line; gdb says %s:%d" %
                                    (os.path.basename(f.file), f.line)))
            elif check_lines and f.file and pf.file and f.line and pf.line and \
                    (os.path.basename(f.file) != os.path.basename(pf.file) or
                     f.line != pf.line) and f.kind != "TAILCALL":
                if gi > 0 and g.frames[gi - 1].kind == "SIGTRAMP":
                    cause = "signal-pc"
                elif os.path.basename(f.file) != os.path.basename(pf.file):
                    cause = "dwarf5-lines"
                else:
                    cause = None
                r.diffs.append(Diff("line", gi, pf, "gdb says %s:%d" %
                                    (os.path.basename(f.file), f.line), cause))
            continue
        cause = None
        same = [pi for pi in by_pc.get(f.pc, []) if pi not in instead]
        if f.kind == "TAILCALL":
            reason = "tail-call frame (gdb rebuilds it from DW_TAG_call_site; perch does not)"
            cause = "tailcall"
        elif same:
            pi = same[0]
            instead[pi] = gi
            other = p.frames[pi]
            oname = other.name if len(other.name) < 90 else \
                other.name[:60] + "..." + other.name[-27:]
            if is_unnamed(other.name):
                reason = "perch does not name it: %s" % oname
            else:
                reason = "perch names it %s" % oname
                if other.name.startswith("_R") or other.name.startswith("_ZN"):
                    reason += " (not demangled)"
                    cause = "rust-v0" if other.name.startswith("_R") else None
            if f.kind == "SIGTRAMP":
                reason = "signal frame; " + reason
                cause = "signal-pc"
            instead_cause[pi] = cause
        elif f.kind == "INLINE":
            reason = "inline frame perch does not show"
        elif any(gj > gi for gj in gmap):
            reason = "perch skips this frame (no frame with this pc)"
        elif f.pc > 0 and all(pf.pc != f.pc for pf in p.frames) and last_p < len(p.frames) - 1:
            reason = "no perch frame has this pc (perch goes astray after its #%d)" % last_p
        elif all(pf.pc != f.pc for pf in p.frames):
            reason = "perch's stack ends before it (%d frames%s)" % (
                len(p.frames), "; " + p.note if p.note else "")
        else:
            reason = "perch skips this frame"
        if cause is None and len(p.frames) >= 250 and gi >= len(p.frames) - 1:
            cause = "frame-limit"
        r.diffs.append(Diff("missing", gi, f, reason, cause))
    for pi, f in enumerate(p.frames):
        if pi in pmatched:
            continue
        if pi in instead:
            r.diffs.append(Diff("extra", pi, f, "in place of gdb's #%d" % instead[pi],
                                instead_cause.get(pi)))
            continue
        prev = p.frames[pi - 1] if pi > 0 else None
        if f.tail and prev is not None and prev.pc == f.pc and prev.kind == "INLINE" and \
                pi - 1 in pmatched and g.frames[pgmap[pi - 1]].kind == "TAILCALL":
            r.diffs.append(Diff("note", pi, f, "gdb names a tail-call frame by the function "
                                "inlined at the call site only; perch shows the function "
                                "around it too"))
            continue
        if pi > last_p and g.stop and g.stop not in ("outermost", "no reason") \
                and "backtrace limit" not in g.stop:
            reason = "after gdb's last frame (gdb stopped: %s)" % g.stop
            r.diffs.append(Diff("beyond", pi, f, reason))
            continue
        if pi > last_p:
            reason = "perch goes past gdb's outermost frame"
        else:
            reason = "frame gdb does not have"
        r.diffs.append(Diff("extra", pi, f, reason,
                            "frame-limit" if f.name == "[truncated]" else None))
    return r


def compare_addrs(e, p):
    """Compare perch's thread @p with eu-stack's thread @e by return addresses: every address
    eu-stack unwinds to must be in perch's stack, in order (perch's inline frames share their
    caller's pc and are folded first). eu-stack does not rebuild tail-call frames (gdb does,
    and compare_gdb checks them): perch's are left out of the comparison and listed as notes."""
    r = Result(e.tid, e.name)
    r.oracle_frames = len(e.frames)
    if p is None or not p.frames:
        for i, f in enumerate(e.frames):
            r.diffs.append(Diff("missing", i, f, "perch has no stack"))
        return r
    if e.frames and e.frames[0].pc != p.frames[0].pc:
        r.moved = True
        r.note = "frame #0 differs (eu-stack 0x%x, perch 0x%x): the thread ran between the " \
                 "two snapshots" % (e.frames[0].pc, p.frames[0].pc)
        return r
    pf = []
    for f in p.frames:
        if f.kind == "INLINE":
            continue
        if f.kind == "TAILCALL":
            r.diffs.append(Diff("note", len(pf), f, "tail-call frame: eu-stack does not "
                                "rebuild them (gdb's oracle checks them)"))
            continue
        pf.append(f)
    pairs = align([f.pc for f in e.frames], [f.pc for f in pf], wildcard=False)
    emap = dict(pairs)
    pmatched = {pi for _, pi in pairs}
    last_p = max(pmatched) if pmatched else -1
    for i, f in enumerate(e.frames):
        if i in emap:
            r.named += 1
        else:
            r.diffs.append(Diff("missing", i, f, "return address perch does not have"))
    for pi, f in enumerate(pf):
        if pi in pmatched:
            continue
        what = "beyond" if pi > last_p else "extra"
        r.diffs.append(Diff(what, pi, f, "after eu-stack's last frame" if what == "beyond"
                            else "return address eu-stack does not have"))
    return r
