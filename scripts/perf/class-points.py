#!/usr/bin/env python3
"""The points of every student of the grader's class, per exercise they
submitted, with the memory-safety (m) and speed (s) points and the kernel's
run above 2^31 elements: the table in scripts/perf/README.md.

Usage: scripts/perf/class-points.py RESULTS_JSON
"""
import json
import sys

results = json.load(open(sys.argv[1]))
print("| student | exercise | points | memory safety | speed | above 2^31 |")
print("| --- | --- | --- | --- | --- | --- |")
for student, record in sorted(results["students"].items()):
    for exercise, graded in sorted(record["exercises"].items()):
        if not graded["runs"]:
            continue
        checks = {c["name"]: c for c in graded.get("checks", [])}

        def point(name):
            c = checks.get(name)
            if c is None:
                return ""
            if not c["assessed"]:
                return "not assessed"
            return f"{c['points']}/{c['max_points']}"

        huge = [r for r in graded["runs"] if "above 2^31" in r["about"]]
        big = ", ".join(r["verdict"]["kind"] for r in huge)
        print(
            f"| {student} | {exercise} | {graded['points']}/{graded['max_points']} "
            f"| {point('memory safety')} | {point('speed')} | {big} |"
        )

# What scripts/perf/README.md quotes beside the table, from the same file:
# each speed point's message, the runs above 2^31 (how long, how they
# ended) and the 4-chunk streams runs' overlap.
print()
for student, record in sorted(results["students"].items()):
    for exercise, graded in sorted(record["exercises"].items()):
        for c in graded.get("checks", []):
            if c["name"] == "speed" and c["assessed"] and "your kernel took" in c["message"]:
                print(f"speed {student} {exercise}: {c['message'].split(' your kernel ')[1]}")
huge = [
    (student, r)
    for student, record in results["students"].items()
    for graded in record["exercises"].values()
    for r in graded["runs"]
    if "above 2^31" in r["about"] and r["duration_ms"] > 0
]
if huge:
    seconds = [r["duration_ms"] / 1e3 for _, r in huge]
    print(
        f"above 2^31: {len(huge)} runs made, {min(seconds):.1f} to {max(seconds):.1f} s each, "
        f"{sum(seconds):.1f} s in all"
    )
    for student, r in huge:
        if not r["verdict"]["passed"]:
            print(f"  {student}: {r['verdict']['message'][:120]}")
for student, record in sorted(results["students"].items()):
    graded = record["exercises"].get("streams-overlap", {})
    for r in graded.get("runs", []):
        found = (r.get("report") or {}).get("results", {})
        if "4 chunks" in r["about"] and "serial_ms" in found:
            which = "kernel" if r.get("kernel_ptx") else "binary"
            print(
                f"overlap {student} ({which}): {found['overlapped_ms']:.1f} of "
                f"{found['serial_ms']:.1f} ms serial, {found['overlapped_ms'] / found['serial_ms']:.2f}"
            )
