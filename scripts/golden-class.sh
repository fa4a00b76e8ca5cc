#!/usr/bin/env bash
# The golden class: the grader's own test class (grader mutants write: every
# solution, every stub, each mutant and correct variant) built with seed 2026
# and graded on the CPU emulator, then compared with what the grader gave it
# when the fixture was last written (grader/tests/fixtures/golden-class/):
# grades.csv byte for byte, and the listing of every exercise's points, every
# run's verdict kind and points, and every check (`grader mutants listing`).
# A change that moves any grade or verdict fails here, with the diff. (The
# fixture's results.json, the grading itself, is for the grader's tests; it
# holds times and digests, so it is not compared.)
#
# A change that means to move grades regenerates the fixture with
#     scripts/golden-class.sh --update
# and its commit explains the diff. CI runs this from scripts/emulated-suite.sh.
#
# Usage: scripts/golden-class.sh [--update] [WORK_DIR]
#   WORK_DIR keeps the class, bundle and grading (default: a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."

update=false
if [ "${1:-}" = --update ]; then
    update=true
    shift
fi
fixture=grader/tests/fixtures/golden-class
if [ $# -gt 0 ]; then
    class=$1
    mkdir -p "$class"
else
    class=$(mktemp -d)
    trap 'rm -rf "$class"' EXIT
fi

target=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --quiet -p grader
grader=$target/debug/grader
rm -rf "$class/submissions" "$class/bundle" "$class/out"
"$grader" mutants write "$class/submissions"
# The dependencies as the grader's own tests build them: compiled once.
"$grader" build "$class/submissions" --bundle "$class/bundle" --seed 2026 \
    --target-dir "$target/tmp/grader-deps"
started=$(date +%s)
# --timeout 180: redundant-stride's one-wave kernel run (256 times the
# work) takes about 50 s on one core of this class's machines, and under a
# busy machine's load it ran past the default 60 s (2026-12-07, a local
# regrade): no verdict of the class rests on a time out.
"$grader" run "$class/bundle" --emulate --timeout 180 --out "$class/out" >"$class/summary.txt"
echo "golden-class: the class graded on the emulator in $(($(date +%s) - started)) s"
tail -n 3 "$class/summary.txt"
grep -h "the CPU emulator found" "$class/out/feedback/"*.md >"$class/findings.txt" || true
cut -c1-240 "$class/findings.txt" | sort -u
"$grader" mutants verify "$class/out"
"$grader" mutants listing "$class/out" >"$class/out/verdicts.tsv"

if $update; then
    mkdir -p "$fixture"
    cp "$class/out/grades.csv" "$class/out/verdicts.tsv" "$fixture/"
    # The whole results.json too, for the grader's own tests of `mutants
    # verify` and the listing; the runs' reports left out (the tests read
    # none, and they are most of its size).
    python3 - "$class/out/results.json" "$fixture/results.json" <<'TRIM'
import json, sys
results = json.load(open(sys.argv[1]))
for student in results["students"].values():
    for exercise in student["exercises"].values():
        for run in exercise["runs"]:
            run["report"] = None
json.dump(results, open(sys.argv[2], "w"), indent=1)
open(sys.argv[2], "a").write("\n")
TRIM
    echo "golden-class: wrote $fixture; explain its diff in the commit"
    git --no-pager diff --stat -- "$fixture" || true
    exit 0
fi
status=0
for file in grades.csv verdicts.tsv; do
    if ! diff -u "$fixture/$file" "$class/out/$file"; then
        echo "golden-class: $file differs from $fixture/$file (above: - fixture, + now)" >&2
        status=1
    fi
done
if [ $status -ne 0 ]; then
    echo "golden-class: the grades or verdicts changed; if on purpose, run" \
        "scripts/golden-class.sh --update and explain the diff in the commit" >&2
    exit 1
fi
echo "golden-class: grades.csv and every verdict as in $fixture"
