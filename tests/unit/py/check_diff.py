#!/usr/bin/python3
"""Outside values for perch's diff statistics (tests/unit/check_diff.c), one answer per
question line of FILE:

  tail DF T            P(|T| > t), Student's t with DF degrees of freedom (DF 0: normal)
  crit DF P            the t with P(|T| > t) = P
  chi2 X0 N0 X1 N1     Pearson's chi-square of the 2x2 table (x of n in two samples), no
                       continuity correction, and its p-value

DF 0 uses the standard library's statistics.NormalDist; the rest scipy.stats (Debian's
python3-scipy, hence /usr/bin/python3: another python3 on PATH may not have it). Prints one
line per question with the numbers in %.17g; exit 3 when scipy is missing and needed."""
import statistics
import sys

try:
    import scipy.stats as st
except ImportError:
    st = None

NORMAL = statistics.NormalDist()


def need_scipy():
    if st is None:
        print("SKIP: python3-scipy not installed")
        sys.exit(3)


def main():
    out = []
    with open(sys.argv[1]) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "tail":
                df, t = int(w[1]), float(w[2])
                if df == 0:
                    out.append(2 * (1 - NORMAL.cdf(t)))
                else:
                    need_scipy()
                    out.append(2 * st.t.sf(t, df))
            elif w[0] == "crit":
                df, p = int(w[1]), float(w[2])
                if df == 0:
                    out.append(NORMAL.inv_cdf(1 - p / 2))
                else:
                    need_scipy()
                    out.append(st.t.isf(p / 2, df))
            elif w[0] == "chi2":
                need_scipy()
                x0, n0, x1, n1 = (int(v) for v in w[1:5])
                table = [[x0, n0 - x0], [x1, n1 - x1]]
                chi2, p, _, _ = st.chi2_contingency(table, correction=False)
                out.append("%.17g %.17g" % (chi2, p))
                continue
            else:
                print("bad question: " + line.strip())
                sys.exit(2)
            out[-1] = "%.17g" % out[-1]
    print("\n".join(out))


main()
