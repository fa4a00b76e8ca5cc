#!/usr/bin/env python3
"""The points of every student of the grader's class, per exercise they
submitted, with the memory-safety (m) and speed (s) points and the kernel's
run above 2^31 elements: the table in
bench/runs/2026-11-24-h200-class-safety-speed/README.md.

Usage: bench/harness/class-points.py RESULTS_JSON
(results.json of schema 1, rendered messages, or 2, typed outcomes.)
"""
import json
import sys

results = json.load(open(sys.argv[1]))
TYPED = results.get("schema_version", 1) >= 2


def past_int(run):
    """A run above 2^31 elements."""
    return run.get("tag") == "past-int" if TYPED else "above 2^31" in run["about"]


def passed(run):
    return run["verdict"]["kind"] == "passed"


def check_name(name):
    """A check's name as the file writes it."""
    return name.replace(" ", "-") if TYPED else name


def speed_said(c):
    """What a measured speed point found, or None."""
    if TYPED:
        o = c["outcome"]
        if o["why"] != "measured":
            return None
        return (
            f"took {o['theirs_ms']:.3f} ms and the course's {o['course_ms']:.3f} ms on this GPU: "
            f"{o['fraction']:.2f} of its speed (the point asks {o['asks']})"
        )
    if "your kernel took" not in c["message"]:
        return None
    return c["message"].split(" your kernel ")[1]
print("| student | exercise | points | memory safety | speed | above 2^31 |")
print("| --- | --- | --- | --- | --- | --- |")
for student, record in sorted(results["students"].items()):
    for exercise, graded in sorted(record["exercises"].items()):
        if not graded["runs"]:
            continue
        checks = {c["name"]: c for c in graded.get("checks", [])}

        def point(name):
            c = checks.get(check_name(name))
            if c is None:
                return ""
            if not c["assessed"]:
                return "not assessed"
            return f"{c['points']}/{c['max_points']}"

        huge = [r for r in graded["runs"] if past_int(r)]
        big = ", ".join(r["verdict"]["kind"] for r in huge)
        print(
            f"| {student} | {exercise} | {graded['points']}/{graded['max_points']} "
            f"| {point('memory safety')} | {point('speed')} | {big} |"
        )

# What that run's README quotes beside the table, from the same file:
# each speed point's message, the runs above 2^31 (how long, how they
# ended) and the 4-chunk streams runs' overlap.
print()
for student, record in sorted(results["students"].items()):
    for exercise, graded in sorted(record["exercises"].items()):
        for c in graded.get("checks", []):
            if c["name"] == "speed" and c["assessed"] and speed_said(c):
                print(f"speed {student} {exercise}: {speed_said(c)}")
huge = [
    (student, r)
    for student, record in results["students"].items()
    for graded in record["exercises"].values()
    for r in graded["runs"]
    if past_int(r) and r["duration_ms"] > 0
]
if huge:
    seconds = [r["duration_ms"] / 1e3 for _, r in huge]
    print(
        f"above 2^31: {len(huge)} runs made, {min(seconds):.1f} to {max(seconds):.1f} s each, "
        f"{sum(seconds):.1f} s in all"
    )
    for student, r in huge:
        if not passed(r):
            said = json.dumps(r["verdict"]) if TYPED else r["verdict"]["message"]
            print(f"  {student}: {said[:120]}")
for student, record in sorted(results["students"].items()):
    graded = record["exercises"].get("streams-overlap", {})
    for r in graded.get("runs", []):
        found = (r.get("report") or {}).get("results", {})
        four_chunks = (
            r.get("tag") == "chunks-past-the-grid" if TYPED else "4 chunks" in r["about"]
        )
        if four_chunks and "serial_ms" in found:
            kernel = r.get("role") == "kernel-in-course-host" if TYPED else r.get("kernel_ptx")
            which = "kernel" if kernel else "binary"
            print(
                f"overlap {student} ({which}): {found['overlapped_ms']:.1f} of "
                f"{found['serial_ms']:.1f} ms serial, {found['overlapped_ms'] / found['serial_ms']:.2f}"
            )
