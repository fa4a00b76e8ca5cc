#!/usr/bin/env python3
"""How fast a grading's exercises ended away from its start and its tail,
from its timeline (GRADER_TIMELINE): the exercises a minute
between the (K+1)-th exercise to end and the (N-K)-th, N the exercises,
K an eighth of them by default. With as many exercises in flight as
there are workers, a class of a few waves has no steady state, so this
is an upper bound for its size, not a class of hundreds' rate.

Usage: exercise-ends.py TIMELINE.tsv [K]
"""
import sys


def refuse(why):
    print(f"exercise-ends: {why}", file=sys.stderr)
    sys.exit(2)


if len(sys.argv) not in (2, 3):
    refuse("usage: exercise-ends.py TIMELINE.tsv [K]")
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])][1:]
ends = sorted(float(r[4]) for r in rows if len(r) > 4 and r[1] == "exercise")
n = len(ends)
try:
    k = int(sys.argv[2]) if len(sys.argv) > 2 else n // 8
except ValueError:
    k = -1
if not 0 <= k < n // 2:
    refuse(f"K is a whole number from 0 to {max(n // 2 - 1, 0)} for {n} exercises")
first, last = ends[k], ends[n - 1 - k]
if last <= first:
    refuse(f"the {k + 1}th and {n - k}th exercises ended together")
print(
    f"exercise-ends: {n} exercises, the last at {ends[-1]:.1f} s; the {k + 1}th to the {n - k}th "
    f"ended from {first:.1f} to {last:.1f} s: {(n - 1 - 2 * k) / (last - first) * 60:.1f} a minute"
)
