#!/usr/bin/env bash
# What a compute-sanitizer process costs on the GPU machine: the
# course's vecadd-anyN binary with its own PTX at two small runs (the
# grader's one-element and grid-smaller-than-n shapes), one run a process
# against both runs in one process (kernels::batch), plain and under
# memcheck and initcheck, four times each, one at a time; then 16 workers
# at once making 64 memcheck runs (or 64 plain runs) a run a process
# (w1, w3) and two runs a process (w2, w4), as --jobs 16 grading does.
#
# Usage: gpu-tool-processes.sh GRADER_BUNDLE
#   scripts/grader-bundle.sh's folder (only class/reference/vecadd-anyN and
#   its .ptx are used). Prints the seconds of each.
set -u
export CUDA_DEVICE_MAX_CONNECTIONS=1 # as the grader's runs have it
B=$1
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
echo "compute-sanitizer: $CS"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
BIN=$B/class/reference/vecadd-anyN
export CUDA_COURSE_KERNEL_PTX=$B/class/reference/vecadd-anyN.ptx
A1='["--n","1","--threads","32","--seed","1043899752931186422","--runs","1","--json"]'
A2='["--n","12287","--threads","1024","--blocks","1","--seed","16877319821102185597","--runs","1","--json"]'
batch=$(mktemp)
trap 'rm -f "$batch"' EXIT
printf '0123456789abcdef0123\n%s\n%s\n' "$A1" "$A2" >"$batch"
one() { "$@" "$BIN" --n 1 --threads 32 --seed 1043899752931186422 --runs 1 --json >/dev/null 2>&1; }
two() { CUDA_COURSE_BATCH=$batch "$@" "$BIN" >/dev/null 2>&1; }
took() {
    local s=$EPOCHREALTIME
    "$@"
    awk -v a="$EPOCHREALTIME" -v b="$s" 'BEGIN { printf "%.3f ", a - b }'
}
four() { for _ in 1 2 3 4; do took "$@"; done; echo; }
echo -n "plain, one run: "; four one
echo -n "plain, two runs a process: "; four two
for tool in memcheck initcheck; do
    echo -n "$tool, one run: "; four one "$CS" --tool $tool
    echo -n "$tool, two runs a process: "; four two "$CS" --tool $tool
done
w1() { for _ in 1 2 3 4; do one "$CS" --tool memcheck; done; }
w2() { for _ in 1 2; do two "$CS" --tool memcheck; done; }
w3() { for _ in 1 2 3 4; do one; done; }
w4() { for _ in 1 2; do two; done; }
for w in w1 w2 w3 w4; do
    s=$EPOCHREALTIME
    for _ in $(seq 16); do $w & done
    wait
    awk -v a="$EPOCHREALTIME" -v b="$s" -v w=$w 'BEGIN { printf "16 workers %s: %.2f s\n", w, a - b }'
done
