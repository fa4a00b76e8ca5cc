#!/usr/bin/env bash
# Where racecheck's time over memspace-timing goes, on the GPU machine:
# the course's memspace-timing binary with the course's own PTX
# at the grader's racechecked shape (1024-thread blocks, uniform reads,
# one timed run), plain and under racecheck (the poison kernel left out by
# name, as the grader does) at 1, 3 and 32 blocks, twice each, one at a
# time; then racecheck with the driver's JIT cache kept between the two,
# and memcheck, for scale. Prints the seconds of each and racecheck's own
# options.
#
# Usage: gpu-memspace-racecheck.sh GRADER_BUNDLE
#   scripts/grader-bundle.sh's folder (only class/reference/memspace-timing
#   and its .ptx are used).
set -u
export CUDA_DEVICE_MAX_CONNECTIONS=1 # as the grader's runs have it
B=$1
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
echo "compute-sanitizer: $CS"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
BIN=$B/class/reference/memspace-timing
export CUDA_COURSE_KERNEL_PTX=$B/class/reference/memspace-timing.ptx
export CUDA_CACHE_DISABLE=1
RC=("$CS" --tool racecheck --kernel-name-exclude kne=course_poison_shared)
run() { "$@" --threads 1024 --runs 1 --json >/dev/null 2>&1; }
took() {
    local s=$EPOCHREALTIME
    "$@"
    awk -v a="$EPOCHREALTIME" -v b="$s" 'BEGIN { printf "%.3f ", a - b }'
}
twice() { for _ in 1 2; do took "$@"; done; echo; }
for blocks in 1 3 32; do
    echo -n "plain, $blocks blocks: "; twice run "$BIN" --blocks $blocks
    echo -n "racecheck, $blocks blocks: "; twice run "${RC[@]}" "$BIN" --blocks $blocks
done
echo -n "racecheck, 1 block, per-thread reads of 480 threads: "
twice "${RC[@]}" "$BIN" --blocks 1 --threads 480 --pattern per-thread --runs 1 --json
echo -n "racecheck, 1 block, the poison checked too: "; twice run "$CS" --tool racecheck "$BIN" --blocks 1
echo -n "memcheck, 1 block: "; twice run "$CS" --tool memcheck "$BIN" --blocks 1
cache=$(mktemp -d)
echo -n "racecheck, 1 block, JIT cache kept: "
CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=$cache twice run "${RC[@]}" "$BIN" --blocks 1
echo -n "plain, 1 block, JIT cache kept: "
CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=$cache twice run "$BIN" --blocks 1
rm -rf "$cache"
echo "racecheck's options:"
"$CS" --help 2>/dev/null | grep -A2 -- "--racecheck" | head -40
