#!/usr/bin/env bash
# Where a GPU run's time goes: the course's dot-sm binary at
# n = 1 with the solution's PTX, alone and N processes at once, and the
# driver's own steps (cuInit, the primary context, a module load, the
# context's release) timed through ctypes, alone and 16 at once, with the
# driver's default work queues and with one (CUDA_DEVICE_MAX_CONNECTIONS=1).
# Needs python3 and a GPU; no Rust. Prints one line per measurement.
#
# Usage: gpu-run-cost.sh BUNDLE   (a class bundle: grader-bundle/class)
set -euo pipefail
bundle=$(cd "$1" && pwd)
export CUDA_COURSE_KERNEL_PTX=$bundle/ptx/dot-sm--solutions.ptx
run1() {
    "$bundle/reference/dot-sm" --n 1 --threads 64 --blocks 1 --a -3+i --b 1+7i --runs 3 --json >/dev/null
}
export -f run1
export bundle
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
for i in 1 2 3; do /usr/bin/time -f "one process alone: %e s wall, %U s user, %S s system" bash -c run1; done 2>&1
for n in 2 4 8 16 32; do
    started=$(date +%s.%N)
    seq "$n" | xargs -P "$n" -I{} /usr/bin/time -f "%e" bash -c run1 2>/tmp/gpu-run-cost.$$
    ended=$(date +%s.%N)
    echo "$n processes at once: $(python3 -c "print(round($ended - $started, 2))") s wall; each $(sort -n /tmp/gpu-run-cost.$$ | sed -n '1p;$p' | paste -sd- -) s"
done
rm -f /tmp/gpu-run-cost.$$
steps=$(mktemp /tmp/steps.XXXXXX.py)
trap 'rm -f "$steps" "$steps.out"' EXIT
cat >"$steps" <<'PY'
import ctypes, sys, time
start = time.perf_counter()
cu = ctypes.CDLL("libcuda.so.1")
marks = [("dlopen", time.perf_counter())]
def step(name, code):
    if code:
        raise SystemExit(f"{name}: CUDA error {code}")
    marks.append((name, time.perf_counter()))
step("cuInit", cu.cuInit(0))
device, context = ctypes.c_int(), ctypes.c_void_p()
cu.cuDeviceGet(ctypes.byref(device), 0)
step("context", cu.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
     or cu.cuCtxSetCurrent(context))
module = ctypes.c_void_p()
step("module", cu.cuModuleLoadData(ctypes.byref(module), open(sys.argv[1], "rb").read() + b"\0"))
step("release", cu.cuDevicePrimaryCtxRelease_v2(device))
parts, last = [], start
for name, at in marks:
    parts.append(f"{name} {1000 * (at - last):.0f} ms")
    last = at
print(", ".join(parts))
PY
for queues in default 1; do
    if [ "$queues" = 1 ]; then export CUDA_DEVICE_MAX_CONNECTIONS=1; fi
    for i in 1 2; do echo "work queues $queues, alone: $(python3 "$steps" "$CUDA_COURSE_KERNEL_PTX")"; done
    started=$(date +%s.%N)
    seq 16 | xargs -P 16 -I{} python3 "$steps" "$CUDA_COURSE_KERNEL_PTX" >"$steps.out"
    python3 "$(dirname "$0")/step-medians.py" "$steps.out" "work queues $queues, 16 at once"
    ended=$(date +%s.%N)
    echo "work queues $queues, 16 at once: $(python3 -c "print(round($ended - $started, 2))") s wall"
done
