#!/usr/bin/env bash
# Grading throughput (issue 26): a synthetic class, the grader's own class
# bundle (every solution, stub, mutant and correct variant) COPIES times
# over under other ids (the same binaries, so no build), graded once one
# exercise at a time (--jobs 1, the sequential grading) and once JOBS at a
# time. Prints, for each, the exercise gradings per minute and where the
# time went (the grader's own closing line: each phase's runs and seconds),
# then whether the two gave the same grades.csv and the same verdicts and
# points run by run.
#
# Usage: grading-throughput.sh GRADER BUNDLE [COPIES [JOBS [RUN_FLAGS...]]]
#   GRADER  the grader binary; BUNDLE  a class bundle (`grader build`'s
#   folder, e.g. grader-bundle/class from scripts/grader-bundle.sh);
#   COPIES  default 1; JOBS  default the machine's cores; RUN_FLAGS  for
#   both gradings, e.g. --emulate or --no-sanitize. THROUGHPUT_STUDENTS, a
#   Python regular expression, keeps only the students it matches (e.g.
#   '^(solutions|stubs)$'), for a sequential grading that fits a time limit.
# On the GPU machine: grader-bundle/throughput.sh [COPIES [JOBS [FLAGS...]]].
# Here, on the CPU emulator: scripts/grader-bundle.sh, then
#   scripts/perf/grading-throughput.sh target/release/grader grader-bundle/class 1 2 --emulate
set -euo pipefail
grader=$1
bundle=$2
copies=${3:-1}
jobs=${4:-$(nproc)}
shift $(($# < 4 ? $# : 4))
work=$(mktemp -d /tmp/throughput.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The synthetic bundle: the same files, each item listed COPIES times.
cp -r "$bundle" "$work/bundle"
python3 - "$work/bundle/bundle.json" "$copies" "${THROUGHPUT_STUDENTS:-}" <<'COPY'
import json, re, sys
path, copies, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3]
manifest = json.load(open(path))
items = [i for i in manifest["items"] if re.search(keep, i["student"])]
manifest["items"] = [dict(item, student=item["student"] if k == 0 else f"{item['student']}-copy{k}")
                     for k in range(copies) for item in items]
json.dump(manifest, open(path, "w"), indent=1)
graded = sum(1 for i in manifest["items"] if not i.get("absent"))
print(f"throughput: {len({i['student'] for i in manifest['items']})} students, {graded} exercises submitted")
COPY

for j in 1 "$jobs"; do
    started=$(date +%s.%N)
    "$grader" run "$work/bundle" --out "$work/jobs-$j" --jobs "$j" "$@" \
        >"$work/jobs-$j.log" 2>&1 || { tail -n 20 "$work/jobs-$j.log"; exit 1; }
    ended=$(date +%s.%N)
    echo "throughput: --jobs $j: $(grep '^grader: .* exercises graded in' "$work/jobs-$j.log" | sed 's/^grader: //')"
    echo "throughput: --jobs $j: $(python3 -c "print(f'{$ended - $started:.1f}')") s wall with the reports"
    [ "$j" = "$jobs" ] && break
done

# The same grades, run by run: every verdict's kind and points (times and
# the tools' wall times left out, which no two gradings share).
python3 - "$work/jobs-1" "$work/jobs-$jobs" <<'SAME'
import json, sys
def listing(folder):
    results = json.load(open(f"{folder}/results.json"))
    rows = []
    for student, record in sorted(results["students"].items()):
        for name, exercise in sorted(record["exercises"].items()):
            rows.append((student, name, "points", exercise["points"], exercise["max_points"]))
            for run in exercise["runs"]:
                rows.append((student, name, run["tag"], run.get("role"), run["verdict"]["kind"], run["points"]))
            for check in exercise["checks"]:
                rows.append((student, name, check["name"], check["passed"], check["points"]))
            for flag in exercise.get("integrity", []):
                rows.append((student, name, "integrity", json.dumps(flag, sort_keys=True)))
    return rows, open(f"{folder}/grades.csv").read()
(one, one_csv), (many, many_csv) = listing(sys.argv[1]), listing(sys.argv[2])
differ = [(a, b) for a, b in zip(one, many) if a != b]
if one_csv == many_csv and one == many:
    print(f"throughput: the same grades.csv and the same {len(one)} verdicts and points as one at a time")
    sys.exit(0)
print(f"throughput: DIFFERENT from one at a time: grades.csv {'same' if one_csv == many_csv else 'differs'}, "
      f"{len(differ) + abs(len(one) - len(many))} of {len(one)} rows differ")
for a, b in differ[:20]:
    print(f"  one at a time: {a}\n  at once:       {b}")
sys.exit(1)
SAME
