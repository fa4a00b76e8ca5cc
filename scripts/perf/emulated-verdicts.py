#!/usr/bin/env python3
"""The grader's own class graded on the CPU emulator beside a GPU's grading
of it (by default grader/tests/fixtures/h200-class-results.json, the grader
as it grades now; the H100's of November is h100-class-results.json): one
row per student, the points of each, and per differing exercise which runs'
verdicts differ; then, run by run (same student, exercise, tag and role),
how many runs both made end the same way, and a table of those that do not.
Prints Markdown for scripts/perf/README.md.

Usage: python3 scripts/perf/emulated-verdicts.py OUT/results.json [GPU_RESULTS]
(OUT from `grader run BUNDLE --emulate --out OUT` of the class written by
`grader mutants write`). Python standard library only.
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "grader" / "tests" / "fixtures" / "h200-class-results.json"


def points(student):
    """Points got and possible over the exercises the student submitted."""
    graded = [e for e in student["exercises"].values() if not e.get("absent")]
    return sum(e["points"] for e in graded), sum(e["max_points"] for e in graded)


def kinds(exercise):
    """Each run's verdict kind, in plan order."""
    return [r["verdict"]["kind"] for r in exercise["runs"]]


FINDINGS = [
    "shared-memory race",
    "global-memory conflict",
    "out-of-bounds",
    "misaligned",
    "barrier not reached by every thread",
    "waits forever",
]


def finding(exercise):
    """The first emulator finding of a failed run: its kind and kernel.cu line.
    (results.json of schema 2 keeps findings typed; schema 1 in the message.)"""
    for run in exercise["runs"]:
        for found in run.get("findings", []):
            line = found.get("line")
            kind = found["kind"].replace("-", " ")
            return f"{kind} ({f'kernel.cu:{line}' if line else 'no line'})"
        for line in run["verdict"].get("message", "").splitlines():
            if "the CPU emulator found: " not in line:
                continue
            kind = next((k for k in FINDINGS if k in line), "finding")
            at = re.search(r"kernel\.cu:\d+", line)
            return f"{kind} ({at.group(0) if at else 'no line'})"
    return ""


def runs(results):
    """Each run's verdict kind, by (student, exercise, tag, role)."""
    return {
        (student, exercise, run.get("tag"), run.get("role")): run["verdict"]["kind"]
        for student, record in results["students"].items()
        for exercise, graded in record["exercises"].items()
        for run in graded.get("runs", [])
    }


def by_run(gpu, emulated):
    """Runs made on both (the emulator's skipped ones aside): how many
    passed on both or failed on both, and a table of the others."""
    gpu, emulated = runs(gpu), runs(emulated)
    both = [k for k in gpu if k in emulated and "skipped" not in (gpu[k], emulated[k])]
    differ = sorted(k for k in both if (gpu[k] == "passed") != (emulated[k] == "passed"))
    print(f"\n{len(both)} runs made on both; {len(both) - len(differ)} with the same outcome "
          f"(passed or not), {sum(gpu[k] == emulated[k] for k in both)} with the same verdict kind.")
    if differ:
        print("\n| student | exercise | run | role | GPU | emulator |\n| --- | --- | --- | --- | --- | --- |")
        for k in differ:
            print(f"| {' | '.join(map(str, k))} | {gpu[k]} | {emulated[k]} |")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    emulated = json.loads(Path(sys.argv[1]).read_text())
    if not emulated.get("emulated"):
        sys.exit(f"{sys.argv[1]} was not graded with --emulate")
    gpu_path = Path(sys.argv[2]) if len(sys.argv) == 3 else GPU
    gpu = json.loads(gpu_path.read_text())
    device = "H200" if "h200" in gpu_path.name else "H100" if "h100" in gpu_path.name else "GPU"
    print(f"| student | {device} | emulator | differences, and the emulator's finding |")
    print("| --- | --- | --- | --- |")
    same = 0
    names = sorted(set(gpu["students"]) | set(emulated["students"]))
    for name in names:
        g = gpu["students"].get(name)
        e = emulated["students"].get(name)
        cell = lambda s: "%d/%d" % points(s) if s else "not in the class"
        notes = []
        for exercise in sorted((e or {}).get("exercises", {})):
            ee = e["exercises"][exercise]
            ge = (g or {}).get("exercises", {}).get(exercise)
            if ge is None or ee["points"] != ge["points"] or kinds(ee) != kinds(ge):
                if ge is not None and ee["points"] != ge["points"]:
                    notes.append(f"{exercise} {ge['points']} -> {ee['points']}")
                skipped = kinds(ee).count("skipped")
                if skipped:
                    notes.append(f"{exercise}: {skipped} run skipped")
            found = finding(ee)
            if found:
                notes.append(found)
        # Points lost: the skipped run is out of both got and max.
        lost = lambda s: points(s)[1] - points(s)[0]
        if g and e and lost(g) == lost(e):
            same += 1
        print(f"| {name} | {cell(g)} | {cell(e)} | {'; '.join(notes)} |")
    print(f"\n{same} of {len(names)} students lose the same points on both.")
    by_run(gpu, emulated)


if __name__ == "__main__":
    main()
