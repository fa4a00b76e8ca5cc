#!/usr/bin/env bash
# Two graders over the same class bundle on the GPU machine, one after the
# other in one call (issue 26): gpu-sampled-throughput.sh at --jobs JOBS over
# the solutions COPIES times over, grader A (GRADER_A, e.g. main's) first,
# then the bundle's own (B), none one at a time; then whether B gave A's
# grades (same-grades.py). A bundle's class is the same for both graders
# where the change is the grader's alone (the plan is drawn from the seed
# at run time).
#
# Usage: gpu-ab-throughput.sh GRADER_BUNDLE GRADER_A OUT [COPIES [JOBS [LIMIT]]]
#   GRADER_BUNDLE  scripts/grader-bundle.sh's folder; GRADER_A  another
#   grader binary; OUT  a new folder, left with a/ and b/ (each as
#   gpu-sampled-throughput.sh leaves its OUT). Defaults: 8 copies, 16 jobs,
#   270 s each.
set -u
here=$(cd "$1" && pwd)
grader_a=$2
out=$3
copies=${4:-8}
jobs=${5:-16}
limit=${6:-270}
mkdir -p "$out/a" "$out/b"
# A's bundle: the same files, A's grader.
a=$(mktemp -d /tmp/ab-a.XXXXXX)
for f in "$here"/*; do ln -s "$f" "$a/"; done
rm "$a/grader" && cp "$grader_a" "$a/grader"
THROUGHPUT_SEQUENTIAL=none bash "$a/gpu-sampled-throughput.sh" "$a" "$out/a" "$copies" "$jobs" "$limit"
THROUGHPUT_SEQUENTIAL=none bash "$here/gpu-sampled-throughput.sh" "$here" "$out/b" "$copies" "$jobs" "$limit"
python3 "$here/same-grades.py" "$out/a/w/jobs-$jobs" "$out/b/w/jobs-$jobs" | sed 's/as one at a time/as grader A/'
rm -rf "$a"
