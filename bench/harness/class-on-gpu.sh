#!/usr/bin/env bash
# The grader's class graded on the GPU machine in calls of at most ~9
# minutes (the device tool's limit), each resuming the last one's grading;
# how the 2026-11-25 and 2026-11-27 H100 figures in docs/src/instructors.md
# were made (the 27th's with TIMEOUT=60).
#
# Here:   scripts/grader-bundle.sh /work/gb
#         tar -C /work -cf - gb/grader gb/class gb/bwrap.sh gb/bubblewrap_*.deb | xz > .carry/gb.tar.xz
# There:  BUDGET=545 bench/harness/class-on-gpu.sh [STUDENT...]   (no students: all)
#         GPUS=0,1 grades over those GPUs (`--gpus`).
#         with the previous call's $OUT/g.tar.xz copied to .carry/g.tar.xz to resume.
# Leaves $OUT/g.tar.xz (the grading), $OUT/log.txt (with `mutants verify`),
# and prints the seconds per graded exercise and the sanitizers' share.
set -u
started=$(date +%s)
mkdir -p /tmp/gbx && tar -xJf .carry/gb.tar.xz -C /tmp/gbx
here=/tmp/gbx/${BUNDLE:-gb}
. "$here/bwrap.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
out=/tmp/g
mkdir -p $out
[ -f .carry/g.tar.xz ] && tar -xJf .carry/g.tar.xz -C /tmp && echo "resumed: $(ls $out)"
students=()
for s in "$@"; do students+=(--student "$s"); done
budget=$(( ${BUDGET:-540} - ($(date +%s) - started) ))
GRADER_LOG_MEMORY=1 timeout -s TERM "$budget" "$here/grader" run "$here/class" \
    --timeout "${TIMEOUT:-120}" ${GPUS:+--gpus "$GPUS"} --out $out --resume "${students[@]}" >$OUT/log.txt 2>&1
echo "grader rc=$? after $(( $(date +%s) - started )) s" >>$OUT/log.txt
"$here/grader" mutants verify $out >>$OUT/log.txt 2>&1
tar -C /tmp -cJf $OUT/g.tar.xz g
python3 - $out/results.json <<'SUM'
import json, sys
r = json.load(open(sys.argv[1]))
graded = [e for s in r["students"].values() for e in s["exercises"].values() if not e.get("absent")]
tools = sum(t.get("seconds", 0) for e in graded for t in e.get("sanitizer", []))
stuck = sum(x["verdict"].get("seconds", 0) for e in graded for x in e["runs"] if x["verdict"]["kind"] == "timed-out")
print(f"{len(graded)} exercises graded; sanitizers {tools:.0f} s; timed-out runs {stuck:.0f} s "
      "(divide the calls' wall time by the exercises for seconds per exercise)")
kinds = {}
for e in graded:
    for x in e["runs"]:
        kinds[x["verdict"]["kind"]] = kinds.get(x["verdict"]["kind"], 0) + 1
print("runs by verdict:", ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())))
SUM
tail -5 $OUT/log.txt
