#!/usr/bin/env bash
# streams-overlap's overlap against its size, on the GPU machine (issue 26):
# whether a run of moderate size could carry the judge's overlap question
# (overlapped below 0.8 of serial, from 4 chunks and 5 ms of serial time,
# grader/src/judge/evidence.rs) that the run past the grid carries now,
# alone on the GPU for its whole process. The grader's two shapes (2
# streams, 4 chunks, work 2; 3 streams, 7 chunks, work 10 to 200) at sizes
# from 2^24 to the run past the grid's, three tries each, one at a time,
# with the process's wall time.
#
# Usage: gpu-streams-overlap-sizes.sh BINARY   (streams-overlap-solution)
set -u
BIN=$1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "n streams chunks work: serial_ms overlapped_ms ratio wall_s (three tries)"
for shape in "2 4 2" "3 7 10" "3 7 100"; do
    set -- $shape
    for n in 16777216 33554432 67108864 134217728 268500000; do
        line="$n $1 $2 $3:"
        for _ in 1 2 3; do
            s=$EPOCHREALTIME
            json=$("$BIN" --n $n --streams $1 --chunks $2 --work $3 --runs 5 --json 2>/dev/null)
            wall=$(awk -v a="$EPOCHREALTIME" -v b="$s" 'BEGIN { printf "%.2f", a - b }')
            line+=" $(python3 -c 'import json,sys; r=json.loads(sys.argv[1])["results"]; s, o = r["serial_ms"], r["overlapped_ms"]; print("%.1f %.1f %.2f" % (s, o, o / s))' "$json" 2>/dev/null || echo failed) $wall;"
        done
        echo "$line"
    done
done
