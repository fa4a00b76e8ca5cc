#!/usr/bin/env bash
# The steady state on the GPU machine (issue 26): the solutions COPIES
# times over under other ids, graded JOBS at a time and only so (no
# one-at-a-time grading beside it: grading-throughput.sh with
# THROUGHPUT_SEQUENTIAL=one does both), stopped after LIMIT seconds, with
# the grader's timeline (written as each exercise ends, so a stopped
# grading keeps what it finished) and what was in flight every 30 s.
#
# Usage: gpu-steady-state.sh GRADER_BUNDLE OUT [COPIES [JOBS [LIMIT]]]
#   GRADER_BUNDLE  scripts/grader-bundle.sh's folder (grader, class,
#   bwrap.sh); OUT  a folder for timeline.tsv, grading.log, in-flight.txt
#   and results.json. Defaults: 4 copies, 16 jobs, 540 s.
# Python 3 and the bundle only, as on the GPU machine.
set -u
here=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
copies=${3:-4}
jobs=${4:-16}
limit=${5:-540}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
. "$here/bwrap.sh"
work=$(mktemp -d /tmp/steady.XXXXXX)
cp -al "$here/class" "$work/copies"
python3 - "$work/copies/bundle.json" "$copies" <<'COPY'
import json, os, sys
path, copies = sys.argv[1], int(sys.argv[2])
m = json.load(open(path))
items = [i for i in m["items"] if i["student"] == "solutions"]
m["items"] = [dict(i, student=i["student"] if k == 0 else f"{i['student']}-copy{k}")
              for k in range(copies) for i in items]
os.unlink(path)  # a hard link to the bundle's own
json.dump(m, open(path, "w"), indent=1)
COPY
set -m
started=$(date +%s)
GRADER_TIMELINE=$out/timeline.tsv "$here/grader" run "$work/copies" --out "$work/graded" \
    --jobs "$jobs" --timeout 120 >"$out/grading.log" 2>&1 &
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
    echo "steady-state: stopped at $limit s" >>"$out/grading.log"
    kill -- -"$pid"
    sleep 3
fi
wait "$pid"
echo "steady-state: rc $? after $(($(date +%s) - started)) s" >>"$out/grading.log"
cp "$work/graded/results.json" "$out/" 2>/dev/null
rm -rf "$work"
grep -E "exercises graded in|steady-state:" "$out/grading.log"
