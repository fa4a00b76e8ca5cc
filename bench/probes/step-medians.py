#!/usr/bin/env python3
"""The median of each timed step over processes started together.

Usage: step-medians.py FILE LABEL. FILE has a line per process, as the
ctypes step scripts of gpu-run-cost.sh and gpu-run-parts.sh print them
("cuInit 100 ms, context 61 ms, ..."); prints "LABEL, the median of each
step: cuInit 217 ms, ...", the steps in the first line's order.
"""
import re
import statistics
import sys

path, label = sys.argv[1], sys.argv[2]
rows = [dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+) ms", line)) for line in open(path)]
rows = [r for r in rows if r]
if not rows:
    sys.exit(f"{path}: no step times")
print(f"{label}, the median of each step: "
      + ", ".join(f"{k} {statistics.median(r[k] for r in rows if k in r):.0f} ms" for k in rows[0]))
