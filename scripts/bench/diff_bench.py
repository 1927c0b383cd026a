#!/usr/bin/env python3
"""`make bench-diff`: false positives and detections of `perch report --diff` with replicates.

Records --runs runs of the BASE build and of the SLOW build (step_b() 10% slower: about 20% of
the main thread), each --seconds at --hz, then draws --trials random trials of three runs a
side (without repeating a run inside a trial; trials share runs, so they are not independent):
- false positive: BASE runs against other BASE runs, `--fail-if '^step_b$:+0'` trips (exit 3),
  or any function is marked beyond noise;
- detection: BASE runs against SLOW runs, the same rule trips.
Prints the counts, step_b's change and margin, and the spread of step_b's share between the
runs of one build (the run-to-run standard deviation, in points), which bounds what three runs a
side can see. Writes the figures to OUT/diff-bench.json."""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

REP = 3


def record(perch, prog, path, seconds, hz):
    """One run of @prog recorded into @path."""
    t = subprocess.Popen(["nice", "-n", "-10", prog, str(seconds + 30)], stdout=subprocess.PIPE,
                         text=True)
    try:
        line = t.stdout.readline()
        if not line.startswith("ready"):
            sys.exit("diff-bench: %s did not start: %r" % (prog, line))
        subprocess.run([perch, "record", "-q", "-F", str(hz), "-d", str(seconds), "-o", path,
                        "-p", str(t.pid)], check=True)
    finally:
        t.kill()
        t.wait()


def diff(perch, base, new):
    """(exit code, text) of the diff of two lists of runs with the gate on step_b."""
    p = subprocess.run([perch, "report", "-q", "--diff", ",".join(base), ",".join(new),
                        "--top", "1000", "--fail-if", "^step_b$:+0"],
                       capture_output=True, text=True)
    return p.returncode, p.stdout


def step_b_line(text):
    """The row of step_b in the main thread's section (the first section that has one)."""
    for sec in text.split("\n# thread ")[1:]:
        for line in sec.splitlines():
            if re.search(r" step_b \([^)]*\)$", line):
                return line
    return None


def step_b_row(text):
    """(change, margin) of step_b's total share in the main thread, points."""
    line = step_b_line(text)
    m = re.match(r"\s*([\d.]+)\s+([\d.]+)\s+([-+][\d.]+) ±([\d.]+)", line or "")
    return (float(m.group(3)), float(m.group(4))) if m else None


def share(perch, path):
    """step_b's share of the main thread in one run (a diff of the run with itself)."""
    line = step_b_line(diff(perch, [path], [path])[1])
    return float(line.split()[0]) if line else None


def trials(perch, pool_a, pool_b, n, rng, same):
    res = []
    for _ in range(n):
        if same:
            runs = rng.sample(pool_a, 2 * REP)
            a, b = runs[:REP], runs[REP:]
        else:
            a, b = rng.sample(pool_a, REP), rng.sample(pool_b, REP)
        code, text = diff(perch, a, b)
        if code not in (0, 3):
            sys.exit("diff-bench: perch report --diff exited %d" % code)
        row = step_b_row(text)
        res.append({"tripped": code == 3, "any_beyond": " * " in text or "  *  " in text,
                    "change": row[0] if row else None, "margin": row[1] if row else None})
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perch", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--slow", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=12, help="runs recorded per build")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--hz", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=34)
    o = ap.parse_args()
    os.makedirs(o.out, exist_ok=True)
    if o.runs < 2 * REP:
        sys.exit("diff-bench: --runs must be at least %d" % (2 * REP))
    t0 = time.time()
    pool_a, pool_b = [], []
    for i in range(o.runs):
        for prog, pool, name in ((o.base, pool_a, "base"), (o.slow, pool_b, "slow")):
            path = os.path.join(o.out, "%s%02d.perch" % (name, i))
            record(o.perch, prog, path, o.seconds, o.hz)
            pool.append(path)
    rec_s = time.time() - t0
    rng = random.Random(o.seed)
    same = trials(o.perch, pool_a, pool_b, o.trials, rng, True)
    found = trials(o.perch, pool_a, pool_b, o.trials, rng, False)
    sa = [share(o.perch, p) for p in pool_a]
    sb = [share(o.perch, p) for p in pool_b]
    fig = {
        "runs_per_build": o.runs, "trials": o.trials, "seconds": o.seconds, "hz": o.hz,
        "replicates_per_side": REP, "record_seconds": round(rec_s),
        "false_positive_gate": sum(r["tripped"] for r in same),
        "false_positive_any": sum(r["any_beyond"] for r in same),
        "detected": sum(r["tripped"] for r in found),
        "step_b_share_base_mean": statistics.mean(sa), "step_b_share_base_sd": statistics.stdev(sa),
        "step_b_share_slow_mean": statistics.mean(sb), "step_b_share_slow_sd": statistics.stdev(sb),
        "step_b_change_median": statistics.median(r["change"] for r in found),
        "step_b_margin_median": statistics.median(r["margin"] for r in found),
    }
    with open(os.path.join(o.out, "diff-bench.json"), "w") as f:
        json.dump({"figures": fig, "same": same, "found": found}, f, indent=1)
    print("diff-bench: %d runs a build, %g s at %d Hz each, %d trials of %d runs a side"
          % (o.runs, o.seconds, o.hz, o.trials, REP))
    print("  false positives (same build): gate tripped %d/%d, any change beyond noise %d/%d"
          % (fig["false_positive_gate"], o.trials, fig["false_positive_any"], o.trials))
    print("  detections (step_b 10%% slower): %d/%d; step_b change %+.2f points (median), "
          "margin ±%.2f (median)" % (fig["detected"], o.trials, fig["step_b_change_median"],
                                      fig["step_b_margin_median"]))
    print("  step_b share per run: BASE %.2f%% (SD %.2f pt), SLOW %.2f%% (SD %.2f pt)"
          % (fig["step_b_share_base_mean"], fig["step_b_share_base_sd"],
             fig["step_b_share_slow_mean"], fig["step_b_share_slow_sd"]))


if __name__ == "__main__":
    main()
