#!/usr/bin/env python3
"""Run by run, the verdicts of one class graded on a GPU and on the CPU
emulator (the same bundle): for every run both made (same student,
exercise, tag and role; the emulator's skipped runs left out), whether
both passed or both failed, and the runs where they differ.

Usage: python3 scripts/perf/verdicts-by-run.py GPU/results.json EMULATED/results.json
Python standard library only; prints a Markdown summary."""
import json
import sys


def runs(path):
    students = json.load(open(path))["students"]
    found = {}
    for student, record in students.items():
        for exercise, graded in record["exercises"].items():
            for run in graded.get("runs", []):
                key = (student, exercise, run.get("tag"), run.get("role"))
                found[key] = run["verdict"]["kind"]
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gpu, emulated = runs(sys.argv[1]), runs(sys.argv[2])
    both = [k for k in gpu if k in emulated and "skipped" not in (gpu[k], emulated[k])]
    differ = [k for k in both if (gpu[k] == "passed") != (emulated[k] == "passed")]
    kinds = sum(gpu[k] == emulated[k] for k in both)
    print(f"{len(both)} runs made on both; {len(both) - len(differ)} with the same outcome "
          f"(passed or not), {kinds} with the same verdict kind; "
          f"{sum(1 for k in gpu if k not in emulated)} only on the GPU, "
          f"{sum(1 for k in emulated if emulated[k] == 'skipped')} skipped on the emulator.")
    if differ:
        print("\n| student | exercise | run | role | GPU | emulator |\n| --- | --- | --- | --- | --- | --- |")
        for k in sorted(differ):
            print(f"| {' | '.join(map(str, k))} | {gpu[k]} | {emulated[k]} |")


if __name__ == "__main__":
    main()
