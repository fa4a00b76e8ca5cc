#!/usr/bin/env bash
# Where a run above 2^31 elements spends its time: vecadd-anyN's
# and dot-gm's, in the course's binary with the solution's PTX, as the
# grader makes them and with their inputs made on the host, and streams-overlap's run past the grid in the
# student's binary, each with its wall, user and system seconds and its
# page faults (/usr/bin/time), and the steps its report times; then the
# cost of faulting in 8 GiB of fresh host memory from one thread, with and
# without transparent huge pages asked for (madvise), beside the machine's
# huge-page setting. Needs python3 (with numpy), /usr/bin/time and a GPU;
# no Rust. Prints one line per measurement.
#
# Usage: gpu-huge-run-parts.sh BUNDLE   (a class bundle: grader-bundle/class)
set -euo pipefail
bundle=$(cd "$1" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "cores: $(nproc); $(grep MemTotal /proc/meminfo)"
for f in enabled defrag; do
    echo "transparent_hugepage/$f: $(cat /sys/kernel/mm/transparent_hugepage/$f 2>/dev/null || echo unreadable)"
done
out=$(mktemp -d /tmp/huge-parts.XXXXXX)
trap 'rm -rf "$out"' EXIT

# measure LABEL BINARY ARGS...: BINARY (in the bundle) with ARGS and --json,
# unsandboxed, as the environment says (the course's binary takes the
# student's PTX from CUDA_COURSE_KERNEL_PTX).
measure() {
    local label=$1 binary=$2
    shift 2
    (cd "$bundle" && /usr/bin/time -o "$out/time" -f "%e %U %S %R %M" "$binary" "$@" --json \
        >"$out/report" 2>"$out/err") || true
    cp "$out/report" "$out/report.$(printf %s "$label" | tr -c 'a-zA-Z0-9' _)"
    python3 - "$label" "$out/time" "$out/report" <<'SUM'
import json, sys
label, times, report = sys.argv[1:]
wall, user, sys_, faults, kb = open(times).read().split()[-5:]
try:
    r = json.load(open(report))
    steps = ", ".join(f"{t['step']} {t['ms']:.0f} ms" for t in r.get("timings", []))
    passed = r["check"]["passed"]
except Exception as err:
    steps, passed = f"no report ({err})", None
print(f"{label}: {float(wall):.2f} s wall, {float(user):.1f} s user, {float(sys_):.1f} s system, "
      f"{int(faults)} minor faults, {int(kb) / 2**20:.1f} GiB peak; passed {passed}; {steps}")
SUM
}

# Each twice: as graded since 2026-11-29 (--inputs-on-gpu: a and b made on
# the GPU, vecadd-anyN's c checked there), and with the inputs made on the
# host as before; the solutions' kernels and vecadd-anyN's int-index mutant
# (wrong past 2^31), whose two reports must agree.
ptx=$bundle/ptx
for how in --inputs-on-gpu ""; do
    where=${how:+gpu}
    where=${where:-host}
    for kernel in vecadd-anyN--solutions vecadd-anyN--vecadd-anyN.int-index; do
        CUDA_COURSE_KERNEL_PTX=$ptx/$kernel.ptx measure "$kernel above 2^31, inputs on the $where" \
            reference/vecadd-anyN --n 2149066723 --seed 15454367867572156772 --runs 1 $how
    done
    CUDA_COURSE_KERNEL_PTX=$ptx/dot-gm--solutions.ptx measure "dot-gm--solutions above 2^31, inputs on the $where" \
        reference/dot-gm --n 2149847741 --a 8-7i --b -5-i --runs 1 $how
done
python3 - "$out" <<'SAME'
import glob, json, sys
out = sys.argv[1]
def load(path):
    try:
        return json.load(open(path))
    except Exception as err:
        return {"unreadable": str(err)}
for gpu in sorted(glob.glob(f"{out}/report.*_inputs_on_the_gpu")):
    host = load(gpu[: -len("gpu")] + "host")
    gpu_report = load(gpu)
    fields = ["exercise", "parameters", "check", "results", "error"]
    differ = [f for f in fields if gpu_report.get(f) != host.get(f)]
    name = gpu.split("report.")[1].split("_above")[0]
    print(f"{name}: inputs on the GPU and on the host give "
          + ("the same exercise, parameters, check, results and error" if not differ
             else f"DIFFERENT {', '.join(differ)}"))
SAME
# streams-overlap's run past the grid in the student's binary (the
# solution's, built with the grader's canary kernel, so its check fails:
# only the time is read), which the grader makes alone for its whole
# process; --runs 1 as planned until 2026-11-29 (now 5).
measure "streams-overlap past the grid, the student's binary" bin/streams-overlap--solutions--canary \
    --n 269237805 --streams 2 --chunks 4 --work 2 --runs 1

python3 - <<'FAULTS'
import mmap, os, time
import numpy as np
size = 8 << 30
for advise in (False, True):
    m = mmap.mmap(-1, size)
    if advise:
        m.madvise(mmap.MADV_HUGEPAGE)
    t0, c0 = time.perf_counter(), os.times()
    np.frombuffer(m, dtype=np.float32)[:] = 1.0
    t1, c1 = time.perf_counter(), os.times()
    print(f"8 GiB written from one thread, madvise(MADV_HUGEPAGE) {advise}: {t1 - t0:.2f} s wall, "
          f"{c1.user - c0.user:.2f} s user, {c1.system - c0.system:.2f} s system")
    m.close()
FAULTS
