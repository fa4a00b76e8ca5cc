#!/usr/bin/env bash
# The course on the CPU emulator, for CI machines without a GPU: the
# emulator's own tests; every solution's tests with the GPU-only ones included
# (less those that need GPU speed: the largest sizes, or timing); every stub's
# "fails cleanly" test; every solution at its emulator default sizes; the
# grader's own class graded with --emulate against its golden grades and
# verdicts (scripts/golden-class.sh); and the solutions built from nvcc 13's
# PTX (scripts/emulated-nvcc13.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

export CUDA_COURSE_EMULATOR=1
# The stubs are as handed out: their "done" test expects "not done".
export CUDA_COURSE_SHIPPED=1
cargo build --quiet --workspace

CUDA_COURSE_REQUIRE_BINARIES=1 cargo test --quiet -p emulator

# Sizes a CPU needs minutes for (n = 2^26, matmul width 1000 or 1024, streams
# with work), and tests of GPU timing.
too_slow_or_timing=(
    solution_passes_at_every_test_size_and_block_size
    solution_passes_at_every_test_width
    solution_passes_with_any_number_of_streams_and_uneven_chunks
    overlapping_beats_one_stream_at_the_defaults_and_draws_its_timeline
    the_sweep_checks_and_times_every_grid
    solution_passes_with_a_grid_smaller_than_n
    solution_passes_seeded_inputs
)
skips=()
for name in "${too_slow_or_timing[@]}"; do
    skips+=(--skip "$name")
done

for dir in solutions/*/; do
    name="$(basename "$dir")"
    echo "emulated-suite: $name-solution tests, then $name stub tests"
    cargo test --quiet -p "$name-solution" -- --include-ignored "${skips[@]}"
    cargo test --quiet -p "$name" -- --include-ignored "${skips[@]}"
done

for dir in solutions/*/; do
    name="$(basename "$dir")-solution"
    echo "emulated-suite: $name at the emulator's default sizes"
    cargo run --quiet -p "$name" -- --runs 1 | grep -E '^(check|parameters)'
done
# The grader's own class (solutions, stubs, every mutant) graded on the
# emulator: its expectations, the emulator's own (each race, out-of-bounds and
# barrier mutant named with its kernel.cu line) included, and every grade and
# verdict as the golden fixture holds them (scripts/golden-class.sh). Target:
# under 5 minutes on 2 cores for the run; it takes about 2
# (bench/runs/2026-11-27-h100-throughput).
scripts/golden-class.sh

# The solutions built from the GPU machine's nvcc 13 PTX run and pass too.
scripts/emulated-nvcc13.sh
echo "emulated-suite: passed"
