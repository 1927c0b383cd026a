#!/usr/bin/env python3
"""Unit tests of the oracle suite's comparison (compare.py): the normalisations on names taken
from real gdb and perch output, and that a wrong, short or garbage perch stack fails. Run by
`make check-real` before the suite (python3 -m unittest)."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

GDB = [
    # gdb 13 on the C oracle program built with gcc -O2 (thread "tail" and "sig")
    {"tid": 10, "name": "tail", "stop": "outermost", "frames": [
        {"pc": 0x7f00000002ec, "name": "__GI___libc_read", "type": "INLINE",
         "file": "../sysdeps/unix/sysv/linux/read.c", "line": 26},
        {"pc": 0x7f00000002ec, "name": "__GI___libc_read", "type": "NORMAL",
         "file": "../sysdeps/unix/sysv/linux/read.c", "line": 24},
        {"pc": 0x5500000463, "name": "block_read_tail", "type": "NORMAL",
         "file": "real_block.c", "line": 19},
        {"pc": 0x55000005af, "name": "tail_b", "type": "TAILCALL",
         "file": "real_chain.c", "line": 80},
        {"pc": 0x5500000649, "name": "tail_a", "type": "NORMAL",
         "file": "real_chain.c", "line": 85},
        {"pc": 0x7f00000001f5, "name": "start_thread", "type": "NORMAL",
         "file": "./nptl/pthread_create.c", "line": 442},
        {"pc": 0x7f00000008ec, "name": "clone3", "type": "NORMAL",
         "file": "../sysdeps/unix/sysv/linux/x86_64/clone3.S", "line": 81}]},
    {"tid": 11, "name": "sig", "stop": "outermost", "frames": [
        {"pc": 0x5500000433, "name": "block_read", "type": "NORMAL"},
        {"pc": 0x7f0000006050, "name": "__restore_rt", "type": "SIGTRAMP"},
        {"pc": 0x7f0000004eec, "name": "__pthread_kill_implementation", "type": "NORMAL",
         "file": "./nptl/pthread_kill.c", "line": 44},
        {"pc": 0x5500000777, "name": None, "type": "NORMAL"}]},
]

PERCH_TAIL_OK = """PID 1 (prog)
TID 10 "tail" (S)
#0  0x00007f00000002ec __GI___libc_read (libc.so.6) at ./io/../sysdeps/unix/sysv/linux/read.c:26 [inlined]
#1  0x00007f00000002ec __GI___libc_read (libc.so.6) at ./io/../sysdeps/unix/sysv/linux/read.c:24
#2  0x0000005500000463 block_read_tail (prog) at /x/real_block.c:19
#3  0x00000055000005af tail_b (prog) at /x/real_chain.c:80 (tail call)
#4  0x0000005500000649 tail_a (prog) at /x/real_chain.c:85
#5  0x00007f00000001f5 start_thread (libc.so.6) at ./nptl/pthread_create.c:442
#6  0x00007f00000008ec clone3 (libc.so.6) at ./misc/../sysdeps/unix/sysv/linux/x86_64/clone3.S:81
"""


def gdb_text():
    return "\n".join("ORACLE " + json.dumps(t) for t in GDB)


def perch_variant(drop=(), rename=None, extra=None):
    lines = PERCH_TAIL_OK.splitlines()
    out = []
    for line in lines:
        if any(line.startswith("#%d " % d) for d in drop):
            continue
        if rename and line.startswith(rename[0]):
            line = line.replace(rename[1], rename[2])
        out.append(line)
    if extra:
        out.append(extra)
    return "\n".join(out) + "\n"


class Names(unittest.TestCase):
    def test_norm(self):
        cases = {
            "__GI___libc_read": "read",
            "__libc_read": "read",
            "read": "read",
            "___pthread_cond_wait": "pthread_cond_wait",
            "__libc_start_main@@GLIBC_2.34": "start_main",
            "f3.constprop.0": "f3",
            "f3.isra.0.cold": "f3",
            "std::function<void ()>::operator()() const": "std::function::operator()",
            "oracle::detail::Rec<0>::go(std::function<void ()> const&)": "oracle::detail::Rec::go",
            "void std::__invoke_impl<void, void (*)()>(std::__invoke_other, void (*&&)())":
                "std::__invoke_impl",
            "std::__invoke_result<void (*)()>::type std::__invoke<void (*)()>(void (*&&)())":
                "std::__invoke",
            "oracle::tmpl_thread()::{lambda()#1}::operator()() const": "operator()",
            "{anonymous}::f(int)": "(anonymous namespace)::f",
            "X::operator delete(void*)": "X::operator delete",
            "std::sys::unix::futex::futex_wait::h0123456789abcdef": "std::sys::unix::futex::futex_wait",
            "main::main::{{closure}}": "main::main::{closure}",
            "main::main::{closure#0}": "main::main::{closure}",
            "<signal handler called>": compare.SIGNAL,
            "__restore_rt": compare.SIGNAL,
        }
        for name, want in cases.items():
            self.assertEqual(compare.norm(name), want, name)
        self.assertIsNone(compare.norm("??"))
        self.assertTrue(compare.is_unnamed("libc.so.6+0x3c04f"))
        self.assertFalse(compare.is_unnamed("read"))

    def test_rust_key(self):
        same = [("<std::fs::File as std::io::Read>::read", "std::fs::{impl#5}::read"),
                ("std::thread::Builder::spawn_unchecked_::{{closure}}::{{closure}}",
                 "std::thread::{impl#0}::spawn_unchecked_::{closure#1}::{closure#0}<main::{closure_env#0}, ()>"),
                ("core::ops::function::FnOnce::call_once{{vtable.shim}}",
                 "core::ops::function::FnOnce::call_once<F, ()>"),
                ("<alloc::boxed::Box<F,A> as core::ops::function::FnOnce<Args>>::call_once",
                 "alloc::boxed::{impl#44}::call_once<(), dyn FnOnce<(), Output=()>, Global>")]
        for a, b in same:
            self.assertEqual(compare.rust_key(a), compare.rust_key(b), (a, b))
        self.assertNotEqual(compare.rust_key("main::oracle::recv_chain"),
                            compare.rust_key("main::oracle::read_chain"))


class Compare(unittest.TestCase):
    def result(self, perch_text, tid=10):
        g = compare.parse_gdb(gdb_text())[tid]
        p = compare.parse_perch(perch_text).get(tid)
        return compare.compare_gdb(g, p)

    def test_same_stack_passes(self):
        p = compare.parse_perch(PERCH_TAIL_OK)[10]
        self.assertEqual([f.kind for f in p.frames][:4], ["INLINE", "NORMAL", "NORMAL",
                                                           "TAILCALL"])
        self.assertEqual((p.frames[3].name, p.frames[3].module, p.frames[3].line),
                         ("tail_b", "prog", 80))
        r = self.result(PERCH_TAIL_OK)
        self.assertTrue(r.ok, [d.show() for d in r.diffs])
        self.assertEqual(r.named, 7)

    def test_missing_tail_call_fails(self):
        r = self.result(perch_variant(drop=[3]))
        self.assertFalse(r.ok)
        self.assertEqual([d.cause for d in r.diffs if d.failing], ["tailcall"])

    def test_wrong_name_fails(self):
        r = self.result(perch_variant(rename=("#4 ", "tail_a", "tail_x")))
        self.assertFalse(r.ok)
        self.assertIn("perch names it tail_x", [d.reason for d in r.diffs][0])

    def test_short_stack_fails(self):
        r = self.result(perch_variant(drop=[5, 6]))
        self.assertFalse(r.ok)
        self.assertEqual(sum(1 for d in r.diffs if d.what == "missing"), 2)

    def test_garbage_root_fails(self):
        r = self.result(perch_variant(extra="#7  0x82ed9739602bad00 0x82ed9739602bacff (?)"))
        self.assertFalse(r.ok)
        self.assertEqual([d.what for d in r.diffs], ["extra"])

    def test_wrong_line_fails(self):
        r = self.result(perch_variant(rename=("#4 ", "real_chain.c:85", "real_chain.c:84")))
        self.assertFalse(r.ok)
        self.assertEqual([d.what for d in r.diffs], ["line"])

    def test_moved_thread(self):
        r = self.result(perch_variant(rename=("#0 ", "0x00007f00000002ec", "0x00007f00000002f0")))
        self.assertTrue(r.moved)
        self.assertFalse(r.ok)

    def test_signal_frame_and_unknown(self):
        perch = """TID 11 "sig" (S)
