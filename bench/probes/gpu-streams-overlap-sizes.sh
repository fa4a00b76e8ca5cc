#!/usr/bin/env bash
# streams-overlap's overlap against its size, on the GPU machine:
# whether a run of moderate size could carry the judge's overlap question
# (overlapped below 0.8 of serial, from 4 chunks and 5 ms of serial time,
# grader/src/judge/evidence.rs) that the run past the grid carries now,
# alone on the GPU for its whole process. The grader's two shapes (2
# streams, 4 chunks, work 2; 3 streams, 7 chunks, work 10 to 200) at sizes
# from 2^24 to the run past the grid's, three tries each, one at a time,
# with the process's wall time.
#
# Usage: gpu-streams-overlap-sizes.sh BINARY   (streams-overlap-solution, or
#   a grader bundle's class/reference/streams-overlap)
# SHAPES ("streams chunks work", ';'-separated), SIZES and TRIES replace the
# defaults; the uneven chunks' sizes (2026-11-29, evening) were
#   SHAPES="3 7 10;3 7 100;3 7 199" SIZES="62914561 67108865 71303167" TRIES=1
set -u
BIN=$1
IFS=';' read -r -a shapes <<<"${SHAPES:-2 4 2;3 7 10;3 7 100}"
sizes=${SIZES:-16777216 33554432 67108864 134217728 268500000}
tries=${TRIES:-3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "n streams chunks work: serial_ms overlapped_ms ratio wall_s ($tries tries)"
for shape in "${shapes[@]}"; do
    set -- $shape
    for n in $sizes; do
        line="$n $1 $2 $3:"
        for _ in $(seq "$tries"); do
            s=$EPOCHREALTIME
            json=$("$BIN" --n $n --streams $1 --chunks $2 --work $3 --runs 5 --json 2>/dev/null)
            wall=$(awk -v a="$EPOCHREALTIME" -v b="$s" 'BEGIN { printf "%.2f", a - b }')
            line+=" $(python3 -c 'import json,sys; r=json.loads(sys.argv[1])["results"]; s, o = r["serial_ms"], r["overlapped_ms"]; print("%.1f %.1f %.2f" % (s, o, o / s))' "$json" 2>/dev/null || echo failed) $wall;"
        done
        echo "$line"
    done
done
