#!/usr/bin/env python3
"""Whether two gradings of the same bundle gave the same grades: grades.csv
and, run by run, every verdict's kind and points, every check and every
integrity flag (times and the tools' wall times left out, which no two
gradings share). Each copy of a synthetic class (ids ending -copyK, from
grading-throughput.sh) is compared with the first folder's same copy, or its
first. Exit 0 when the same, 1 with the first differences otherwise.

Usage: same-grades.py FIRST SECOND   (folders with results.json and grades.csv;
`grader report DIR` writes grades.csv from results.json)
Used by grading-throughput.sh (FIRST the grading one at a time), and to
compare the gradings of two graders over the same bundle.
"""
import csv, io, json, re, sys
def copy_of(student):
    found = re.search(r"-copy(\d+)$", student)
    return (student[:found.start()], int(found[1])) if found else (student, 0)
def listing(folder):
    """Each copy's verdict rows and grades.csv rows, under the first copy's ids."""
    results = json.load(open(f"{folder}/results.json"))
    rows = {}
    for student, record in sorted(results["students"].items()):
        name_of, k = copy_of(student)
        out = rows.setdefault(k, [])
        for name, exercise in sorted(record["exercises"].items()):
            out.append((name_of, name, "points", exercise["points"], exercise["max_points"]))
            for run in exercise["runs"]:
                out.append((name_of, name, run["tag"], run.get("role"), run["verdict"]["kind"], run["points"]))
            for check in exercise["checks"]:
                out.append((name_of, name, check["name"], check["passed"], check["points"]))
            for flag in exercise.get("integrity", []):
                out.append((name_of, name, "integrity", json.dumps(flag, sort_keys=True)))
    grades = {}
    table = list(csv.reader(io.StringIO(open(f"{folder}/grades.csv").read())))
    for line in table[1:]:
        name_of, k = copy_of(line[0])
        grades.setdefault(k, []).append([name_of] + line[1:])
    return rows, {k: sorted(g) for k, g in grades.items()}, table[0]
(one, one_csv, one_head), (many, many_csv, many_head) = listing(sys.argv[1]), listing(sys.argv[2])
differ, csv_differ = [], one_head != many_head
for k in many:
    base = one.get(k, one[0])
    differ += [(a, b) for a, b in zip(base, many[k]) if a != b]
    differ += [("missing", r) for r in base[len(many[k]):]] + [("extra", r) for r in many[k][len(base):]]
    csv_differ |= many_csv.get(k) != one_csv.get(k, one_csv[0])
rows = sum(len(r) for r in many.values())
if not differ and not csv_differ and set(many) >= set(one):
    print(f"throughput: the same grades.csv and the same {rows} verdicts and points as one at a time"
          + (f" ({len(many)} copies, each against the sequential grading's)" if len(many) > 1 else ""))
    sys.exit(0)
print(f"throughput: DIFFERENT from one at a time: grades.csv {'differs' if csv_differ else 'same'}, "
      f"{len(differ)} of {rows} rows differ")
for a, b in differ[:20]:
    print(f"  one at a time: {a}\n  at once:       {b}")
sys.exit(1)
