#!/usr/bin/env bash
# Grading throughput: a synthetic class, the grader's own class
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
#   THROUGHPUT_SEQUENTIAL=one grades only the first copy one at a time and
#   compares every copy of the concurrent grading with it: the copies are
#   the same binaries under the same seed, so each must grade the same, and
#   a steady state of JOBS at once (more exercises than workers) costs one
#   sequential grading, not COPIES of them. THROUGHPUT_SEQUENTIAL=none
#   grades only JOBS at a time, and compares nothing (gpu-steady-state.sh).
# On the GPU machine: grader-bundle/throughput.sh [COPIES [JOBS [FLAGS...]]].
# Here, on the CPU emulator: scripts/grader-bundle.sh, then
#   bench/harness/grading-throughput.sh target/release/grader grader-bundle/class 1 2 --emulate
set -euo pipefail
grader=$1
bundle=$2
copies=${3:-1}
jobs=${4:-$(nproc)}
shift $(($# < 4 ? $# : 4))
# THROUGHPUT_WORK=DIR keeps the gradings (results, logs, timelines) in DIR,
# which must not exist: what a grading stopped midway left is kept there too.
if [ -n "${THROUGHPUT_WORK:-}" ]; then
    work=$THROUGHPUT_WORK
    [ -e "$work" ] && { echo "grading-throughput: THROUGHPUT_WORK=$work exists; name a new folder" >&2; exit 2; }
    mkdir -p "$work"
else
    work=$(mktemp -d /tmp/throughput.XXXXXX)
    trap 'rm -rf "$work"' EXIT
fi

# The synthetic bundle: the same files, each item listed COPIES times
# (bundle.json), and the sequential grading's list (sequential.json).
# The folder's contents, also where BUNDLE is a link to it: a link copied
# as a link had the lists below written into the linked bundle itself.
mkdir "$work/bundle"
cp -r "$bundle/." "$work/bundle/"
python3 - "$work/bundle" "$copies" "${THROUGHPUT_STUDENTS:-}" "${THROUGHPUT_SEQUENTIAL:-all}" <<'COPY'
import json, re, sys
folder, copies, keep, sequential = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
if sequential not in ("all", "one", "none"):
    print(f"grading-throughput: THROUGHPUT_SEQUENTIAL={sequential!r} is not one of: all (the default), one, none",
          file=sys.stderr)
    sys.exit(2)
manifest = json.load(open(f"{folder}/bundle.json"))
items = [i for i in manifest["items"] if re.search(keep, i["student"])]
def listed(n):
    return [dict(item, student=item["student"] if k == 0 else f"{item['student']}-copy{k}")
            for k in range(n) for item in items]
json.dump(dict(manifest, items=listed(copies)), open(f"{folder}/bundle.json", "w"), indent=1)
json.dump(dict(manifest, items=listed(1 if sequential == "one" else copies)),
          open(f"{folder}/sequential.json", "w"), indent=1)
graded = sum(1 for i in listed(copies) if not i.get("absent"))
print(f"throughput: {len({i['student'] for i in listed(copies)})} students, {graded} exercises submitted"
      + {"one": ", the first copy of them graded one at a time",
         "none": ", none graded one at a time"}.get(sequential, ""))
COPY
# The sequential grading's bundle: the same files (hard links), its own list.
cp -al "$work/bundle" "$work/sequential"
mv "$work/sequential/sequential.json" "$work/sequential/bundle.json"
rm "$work/bundle/sequential.json"

gradings="1 $jobs"
[ "${THROUGHPUT_SEQUENTIAL:-all}" = none ] && gradings=$jobs
for j in $gradings; do
    started=$(date +%s.%N)
    [ "$j" = 1 ] && graded=$work/sequential || graded=$work/bundle
    GRADER_TIMELINE=$work/timeline-$j.tsv "$grader" run "$graded" --out "$work/jobs-$j" --jobs "$j" "$@" \
        >"$work/jobs-$j.log" 2>&1 || { tail -n 20 "$work/jobs-$j.log"; exit 1; }
    ended=$(date +%s.%N)
    echo "throughput: --jobs $j: $(grep '^grader: .* exercises graded in' "$work/jobs-$j.log" | sed 's/^grader: //')"
    echo "throughput: --jobs $j: $(python3 -c "print(f'{$ended - $started:.1f}')") s wall with the reports"
    # How full the workers were: the runs in flight over the grading's time,
    # and the workers' waits for a turn, from the grader's timeline.
    if [ -s "$work/timeline-$j.tsv" ]; then
        python3 - "$work/timeline-$j.tsv" "$j" <<'FULL'
import sys
every = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
# An exercise's line spans its worker's runs for it, and an alone line a
# gated run's time with the GPU alone inside its run's: neither is a run.
rows = [r for r in every if r[1] not in ("exercise", "alone")]
alone = [(float(r[2]), float(r[3]), float(r[4])) for r in every if r[1] == "alone"]
graded = sorted(float(r[4]) - float(r[3]) for r in every if r[1] == "exercise")
spans = [(float(r[3]), float(r[4])) for r in rows]
waited = sum(float(r[3]) - float(r[2]) for r in rows)
end = max(t for _, t in spans)
busy = sum(t - f for f, t in spans)
edges = sorted([(f, 1) for f, _ in spans] + [(t, -1) for _, t in spans])
idle, depth, last = 0.0, 0, 0.0
for at, step in edges:
    if depth == 0:
        idle += at - last
    depth += step
    last = at
print(f"throughput: --jobs {sys.argv[2]}: {busy / end:.1f} runs in flight on average over {end:.1f} s, "
      f"{idle:.1f} s with none; workers waited {waited:.1f} s in all for a turn on the GPU")
if alone:
    print(f"throughput: --jobs {sys.argv[2]}: the GPU alone {len(alone)} times for "
          f"{sum(t - f for _, f, t in alone):.1f} s in all, after waits of "
          f"{sum(f - a for a, f, _ in alone):.1f} s in all for the runs in flight to end")
if graded:
    print(f"throughput: --jobs {sys.argv[2]}: each exercise's grading took {graded[len(graded) // 2]:.1f} s "
          f"(median; {graded[0]:.1f} to {graded[-1]:.1f} s) from start to end")
FULL
    fi
    [ "$j" = "$jobs" ] && break
done

# The same grades, run by run: every verdict's kind and points (times and
# the tools' wall times left out, which no two gradings share), each copy's
# against the sequential grading's same copy, or its first.
[ "${THROUGHPUT_SEQUENTIAL:-all}" = none ] && exit 0
python3 "$(dirname "$0")/same-grades.py" "$work/jobs-1" "$work/jobs-$jobs"
