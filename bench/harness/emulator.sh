#!/usr/bin/env bash
# The CPU emulator's speed (not a test: numbers depend on the machine).
#   1. thread-instructions per CPU second on one core, on dot-sm's and
#      matmul-tiled's kernels (CUDA_COURSE_EMULATOR_THREADS=1);
#   2. the wall time of `dot-sm-solution --n 1000000` (target: under 2 s);
#   3. the wall time of each solution at its emulator default sizes.
# Release builds; run from anywhere: bench/harness/emulator.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

export CUDA_COURSE_EMULATOR=1
cargo build --quiet --release -p emulator
for dir in solutions/*/; do
    cargo build --quiet --release -p "$(basename "$dir")-solution"
done

echo "== thread-instructions per CPU second, one core (median launch of 5)"
for case in "dot-sm-solution -- --n 1000000" "matmul-tiled-solution -- --width 200"; do
    # shellcheck disable=SC2086
    rate=$(CUDA_COURSE_EMULATOR_THREADS=1 CUDA_COURSE_EMULATOR_STATS=1 \
        cargo run --quiet --release -p $case --runs 4 2>&1 >/dev/null |
        sed -n 's/.*(\([0-9]*\) million per CPU second)/\1/p' | sort -n | sed -n 3p)
    printf '%-40s %s million/s\n' "${case/ -- / }" "$rate"
done

echo "== wall time"
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}
printf '%-40s %s s\n' "dot-sm-solution --n 1000000" \
    "$(seconds cargo run --quiet --release -p dot-sm-solution -- --n 1000000)"
for dir in solutions/*/; do
    name="$(basename "$dir")-solution"
    printf '%-40s %s s\n' "$name (emulator defaults)" "$(seconds cargo run --quiet --release -p "$name")"
done