#0  0x0000005500000433 block_read (prog)
#1  0x00007f0000006050 __restore_rt (libc.so.6)
#2  0x00007f0000004eec __pthread_kill_implementation (libc.so.6) at ./nptl/pthread_kill.c:44
#3  0x0000005500000777 prog+0x777 (prog)
"""
        r = self.result(perch, tid=11)
        self.assertTrue(r.ok, [d.show() for d in r.diffs])
        bad = perch.replace("__restore_rt", "libc.so.6+0x3c04f")
        r = self.result(bad, tid=11)
        self.assertEqual({d.cause for d in r.diffs}, {"signal-pc"})

    def test_deep_recursion_aligns(self):
        g = compare.Thread(1, "deep")
        p = compare.Thread(1, "deep")
        for i in range(3000):
            g.frames.append(compare.Frame("rec", 0x1000 + (i > 0)))
            p.frames.append(compare.Frame("rec", 0x1000 + (i > 0)))
        g.frames.append(compare.Frame("clone3", 0x9000))
        p.frames.append(compare.Frame("clone3", 0x9000))
        self.assertTrue(compare.compare_gdb(g, p).ok)
        del p.frames[256:]
        r = compare.compare_gdb(g, p)
        self.assertEqual(r.named, 256)
        self.assertIn("frame-limit", {d.cause for d in r.diffs})


    def test_tail_call_in_inlined_function(self):
        # glibc's raise -> __pthread_kill (tail call from the inlined __pthread_kill_internal)
        g = compare.Thread(1, "t")
        for name, pc, kind in (("__pthread_kill_implementation", 0x10, "NORMAL"),
                               ("__pthread_kill_internal", 0x20, "TAILCALL"),
                               ("__GI_raise", 0x30, "NORMAL")):
            g.frames.append(compare.Frame(name, pc, kind))
        p = compare.parse_perch("""TID 1 "t" (S)
