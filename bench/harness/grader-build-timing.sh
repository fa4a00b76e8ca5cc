#!/usr/bin/env bash
# How long `grader build` takes for a class: the dependencies, compiled
# once per class (a class of one from a cold --target-dir), then 30
# submissions of all eight exercises (copies of the solutions), each built
# in its own sandbox, then the same bundle again with a 31st submission
# added: the cost of one more submission. Runs on the build machine; no GPU
# needed.
# Usage: bench/harness/grader-build-timing.sh [WORK_DIR]
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

rm -rf "$work/target" "$work/bundle"
class "$work/class" 1
start=$(date +%s.%N)
$grader build "$work/class" --seed 1 --bundle "$work/bundle" --target-dir "$work/target" 2>/dev/null
deps=$(echo "$(date +%s.%N) - $start" | bc)
rm -rf "$work/bundle"

class "$work/class" 30
start=$(date +%s.%N)
$grader build "$work/class" --seed 1 --bundle "$work/bundle" --target-dir "$work/target" 2>/dev/null
first=$(echo "$(date +%s.%N) - $start" | bc)

# One more student; the 30 others are untouched, so only the newcomer's
# crates compile.
class "$work/class" 31
start=$(date +%s.%N)
$grader build "$work/class" --seed 1 --bundle "$work/bundle" --target-dir "$work/target" 2>/dev/null
again=$(echo "$(date +%s.%N) - $start" | bc)

echo "machine: $(nproc) cores; $(ls "$work/bundle/bin" | wc -l) binaries for 31 students"
printf 'the dependencies, once per class (cold):      %.0f s\n' "$deps"
printf '30 submissions of all 8 exercises:            %.0f s (%.1f s per submission)\n' "$first" "$(echo "$first / 30" | bc -l)"
printf 'one more submission, the 30 unchanged:        %.0f s\n' "$again"
