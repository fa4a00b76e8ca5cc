#!/usr/bin/env bash
# The course's GPU suite, run on a GPU machine from a bundle that
# scripts/gpu-bundle.sh made (it is copied in as run.sh); builds nothing.
#  1. every test executable, GPU tests included, one at a time;
#  2. compute-sanitizer memcheck and racecheck on every solution, small size;
#  3. a few solutions under the driver-call tracer (libcuda_course_trace.so,
#     the trace on descriptor 3): its records must show the kernel launched,
#     a copy back after the last launch, and for streams page-locked
#     asynchronous copies each way on two or more streams;
#  4. each solution at a large size: kernel bandwidth against the
#     device-to-device copy bandwidth measured in the same run; then reports
#     printed whole for their tables (the dot-atomic sweep), and
#     bench/harness's comparisons with library peers (cuBLAS, via PyTorch).
# Prints a short table last. Full logs go to LOG_DIR.
# Usage: run.sh [LOG_DIR]   (needs nvidia-smi, compute-sanitizer, python3)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-$(mktemp -d)}
mkdir -p "$logs"

# Small runs for the sanitizers, one per line: a solution and its arguments.
sanitize=(
    "vecadd-anyN-solution --n 100003 --runs 1"
    "dot-gm-solution --n 100003 --runs 1"
    "dot-sm-solution --n 100003 --runs 1"
    "dot-atomic-solution --n 100003 --runs 1"
    "matmul-naive-solution --width 100 --runs 1"
    "matmul-tiled-solution --width 100 --tile 16 --runs 1"
    "matmul-tiled-solution --width 100 --tile 32 --runs 1"
    "memspace-timing-solution --blocks 8 --runs 1"
    "memspace-timing-solution --blocks 8 --runs 1 --pattern per-thread"
    "streams-overlap-solution --n 100003 --runs 1"
)
# Runs under the tracer, one per line: the kernel to look for, a solution
# and its arguments.
traces=(
    "vecadd vecadd-anyN-solution --n 100003 --runs 1"
    "dot dot-sm-solution --n 100003 --runs 1"
    "sum_shared memspace-timing-solution --blocks 8 --runs 1"
    "transform streams-overlap-solution --n 1000003 --streams 3 --chunks 7 --runs 1"
)
# Measurements, one per line: a solution and its arguments.
benches=(
    "vecadd-anyN-solution --n 268435456 --runs 20"
    "dot-gm-solution --n 268435456 --runs 20"
    "dot-sm-solution --n 268435456 --runs 20"
    "dot-sm-solution --n 268435456 --runs 20 --blocks 32"
    "dot-atomic-solution --n 268435456 --runs 20"
    "dot-atomic-solution --n 268435456 --runs 20 --blocks 32"
)
# Reports printed whole, for the tables in them.
shows=(
    "dot-atomic-solution --sweep"
    "memspace-timing-solution"
    "memspace-timing-solution --pattern per-thread"
    "streams-overlap-solution --streams 1"
    "streams-overlap-solution --streams 2"
    "streams-overlap-solution --streams 4"
    "streams-overlap-solution --streams 8"
)
# Scripts with tables of their own (in the bundle's bench/), given the
# bundle's folder.
tables=(
    "matmul_vs_cublas.py"
)

rows=()
failures=()
row() { rows+=("$(printf '%-9s %-55s %s' "$1" "$2" "$3")"); }

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)
echo "GPU: $gpu"

for test in "$here"/deps/*; do
    name=$(basename "$test")
    CUDA_COURSE_SHIPPED=1 "$test" --include-ignored --test-threads=1 >"$logs/test-$name.log" 2>&1
    status=$?
    result=$(grep -E '^test result:' "$logs/test-$name.log" | tail -1 | sed 's/^test result: //; s/; finished.*//')
    row test "$name" "exit $status: ${result:-no result line}"
    if [ "$status" -ne 0 ]; then
        failures+=("== $name" "$(grep -E -A3 '^test .* FAILED$|panicked at' "$logs/test-$name.log" | head -40)")
    fi
done

for run in "${sanitize[@]}"; do
    read -r solution args <<<"$run"
    for tool in memcheck racecheck; do
        log="$logs/sanitize-$(echo "$run" | tr ' ' '_')-$tool.log"
        # shellcheck disable=SC2086 # the arguments are meant to split
        compute-sanitizer --tool "$tool" --error-exitcode 9 "$here/$solution" $args >"$log" 2>&1
        status=$?
        summary=$(grep -oE '(ERROR|RACECHECK) SUMMARY: .*' "$log" | tail -1)
        row "$tool" "$run" "exit $status: ${summary:-no summary}"
    done
done

for traced in "${traces[@]}"; do
    read -r kernel solution args <<<"$traced"
    log="$logs/trace-$(echo "$solution $args" | tr ' ' '_').txt"
    # shellcheck disable=SC2086 # the arguments are meant to split
    LD_PRELOAD="$here/libcuda_course_trace.so" CUDA_COURSE_TRACE_FD=3 \
        "$here/$solution" $args --json >"$log.json" 2>"$log.err" 3>"$log"
    status=$?
    summary=$(python3 - "$log" "$kernel" <<'PY'
import sys
calls = sorted((l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")), key=lambda c: int(c[0]))
fields = [dict(w.split("=", 1) for w in c[4:]) for c in calls]
ok = [c[3] == "0" for c in calls]
launches = [i for i, c in enumerate(calls) if c[2] == "cuLaunchKernel" and ok[i] and fields[i].get("kernel") == sys.argv[2]]
back = launches and any(ok[i] and fields[i].get("dir") == "dtoh" for i in range(launches[-1] + 1, len(calls)))
def streams(d):
    return len({f["stream"] for c, f, o in zip(calls, fields, ok)
                if o and "Async" in c[2] and f.get("dir") == d and f.get("pinned") == "1" and f["stream"] != "0x0"})
print(f'{len(calls)} records, {len(launches)} launches of {sys.argv[2]}, copy back after the last: '
      f'{"yes" if back else "NO"}; pinned async copies on {streams("htod")} streams in, {streams("dtoh")} out')
PY
)
    row trace "$solution $args" "exit $status: $summary"
done

for bench in "${benches[@]}"; do
    read -r solution args <<<"$bench"
    log="$logs/bench-$(echo "$bench" | tr ' ' '_').json"
    # shellcheck disable=SC2086 # the arguments are meant to split
    "$here/$solution" $args --json >"$log" 2>"$log.err"
    status=$?
    summary=$(python3 - "$log" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    t = r["throughput"]
    steps = " | ".join(f'{x["step"]} {x["ms"]:.3f}' for x in r["timings"])
    print(f'{"PASS" if r["check"]["passed"] else "FAIL"} blocks {r["parameters"]["blocks"]}: {steps} ms; '
          f'kernel {t["kernel_gb_per_s"]:.0f} GB/s = {t["ratio_to_copy"]:.3f} x copy {t["copy_gb_per_s"]:.0f} GB/s')
except Exception as err:
    print(f"no report: {err}")
PY
)
    row bench "$bench" "exit $status: $summary"
done

for show in "${shows[@]}"; do
    read -r solution args <<<"$show"
    echo
    echo "== $show"
    # shellcheck disable=SC2086
    "$here/$solution" $args
done

for table in "${tables[@]}"; do
    echo
    echo "== $table"
    python3 "$here/bench/$table" "$here"
done

if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "failed tests:"
    printf '%s\n' "${failures[@]}"
fi
echo
echo "cuda-course GPU suite on $gpu ($(date -u +%Y-%m-%d))"
printf '%s\n' "${rows[@]}"
