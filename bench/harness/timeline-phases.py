#!/usr/bin/env python3
"""Where a grading's time went, from its timeline (GRADER_TIMELINE).

Usage: timeline-phases.py TIMELINE.tsv [WINDOW_S]
Prints, for each phase, its lines, their seconds summed, the longest, and
their waits (start minus asked: for a run, its worker's wait for a turn;
for an alone line, the gated run's wait for the GPU alone); then the runs
in flight on average in each WINDOW_S seconds (default 20), exercise and
alone lines left out as grading-throughput.sh leaves them. How the
2026-11-28 steady-state figures were read
(bench/runs/2026-11-28-h200-steady-state).
"""
import sys
from collections import defaultdict

def refuse(why):
    print(f"timeline-phases: {why}", file=sys.stderr)
    sys.exit(2)


if len(sys.argv) not in (2, 3):
    refuse("usage: timeline-phases.py TIMELINE.tsv [WINDOW_S]")
path = sys.argv[1]
try:
    window = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
except ValueError:
    window = 0.0
if not window > 0:
    refuse(f"WINDOW_S is a number of seconds above 0, not {sys.argv[2]!r}")
rows = [line.rstrip("\n").split("\t") for line in open(path)][1:]
spans = [(r[1], float(r[2]), float(r[3]), float(r[4])) for r in rows]
if not spans:
    refuse(f"{path} has no lines")
phases = defaultdict(list)
for phase, asked, start, end in spans:
    phases[phase].append((asked, start, end))
for phase, lines in sorted(phases.items()):
    took = [end - start for _, start, end in lines]
    waits = [start - asked for asked, start, _ in lines]
    print(f"{phase}: {len(lines)} lines, {sum(took):.1f} s in all, the longest {max(took):.1f} s; "
          f"waits {sum(waits):.1f} s in all, the longest {max(waits):.1f} s")
runs = [(start, end) for phase, _, start, end in spans if phase not in ("exercise", "alone")]
last = max(end for _, end in runs)
at = 0.0
while at < last:
    upto = min(at + window, last)
    busy = sum(max(0.0, min(end, upto) - max(start, at)) for start, end in runs)
    print(f"{at:.0f} to {upto:.0f} s: {busy / (upto - at):.1f} runs in flight")
    at = upto
