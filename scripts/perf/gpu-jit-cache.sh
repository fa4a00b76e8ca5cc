#!/usr/bin/env bash
# What the driver's JIT of the course's PTX costs each process, on the GPU
# machine (issue 26): every solution at a small size, a process a run, with
# the driver's cache off (CUDA_CACHE_DISABLE=1, how a fresh sandbox's
# process meets it: no cache to find) and with a cache already warm, first
# one at a time (10 each), then 16 started together (4 rounds). Prints the
# median seconds of each.
#
# Usage: gpu-jit-cache.sh GPU_BUNDLE   (scripts/gpu-bundle.sh's folder)
set -u
B=$1
export CUDA_DEVICE_MAX_CONNECTIONS=1 # as the grader's runs have it
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
runs=(
    "vecadd-anyN-solution --n 100003 --runs 2"
    "dot-sm-solution --n 100003 --runs 2"
    "matmul-tiled-solution --width 100 --tile 16 --runs 2"
    "memspace-timing-solution --blocks 8 --runs 2"
)
cache=$(mktemp -d)
median() { sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'; }
one() { # prints the seconds of one run
    local s=$EPOCHREALTIME
    "$@" --json >/dev/null 2>&1
    awk -v a="$EPOCHREALTIME" -v b="$s" 'BEGIN { printf "%.3f\n", a - b }'
}
for run in "${runs[@]}"; do
    read -r bin args <<<"$run"
    # shellcheck disable=SC2086
    CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=$cache one "$B/$bin" $args >/dev/null # warms the cache
    for mode in off warm; do
        if [ $mode = off ]; then env=(CUDA_CACHE_DISABLE=1); else env=(CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=$cache); fi
        # shellcheck disable=SC2086
        alone=$(for _ in $(seq 10); do env "${env[@]}" bash -c "$(declare -f one); one $B/$bin $args"; done | median)
        together=$(for _ in 1 2 3 4; do
            for _ in $(seq 16); do env "${env[@]}" bash -c "$(declare -f one); one $B/$bin $args" & done
            wait
        done | median)
        echo "$bin, cache $mode: alone ${alone} s, 16 at once ${together} s"
    done
done
rm -rf "$cache"
