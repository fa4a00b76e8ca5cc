#!/usr/bin/env python3
"""The grader's own class graded on the CPU emulator beside the same class
graded on a GPU: for every run both made (the same student,
exercise, run tag and role), whether the two verdicts agree: passed on both,
or failed on both. Runs one side skipped (the emulator leaves out runs above
2^31; a node without the memory skips them too) are counted apart.

Usage: emulator-vs-gpu.py EMULATED_RESULTS GPU_RESULTS
  e.g. the golden class's (scripts/golden-class.sh WORK_DIR: WORK_DIR/out/results.json)
  and grader-bundle/run.sh's on a GPU machine (OUT/results.json), both of
  the class built with seed 2026. Prints each disagreement and a summary;
  exits 1 when any run disagrees.
"""
import json
import sys


def runs(path):
    results = json.load(open(path))
    made = {}
    for student, record in results["students"].items():
        for exercise, graded in record["exercises"].items():
            for run in graded.get("runs", []):
                kind = run["verdict"]["kind"]
                key = (student, exercise, run["tag"], run.get("role") or "-")
                made[key] = kind
    return made


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    emulated, gpu = runs(sys.argv[1]), runs(sys.argv[2])
    both = sorted(set(emulated) & set(gpu))
    skipped = [k for k in both if "skipped" in (emulated[k], gpu[k])]
    compared = [k for k in both if k not in skipped]
    differ = [k for k in compared if (emulated[k] == "passed") != (gpu[k] == "passed")]
    for key in differ:
        print(f"differ: {' '.join(key)}: emulator {emulated[key]}, GPU {gpu[key]}")
    only = len(set(emulated) ^ set(gpu))
    print(f"emulator-vs-gpu: {len(compared)} runs made on both, {len(compared) - len(differ)} "
          f"with the same verdict, {len(differ)} different; {len(skipped)} skipped on one side; "
          f"{only} made on one side only")
    sys.exit(1 if differ else 0)


main()
