#!/usr/bin/env bash
# What each kind of process in a grading costs the GPU machine,
# alone and 16 at once: the course's binary over a planned run with and
# without the copy-bandwidth probe in it (dot-sm runs it, matmul-naive does
# not), each compute-sanitizer tool over the same run (with the course's
# shared-memory poison left out of its checks, as the grader runs it; with
# PARTS_WITH_POISON=1 also without, as it ran before 2026-11-28, and with
# racecheck's host threads one per core or one), and the probe's own
# driver steps (two 512 MiB buffers: allocate, fill, copy, free) timed
# through ctypes. For each: the wall time of one alone, the wall time of 16
# started together, and the CPU time they spent (user + system), so a
# cost the driver serialises (16 at once take about 16 times one) tells
# itself apart from one the cores share (16 at once take about the CPU
# time over the cores). Needs python3, /usr/bin/time, compute-sanitizer and
# a GPU; no Rust. Prints one line per measurement.
#
# Usage: gpu-run-parts.sh BUNDLE   (a class bundle: grader-bundle/class)
set -euo pipefail
bundle=$(cd "$1" && pwd)
export CUDA_DEVICE_MAX_CONNECTIONS=1 bundle
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
echo "cores: $(nproc)"
times=$(mktemp /tmp/gpu-run-parts.XXXXXX)
trap 'rm -f "$times" "$times.py"' EXIT

# measure LABEL EXERCISE COMMAND: the command (in the bundle's folder, the
# solution's PTX as the kernel) once alone (the second of two, so the first
# warms the caches), then AT_ONCE (default 16) of it at once.
measure() {
    export RUN_PTX=$bundle/ptx/$2--solutions.ptx RUN_LINE=$3
    one() { cd "$bundle" && CUDA_COURSE_KERNEL_PTX=$RUN_PTX eval "$RUN_LINE" >/dev/null 2>&1; }
    export -f one
    for i in 1 2; do /usr/bin/time -o "$times" -f "%e %U %S" bash -c one || true; done
    alone=$(tail -n 1 "$times" | cut -d' ' -f1)
    if grep -q "non-zero" "$times"; then echo "$1: $(head -n 1 "$times")"; fi
    local started ended
    started=$(date +%s.%N)
    local n=${AT_ONCE:-16}
    seq "$n" | xargs -P "$n" -I{} /usr/bin/time -a -o "$times.all" -f "%e %U %S" bash -c one || true
    ended=$(date +%s.%N)
    python3 - "$1" "$alone" "$started" "$ended" "$times.all" "$n" <<'SUM'
import sys
label, alone, started, ended, path, n = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
rows = [list(map(float, l.split())) for l in open(path) if l[:1].isdigit()]
cpu = sum(u + s for _, u, s in rows)
wall = ended - started
print(f"{label}: alone {alone:.2f} s; {n} at once {wall:.2f} s wall "
      f"({wall / alone:.1f} times one alone), {cpu:.1f} s of CPU ({cpu / wall:.1f} cores busy)")
SUM
    rm -f "$times.all"
}

dot="reference/dot-sm --n 1 --threads 64 --blocks 1 --a -3+i --b 1+7i --runs 3 --json"
matmul="reference/matmul-naive --width 100 --runs 3 --json"
measure "dot-sm n=1 (the probe in it)" dot-sm "$dot"
measure "matmul-naive width 100 (no probe)" matmul-naive "$matmul"
# The course's shared-memory poison left out of the tools' checks, as the
# grader does (`grader::run::sanitizer`), with the option this tool has.
exclude=$(compute-sanitizer --help | grep -oE -- '--kernel-(name|regex)-exclude' | head -n 1)
leave_out="$exclude kne=course_poison_shared"
echo "the poison left out with: $leave_out"
for tool in memcheck racecheck initcheck synccheck; do
    measure "$tool over dot-sm n=1, the poison left out" dot-sm "compute-sanitizer --tool $tool $leave_out $dot"
done
# racecheck's host threads: one per core by default, or as many as asked.
measure "racecheck, 1 host thread, over dot-sm n=1, the poison left out" dot-sm \
    "compute-sanitizer --tool racecheck $leave_out --racecheck-num-workers 1 $dot"
memspace="reference/memspace-timing --blocks 24 --threads 480 --pattern per-thread --runs 1 --json"
for workers in 0 1; do
    AT_ONCE=4 measure "racecheck, $workers host threads (0: a core each), over memspace-timing 24 blocks of 480, the poison left out" \
        memspace-timing "compute-sanitizer --tool racecheck $leave_out --racecheck-num-workers $workers $memspace"
done
if [ -n "${PARTS_WITH_POISON:-}" ]; then
    for tool in memcheck racecheck initcheck synccheck; do
        measure "$tool over dot-sm n=1" dot-sm "compute-sanitizer --tool $tool $dot"
    done
    measure "racecheck, 1 host thread, over dot-sm n=1" dot-sm \
        "compute-sanitizer --tool racecheck --racecheck-num-workers 1 $dot"
    for workers in 0 1; do
        AT_ONCE=4 measure "racecheck, $workers host threads (0: a core each), over memspace-timing 24 blocks of 480" \
            memspace-timing "compute-sanitizer --tool racecheck --racecheck-num-workers $workers $memspace"
    done
fi

# The probe's driver steps in one process whose context is already made.
cat >"$times.py" <<'PY'
import ctypes, time
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
device, context = ctypes.c_int(), ctypes.c_void_p()
cu.cuDeviceGet(ctypes.byref(device), 0)
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0
assert cu.cuCtxSetCurrent(context) == 0
size = 512 << 20
marks, last = [], time.perf_counter()
def step(name, code):
    global last
    assert code == 0, (name, code)
    now = time.perf_counter()
    marks.append(f"{name} {1000 * (now - last):.0f} ms")
    last = now
a, b = ctypes.c_uint64(), ctypes.c_uint64()
step("allocate", cu.cuMemAlloc_v2(ctypes.byref(a), ctypes.c_size_t(size))
     or cu.cuMemAlloc_v2(ctypes.byref(b), ctypes.c_size_t(size)))
step("fill", cu.cuMemsetD32_v2(a, 0x5eedc0de, ctypes.c_size_t(size // 4)) or cu.cuCtxSynchronize())
for _ in range(4):
    cu.cuMemcpyDtoD_v2(b, a, ctypes.c_size_t(size))
step("copies", cu.cuCtxSynchronize())
step("free", cu.cuMemFree_v2(a) or cu.cuMemFree_v2(b))
print(", ".join(marks))
PY
echo "the probe's steps alone: $(python3 "$times.py")"
seq 16 | xargs -P 16 -I{} python3 "$times.py" >"$times"
python3 "$(dirname "$0")/step-medians.py" "$times" "the probe's steps 16 at once"
