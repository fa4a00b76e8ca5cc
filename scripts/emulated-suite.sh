#!/usr/bin/env bash
# The course on the CPU emulator, for CI machines without a GPU: the
# emulator's own tests; every solution's tests with the GPU-only ones included
# (less those that need GPU speed: the largest sizes, or timing); every stub's
# "fails cleanly" test; and every solution at its emulator default sizes.
set -euo pipefail
cd "$(dirname "$0")/.."

export CUDA_COURSE_EMULATOR=1
cargo build --quiet --workspace

CUDA_COURSE_REQUIRE_BINARIES=1 cargo test --quiet -p emulator

# Sizes a CPU needs minutes for (n = 2^26, matmul width 1000, streams with
# work), and tests of GPU timing.
too_slow_or_timing=(
    solution_passes_at_every_test_size_and_block_size
    solution_passes_at_every_test_width
    solution_passes_with_any_number_of_streams_and_uneven_chunks
    overlapping_beats_one_stream_at_the_defaults_and_draws_its_timeline
    the_sweep_checks_and_times_every_grid
    solution_passes_with_a_grid_smaller_than_n
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
echo "emulated-suite: passed"
