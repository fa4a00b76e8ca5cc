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
