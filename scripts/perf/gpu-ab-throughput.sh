#!/usr/bin/env bash
# Two graders over the same class bundle on the GPU machine, one after the
# other in one call (issue 26): grader A (GRADER_A, e.g. main's) first,
# then the bundle's own (B), each over the solutions COPIES times over at
# --jobs JOBS, none one at a time; then whether B gave A's grades
# (gpu-graders-throughput.sh, which takes any number of graders).
#
# Usage: gpu-ab-throughput.sh GRADER_BUNDLE GRADER_A OUT [COPIES [JOBS [LIMIT]]]
#   GRADER_BUNDLE  scripts/grader-bundle.sh's folder; GRADER_A  another
#   grader binary; OUT  a new folder, left with a/ and b/ (each as
#   gpu-sampled-throughput.sh leaves its OUT). Defaults: 8 copies, 16 jobs,
#   270 s each.
set -u
here=$(cd "$1" && pwd)
bash "$here/gpu-graders-throughput.sh" "$here" "$3" "${4:-8}" "${5:-16}" "${6:-270}" \
    "a=$2" "b=$here/grader"
