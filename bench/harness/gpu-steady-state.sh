#!/usr/bin/env bash
# The steady state on the GPU machine: the solutions COPIES
# times over under other ids, graded JOBS at a time only
# (grading-throughput.sh with THROUGHPUT_SEQUENTIAL=none; =one grades the
# first copy one at a time too, and compares), stopped after LIMIT seconds,
# with the grader's timeline (written as each exercise ends, so a stopped
# grading keeps what it finished) and what was in flight every 30 s.
#
# Usage: gpu-steady-state.sh GRADER_BUNDLE OUT [COPIES [JOBS [LIMIT]]]
#   GRADER_BUNDLE  scripts/grader-bundle.sh's folder; OUT  a folder that
#   must not exist, left with the grading (results.json, the timeline,
#   the logs) and in-flight.txt. Defaults: 4 copies, 16 jobs, 540 s.
# Python 3 and the bundle only, as on the GPU machine.
set -u
here=$(cd "$1" && pwd)
out=$2
copies=${3:-4}
jobs=${4:-16}
limit=${5:-540}
for value in "$copies" "$jobs" "$limit"; do
    [[ $value =~ ^[1-9][0-9]*$ ]] ||
        { echo "gpu-steady-state: COPIES, JOBS and LIMIT are whole numbers above 0, not '$value'" >&2; exit 2; }
done
[ -e "$out" ] && { echo "gpu-steady-state: $out exists; name a new folder" >&2; exit 2; }
. "$here/bwrap.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
set -m
THROUGHPUT_WORK=$out THROUGHPUT_SEQUENTIAL=none THROUGHPUT_STUDENTS='^solutions$' \
    "$here/grading-throughput.sh" "$here/grader" "$here/class" "$copies" "$jobs" --timeout 120 &
pid=$!
for ((s = 1; s <= limit; s++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
    if ((s % 30 == 0)); then
        {
            echo "== $s s"
            ps -eo pid,ppid,etimes,pcpu,rss,args --sort=etimes | cut -c1-220 |
                grep -E "/grader/|compute-sanitizer --tool" | grep -v grep
            uptime
            nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
        } >>"$out/in-flight.txt"
    fi
done
if kill -0 "$pid" 2>/dev/null; then
    echo "gpu-steady-state: stopped at $limit s; what it finished is in $out/jobs-$jobs"
    kill -- -"$pid"
fi
wait "$pid"
