#!/usr/bin/env bash
# How long `grader build` takes for a class: 30 submissions of all eight
# exercises (copies of the solutions) from a cold target folder, then the
# same class plus one more submission on the warm one: the cost of one
# additional submission. Runs on the build machine; no GPU needed.
# Usage: scripts/perf/grader-build-timing.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-$(mktemp -d)}
cargo build -q --release -p grader
grader=target/release/grader

class() {  # class DIR COUNT: COUNT students, each with every solution
    rm -rf "$1"
    for k in $(seq -w 1 "$2"); do
        for exercise in solutions/*/; do
            name=$(basename "$exercise")
            mkdir -p "$1/student$k/$name"
            cp -r "$exercise/src" "$1/student$k/$name/"
        done
    done
}

class "$work/thirty" 30
rm -rf "$work/target"
start=$(date +%s.%N)
$grader build "$work/thirty" --seed 1 --bundle "$work/bundle30" --target-dir "$work/target" 2>/dev/null
first=$(echo "$(date +%s.%N) - $start" | bc)

class "$work/thirty-one" 31
start=$(date +%s.%N)
$grader build "$work/thirty-one" --seed 1 --bundle "$work/bundle31" --target-dir "$work/target" 2>/dev/null
again=$(echo "$(date +%s.%N) - $start" | bc)

echo "machine: $(nproc) cores; $(grep -c . <<<"$(ls "$work/bundle30/bin")") binaries for 30 students"
printf '30 submissions, cold target:            %.0f s (%.1f s per submission)\n' "$first" "$(echo "$first / 30" | bc -l)"
printf '31 submissions, warm target (same 30 + 1): %.0f s\n' "$again"
