#!/usr/bin/env bash
# Several graders over the same class bundle on the GPU machine, one after
# the other in one call: gpu-sampled-throughput.sh at --jobs
# JOBS over the solutions COPIES times over for each, none one at a time;
# then whether each gave the first's grades (same-grades.py). A bundle's
# class is the same for every grader where the changes are the graders'
# alone (the plan is drawn from the seed at run time).
#
# Usage: gpu-graders-throughput.sh GRADER_BUNDLE OUT COPIES JOBS LIMIT NAME=GRADER...
#   GRADER_BUNDLE  scripts/grader-bundle.sh's folder; OUT  a new folder,
#   left with NAME/ for each grader (as gpu-sampled-throughput.sh leaves
#   its OUT); each NAME=GRADER a name and a grader binary, graded in that
#   order; LIMIT the seconds each grading may take.
set -u
here=$(cd "$1" && pwd)
out=$2
copies=$3
jobs=$4
limit=$5
shift 5
first=
for named in "$@"; do
    name=${named%%=*}
    grader=${named#*=}
    mkdir -p "$out/$name"
    # This grader's bundle: the same files, its grader.
    bundle=$(mktemp -d "/tmp/graders-$name.XXXXXX")
    for f in "$here"/*; do ln -s "$f" "$bundle/"; done
    rm "$bundle/grader" && cp "$grader" "$bundle/grader"
    THROUGHPUT_SEQUENTIAL=none bash "$bundle/gpu-sampled-throughput.sh" "$bundle" "$out/$name" "$copies" "$jobs" "$limit"
    rm -rf "$bundle"
    if [ -z "$first" ]; then
        first=$name
    else
        python3 "$here/same-grades.py" "$out/$first/w/jobs-$jobs" "$out/$name/w/jobs-$jobs" |
            sed "s/as one at a time/as grader $first ($name)/"
    fi
done
