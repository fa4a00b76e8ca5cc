#!/usr/bin/env bash
# Builds, on this machine (no GPU needed), everything the GPU test suite runs,
# and lays it out for a GPU machine that has no Rust toolchain:
#
#   gpu-bundle/<binary>        every exercise and solution, release, stripped
#   gpu-bundle/deps/<test>     their test executables (GPU tests are #[ignore]d;
#                              run.sh includes them)
#   gpu-bundle/libcuda_course_trace.so  the driver-call tracer (tracer/), which
#                              run.sh preloads into a few solutions
#   gpu-bundle/run.sh          scripts/gpu-suite.sh: runs it all, prints a table
#   gpu-bundle/bench/          bench/harness's comparisons with library peers
#   gpu-bundle/course-root/    the solutions' sources, for `course check --prebuilt`
#
# Test executables find the binary under test in the folder above their own,
# as cargo lays them out, so the bundle works wherever it is copied.
# The grader's own GPU run has a bundle of its own: scripts/grader-bundle.sh.
# Usage: scripts/gpu-bundle.sh [OUT_DIR]   (default gpu-bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-bundle}

cargo build --release --workspace --bins
cargo build --release -p tracer --lib
tests=$(cargo test --release --workspace --no-run --message-format=json \
    | grep '"kind":\["test"\]' \
    | grep -E '"manifest_path":"[^"]*/(exercises|solutions)/' \
    | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
bins=$(cargo metadata --format-version 1 --no-deps \
    | grep -o '"kind":\["bin"\][^}]*"name":"[^"]*"' | grep -o '"name":"[^"]*"' | cut -d'"' -f4)

rm -rf "$out"
mkdir -p "$out/deps"
for bin in $bins; do
    cp "target/release/$bin" "$out/"
done
for test in $tests; do
    cp "$test" "$out/deps/"
done
# Stripped: the bundle travels, and symbols are not needed to run.
cp target/release/libcuda_course_trace.so "$out/"
strip "$out"/deps/* $(printf "$out/%s " $bins) "$out/libcuda_course_trace.so"
cp scripts/gpu-suite.sh "$out/run.sh"
# `course check` there, where there is no cargo: the solutions' sources as a
# finished course, to check against the solution binaries:
#   ./course --root course-root check dot-sm --prebuilt ./dot-sm-solution
for dir in solutions/*/; do
    name=$(basename "$dir")
    mkdir -p "$out/course-root/exercises/$name"
    cp -r "$dir/src" "$out/course-root/exercises/$name/"
done
: >"$out/course-root/Cargo.toml"
mkdir -p "$out/bench"
cp bench/harness/matmul_vs_cublas.py "$out/bench/"
echo "gpu-bundle: $(ls "$out" | grep -vc deps) files, $(ls "$out/deps" | wc -l) test executables, $(du -sh "$out" | cut -f1) in $out/"
