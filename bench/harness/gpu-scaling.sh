#!/usr/bin/env bash
# Grading throughput over every GPU of the machine against one of them
# (`grader run --gpus`): the solutions COPIES times over, graded once with
# `--gpus` naming every GPU (--jobs at its default, the cores over the
# GPUs, on each) and once on GPU 0 alone at the same --jobs, both sampled
# by gpu-sampled-throughput.sh, in that order; then whether the two gave the
# same grades, and how many of each grading's runs each GPU made.
#
# Usage: gpu-scaling.sh GRADER_BUNDLE OUT [COPIES [LIMIT]]
#   GRADER_BUNDLE  scripts/grader-bundle.sh's folder; OUT  a folder (made
#   if absent), left with all/ and one/, each gpu-sampled-throughput.sh's
#   OUT. COPIES default 16; LIMIT, seconds for each grading, default 300.
# Python 3 and the bundle only, as on the GPU machine.
set -u
here=$(cd "$1" && pwd)
out=$2
copies=${3:-16}
limit=${4:-300}
for value in "$copies" "$limit"; do
    if ! [[ $value =~ ^[1-9][0-9]*$ ]]; then
        echo "gpu-scaling.sh: COPIES and LIMIT must be whole numbers from 1, not '$value'" >&2
        exit 2
    fi
done
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
if [ -z "$gpus" ]; then
    echo "gpu-scaling.sh: nvidia-smi lists no GPU; this measures a machine with one or more" >&2
    exit 2
fi
count=$(echo "$gpus" | tr ',' '\n' | wc -l)
jobs=$(($(nproc) / count))
[ "$jobs" -ge 1 ] || jobs=1
harness=$(dirname "$0")
echo "gpu-scaling: GPUs $gpus, --jobs $jobs on each"
THROUGHPUT_FLAGS="--gpus $gpus" THROUGHPUT_SEQUENTIAL=none \
    bash "$harness/gpu-sampled-throughput.sh" "$here" "$out/all" "$copies" "$jobs" "$limit"
THROUGHPUT_FLAGS="--gpus 0" THROUGHPUT_SEQUENTIAL=none \
    bash "$harness/gpu-sampled-throughput.sh" "$here" "$out/one" "$copies" "$jobs" "$limit"
python3 "$harness/same-grades.py" "$out/one/w/jobs-$jobs" "$out/all/w/jobs-$jobs" | head -3
# The timeline's lane is the GPU's place in --gpus.
python3 - "$out/all/w/timeline-$jobs.tsv" <<'LANES'
import collections, sys
runs, seconds = collections.Counter(), collections.Counter()
for line in list(open(sys.argv[1]))[1:]:
    lane, phase, asked, start, end = line.rstrip("\n").split("\t")
    runs[lane] += 1
    seconds[lane] += float(end) - float(start)
for lane in sorted(runs):
    print(f"gpu-scaling: GPU {lane}: {runs[lane]} runs, {seconds[lane]:.1f} s of runs")
LANES
