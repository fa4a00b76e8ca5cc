#!/usr/bin/env python3
"""How the grading's times with the GPU alone follow each other,
from a timeline GRADER_TIMELINE wrote (grading-throughput.sh keeps it as
w/timeline-JOBS.tsv).

Usage: alone-gaps.py TIMELINE [TOP [SHARED]]
  TIMELINE  the tsv (lane, phase, asked, start, end); TOP  how many of the
  longest gaps to list (default 8); SHARED  the shortest gap counted as a
  shared phase, in seconds (default 10).

The times alone are the gated runs' windows (phase `alone`) and the runs
alone for their whole process (phase `timed runs`). Prints their sum, the
stretch from the first to the last, the longest of them (the course's
streams windows at the run past the grid among them), the gaps between
one's end and the next one's start (each with when it began), their sum,
and how many gaps were under half a second: a gap is time with no run
alone, while runs waited to be (or none was waiting). Last, the phases a
grading alternates between: the gaps of SHARED seconds or more (default
10), where the tools and batches have the GPU, and the rest of the
stretch from the first time alone to the last, where the timed runs go.
"""
import sys

path = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 8
shared = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
rows = [line.rstrip("\n").split("\t") for line in open(path)][1:]
alone = sorted(
    (float(r[3]), float(r[4]), r[1]) for r in rows if r[1] in ("alone", "timed runs")
)
if not alone:
    sys.exit(f"alone-gaps: no time alone in {path}")
gaps = [(nxt[0] - cur[1], cur[1]) for cur, nxt in zip(alone, alone[1:])]
total = sum(end - start for start, end, _ in alone)
print(
    f"alone-gaps: {len(alone)} times alone, {total:.1f} s in all, "
    f"from {alone[0][0]:.1f} s to {alone[-1][1]:.1f} s"
)
windows = sorted(((end - start, start, phase) for start, end, phase in alone), reverse=True)
print(
    "alone-gaps: the longest times alone: "
    + ", ".join(f"{s:.2f} s at {at:.1f} s ({phase})" for s, at, phase in windows[:top])
)
longest = ", ".join(f"{g:.2f} s at {at:.1f} s" for g, at in sorted(gaps, reverse=True)[:top])
short = [g for g, _ in gaps if g < 0.5]
print(
    f"alone-gaps: gaps {sum(g for g, _ in gaps):.1f} s in all; the longest {longest}; "
    f"{len(short)} under 0.5 s, {sum(short):.1f} s in all"
)
long = [g for g, _ in gaps if g >= shared]
stretch = alone[-1][1] - alone[0][0]
print(
    f"alone-gaps: {len(long)} gaps of {shared:g} s or more, {sum(long):.1f} s in all (the shared "
    f"phases); the rest of the stretch, {stretch - sum(long):.1f} s (the timed phases), "
    f"{total:.1f} s of it alone"
)
