#!/usr/bin/env python3
"""compute-sanitizer's time in a grading, from results.json:
each exercise's tools, their records, how many were left out as they could
find nothing (`not_run`), how many found something (not clean), and their
wall seconds, summed over every student; then the totals, each tool's
seconds among them.

Usage: tool-seconds.py RESULTS_JSON
"""
import collections
import json
import sys

results = json.load(open(sys.argv[1]))
seconds = collections.defaultdict(float)
records = collections.Counter()
left_out = collections.Counter()
found = collections.Counter()
for student in results["students"].values():
    for exercise, graded in student["exercises"].items():
        for record in graded.get("sanitizer") or []:
            key = (exercise, record["tool"])
            seconds[key] += record.get("seconds", 0.0)
            records[key] += 1
            left_out[key] += record.get("not_run") is not None
            found[key] += record.get("not_run") is None and not record.get("clean", True)
for key in sorted(records):
    print(
        f"{key[0]} {key[1]}: {records[key]} records, {left_out[key]} not run, "
        f"{found[key]} found something, {seconds[key]:.1f} s"
    )
by_tool = collections.Counter()
tool_seconds = collections.Counter()
for (_, tool), n in found.items():
    by_tool[tool] += n
for (_, tool), s in seconds.items():
    tool_seconds[tool] += s
print(
    f"tool-seconds: {sum(records.values())} records, {sum(left_out.values())} not run, "
    f"{sum(seconds.values()):.1f} s in all ("
    + ", ".join(f"{tool} {s:.1f} s" for tool, s in sorted(tool_seconds.items()))
    + "); found something: "
    + (", ".join(f"{tool} {n}" for tool, n in sorted(by_tool.items())) or "none")
)