#0  0x0000000000000010 __pthread_kill_implementation (libc.so.6)
#1  0x0000000000000020 __pthread_kill_internal (libc.so.6) at ./nptl/pthread_kill.c:78 [inlined] (tail call)
#2  0x0000000000000020 __GI___pthread_kill (libc.so.6) at ./nptl/pthread_kill.c:89 (tail call)
#3  0x0000000000000030 __GI_raise (libc.so.6)
""")[1]
        r = compare.compare_gdb(g, p)
        self.assertTrue(r.ok, [d.show() for d in r.diffs])
        self.assertEqual([d.what for d in r.diffs], ["note"])


class EuStack(unittest.TestCase):
    def test_by_address(self):
        eu = compare.parse_eu_stack("PID 5 - process\nTID 5:\n#0  0x0000000000001000 poll\n"
                                    "#1  0x0000000000002000\n#2  0x0000000000003000 __clone3\n")
        perch = compare.parse_perch('TID 5 "x" (S)\n#0  0x0000000000001000 poll (libc.so.6)\n'
                                    '#1  0x0000000000002000 x+0x1fff (x)\n')
        r = compare.compare_addrs(eu[5], perch[5])
        self.assertFalse(r.ok)
        self.assertEqual([d.frame.pc for d in r.diffs], [0x3000])


if __name__ == "__main__":
    unittest.main()
