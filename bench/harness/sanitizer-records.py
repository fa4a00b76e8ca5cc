#!/usr/bin/env python3
"""Two gradings' compute-sanitizer records, compared tool by tool.

Usage: sanitizer-records.py BEFORE/results.json AFTER/results.json
For every (student, exercise, tool, run) the earlier grading recorded:
whether the later one recorded the same (clean or not, summary, first
finding); prints the count, each difference, and how many findings each
had. How the 2026-11-28 H100 check of the poison's exclusion was made
(bench/runs/2026-11-28-h100-process-parts), with the later grading
restricted to the earlier one's students.
"""
import json
import sys


def tools(results):
    return {(s, e, t["tool"], t["run"]): (t["clean"], t["summary"], t.get("finding"))
            for s, st in results["students"].items()
            for e, ex in st["exercises"].items()
            for t in ex.get("sanitizer", [])}


before, after = (tools(json.load(open(p))) for p in sys.argv[1:3])
same = [k for k in before if before[k] == after.get(k)]
print(f"sanitizer records: {len(before)} before, {len(after)} now, {len(same)} the same (clean, summary, finding)")
for k in before:
    if before[k] != after.get(k):
        print("  differs:", k, before[k], "->", after.get(k))
print(f"findings now: {sum(1 for v in after.values() if not v[0])}; "
      f"before: {sum(1 for v in before.values() if not v[0])}")
