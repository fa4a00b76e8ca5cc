#!/usr/bin/env bash
# The grading throughput on the GPU machine with the machine sampled:
# grading-throughput.sh over the solutions COPIES times at
# --jobs JOBS (and, with THROUGHPUT_SEQUENTIAL=one, the first copy one at
# a time, compared), while the CPU's busy share (/proc/stat) and the GPU's
# utilization and memory (nvidia-smi) are written twice a second, each line
# with its time. bench/harness/busy-windows.py then says, ten seconds at a
# time, how busy both were and which phases were in flight.
#
# Usage: gpu-sampled-throughput.sh GRADER_BUNDLE OUT [COPIES [JOBS [LIMIT]]]
#   GRADER_BUNDLE  scripts/grader-bundle.sh's folder; OUT  a folder (made
#   if absent), left with throughput.txt, cpu.txt, gpu.txt and the grading (w/:
#   timelines, logs, results). Defaults: 4 copies, 16 jobs, 400 s.
#   THROUGHPUT_FLAGS: more flags for `grader run`, e.g. `--gpus 0,1`
#   (gpu-scaling.sh); with several GPUs gpu.txt has a line for each.
# Python 3 and the bundle only, as on the GPU machine.
set -u
here=$(cd "$1" && pwd)
out=$2
copies=${3:-4}
jobs=${4:-16}
limit=${5:-400}
if ! mkdir -p "$out"; then
    echo "gpu-sampled-throughput.sh: cannot make OUT, $out: a folder the results go in" >&2
    exit 2
fi
. "$here/bwrap.sh"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } >"$out/device.txt"
# The CPU: the busy share of all cores since the last line, in tenths of a
# percent, and which grading (--jobs N) was running.
(
    prev=($(head -1 /proc/stat))
    while sleep 0.5; do
        cur=($(head -1 /proc/stat))
        total=0
        for i in 1 2 3 4 5 6 7 8; do total=$((total + cur[i] - prev[i])); done
        idle=$((cur[4] + cur[5] - prev[4] - prev[5]))
        running=$(pgrep -af "grader run" | grep -o -- "--jobs [0-9]*" | head -1)
        echo "$(date +%s.%N) $((total > 0 ? 1000 * (total - idle) / total : 0)) ${running:-none}"
        prev=("${cur[@]}")
    done
) >"$out/cpu.txt" 2>/dev/null &
cpu=$!
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 \
    >"$out/gpu.txt" 2>/dev/null &
gpu=$!
THROUGHPUT_WORK=$out/w THROUGHPUT_STUDENTS='^solutions$' \
    timeout "$limit" "$here/grading-throughput.sh" "$here/grader" "$here/class" "$copies" "$jobs" \
    --timeout 120 ${THROUGHPUT_FLAGS:-} >"$out/throughput.txt" 2>&1
echo "grading-throughput.sh: exit $?" >>"$out/throughput.txt"
kill "$cpu" "$gpu"
grep throughput: "$out/throughput.txt"
