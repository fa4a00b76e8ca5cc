#!/usr/bin/env bash
# Adds the GPU broker's check to a bundle for a GPU machine without Rust
# (scripts/gpu-bundle.sh makes the course's; this works alone too): builds
# here, release, and lays out
#
#   OUT/broker/run.sh                     broker/gpu-check.sh
#   OUT/broker/cuda-course-broker         the broker
#   OUT/broker/cuda-course-broker-bench   the per-call benchmark
#   OUT/broker/client/libcuda.so.1        the client library
#   OUT/broker/<solution>, vecadd-anyN    the binaries it runs both ways
#
# There: OUT/broker/run.sh [LOG_DIR]
# Usage: broker/gpu-bundle.sh [OUT]   (default gpu-bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-bundle}/broker

solutions=(vecadd-anyN dot-gm dot-sm dot-atomic matmul-naive matmul-tiled memspace-timing streams-overlap)
packages=(-p broker -p broker-client -p vecadd-anyN)
for name in "${solutions[@]}"; do
    packages+=(-p "$name-solution")
done
cargo build --release "${packages[@]}"

rm -rf "$out"
mkdir -p "$out/client"
binaries=(cuda-course-broker cuda-course-broker-bench vecadd-anyN)
for name in "${solutions[@]}"; do
    binaries+=("$name-solution")
done
for bin in "${binaries[@]}"; do
    cp "target/release/$bin" "$out/"
done
cp target/release/libcuda_course_broker_client.so "$out/client/libcuda.so.1"
strip "$out/client/libcuda.so.1" $(printf "$out/%s " "${binaries[@]}")
cp broker/gpu-check.sh "$out/run.sh"
echo "broker gpu-bundle: $(ls "$out" | wc -l) files, $(du -sh "$out" | cut -f1) in $out/; there: $out/run.sh [LOG_DIR]"
