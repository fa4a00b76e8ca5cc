#!/usr/bin/env python3
"""streams-overlap's overlapped/serial ratios in gradings: for each
results.json given, every streams run that reported both pipelines' times,
by run tag and role: each one's range, and the judged runs at or above the
judge's limit (0.8, `judge::evidence::OVERLAP_FRACTION`). Only the student's
binary at the run the overlap is timed at (`plan::streams::OVERLAP_TIMED`,
the uneven chunks) is judged, and only from 5 ms of serial time; the other
lines are the course's binary's times and the run past the grid's, made
beside other runs.

Usage: overlap-ratios.py RESULTS_JSON...   (e.g. w/jobs-16/results.json)
"""
import json, sys
from collections import defaultdict

LIMIT = 0.8
JUDGED_FROM_MS = 5.0  # `judge::evidence::OVERLAP_MIN_SERIAL_MS`
JUDGED = ("uneven-chunks", "student-host")  # `plan::streams::OVERLAP_TIMED`
ratios = defaultdict(list)
for path in sys.argv[1:]:
    students = json.load(open(path))["students"]
    for student, record in sorted(students.items()):
        for run in record["exercises"].get("streams-overlap", {}).get("runs", []):
            results = (run.get("report") or {}).get("results") or {}
            if "serial_ms" not in results:
                continue
            ratio = results["overlapped_ms"] / results["serial_ms"]
            ratios[(run["tag"], run["role"])].append((ratio, results["serial_ms"], path, student))
for (tag, role), rows in sorted(ratios.items()):
    values = sorted(r[0] for r in rows)
    serial = sorted(r[1] for r in rows)
    print(f"{tag}, {role}: {len(rows)} runs, overlapped/serial {values[0]:.2f} to {values[-1]:.2f} "
          f"(median {values[len(values) // 2]:.2f}), serial {serial[0]:.2f} to {serial[-1]:.2f} ms")
    for ratio, ms, path, student in rows:
        if (tag, role) == JUDGED and ratio >= LIMIT and ms >= JUDGED_FROM_MS:
            print(f"  judged, at or above {LIMIT}: {ratio:.2f} (serial {ms:.1f} ms), {student}, {role}, in {path}")
