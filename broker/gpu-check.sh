#!/usr/bin/env bash
# The GPU broker on a GPU machine, from the bundle broker/gpu-bundle.sh made
# (it is copied in as broker/run.sh; nothing is built here, no Rust needed):
#  1. every solution at its default sizes, run directly and through the
#     client and a broker on the real driver, RUNS times each way,
#     alternating: the reports must agree (less their times), the broker's
#     record must show the kernel launched with the broker's own GPU times,
#     and streams-overlap's its page-locked async copies on two or more
#     streams; wall times both ways;
#  2. the vecadd-anyN stub fails the same way both ways;
#  3. the memory cap: vecadd-anyN at 2^24 elements under --memory-cap 64MiB
#     is refused as bad arguments (the cap shows in cuMemGetInfo);
#  4. the per-call cost: cuda-course-broker-bench directly and through the
#     broker (N round trips of a cheap call, small and 16 MiB copies, empty
#     launches; a warm-up, the median of several runs).
# Prints one table per part; logs, reports and records go to LOG_DIR.
# Usage: run.sh [LOG_DIR]   (env: RUNS=3, DRIVER=libcuda.so.1, needs python3)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-$(mktemp -d)}
runs=${RUNS:-3}
driver=${DRIVER:-libcuda.so.1}
mkdir -p "$logs"
broker="$here/cuda-course-broker"
bench="$here/cuda-course-broker-bench"
client="$here/client"
device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "broker gpu-check: ${device:-no nvidia-smi}; logs in $logs"

# One solution a line: the kernels its record must launch (the catalogue's
# names, one of each comma-separated group), the binary, its arguments
# (--json is added).
solutions=(
    "vecadd vecadd-anyN-solution"
    "dot dot-gm-solution"
    "dot dot-sm-solution"
    "dot dot-atomic-solution"
    "matmul matmul-naive-solution"
    "matmul_tiled_16|matmul_tiled_32 matmul-tiled-solution"
    "sum_global,sum_constant,sum_register memspace-timing-solution"
    "transform streams-overlap-solution"
)

now() { date +%s.%N; }

# run_direct OUT ERR BINARY ARGS...; prints its wall seconds.
run_direct() {
    local out=$1 err=$2
    shift 2
    local start
    start=$(now)
    "$@" >"$out" 2>"$err"
    echo "$? $(python3 -c "print(f'{$(now) - $start:.3f}')")"
}

# run_brokered OUT ERR RECORD BINARY ARGS...; prints its exit and wall seconds.
# The client goes first on the program's library path, not the broker's:
# the broker's libcuda.so.1 is the driver.
run_brokered() {
    local out=$1 err=$2 record=$3
    shift 3
    local start
    start=$(now)
    "$broker" --driver "$driver" --record "$record" -- env LD_LIBRARY_PATH="$client" "$@" >"$out" 2>"$err"
    echo "$? $(python3 -c "print(f'{$(now) - $start:.3f}')")"
}

# python3 check.py KERNELS DIRECT_JSON BROKER_JSON RECORD: prints "same|DIFFER",
# then "record ok" or what the record lacks, then what it shows of overlap.
cat >"$logs/check.py" <<'PY'
import json, math, sys
kernel, direct, brokered, record = sys.argv[1:5]
TIMED = {"timings", "throughput", "gflop_per_s", "speedup", "ratio_to_bound", "ms",
         "relative_to_register"}
def timeless(v):
    if isinstance(v, dict):
        return {k: timeless(x) for k, x in v.items()
                if k not in TIMED and not k.endswith("_ms") and not k.endswith("_per_s")}
    if isinstance(v, list):
        return [timeless(x) for x in v]
    return v
def load(path):
    try:
        return json.load(open(path))
    except Exception as err:
        return {"unreadable": str(err)}
def alike(a, b):
    # Floating-point sums whose order the GPU picks (atomics) differ in
    # their last bits from run to run, with or without the broker.
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(alike(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(alike(x, y) for x, y in zip(a, b))
    return a == b
same = "same" if alike(timeless(load(direct)), timeless(load(brokered))) else "DIFFER"
calls = []
for line in open(record):
    if line.startswith("#") or not line.strip():
        continue
    words = line.split()
    keys = dict(w.split("=", 1) for w in words[4:] if "=" in w)
    calls.append((words[2], int(words[3]), keys))
problems, info = [], ""
for group in kernel.split(","):
    names = group.split("|")
    launches = [k for n, r, k in calls if n == "cuLaunchKernel" and r == 0 and k.get("kernel") in names]
    timed = [k for k in launches if "gpu_start" in k and "gpu_end" in k]
    if not launches:
        problems.append(f"no launch of {group}")
    elif len(timed) < len(launches):
        problems.append(f"{len(launches) - len(timed)} launches of {group} untimed")
if kernel == "transform":
    for way in ("htod", "dtoh"):
        streams = {k["stream"] for n, r, k in calls
                   if r == 0 and "Async" in n and k.get("dir") == way and k.get("pinned") == "1"}
        if len(streams - {"0x0"}) < 2:
            problems.append(f"{way} page-locked async copies on {len(streams)} streams")
    # The broker's own timeline: busy time of the async work over its span.
    spans = sorted((float(k["gpu_start"]), float(k["gpu_end"])) for n, r, k in calls
                   if r == 0 and "gpu_start" in k and k.get("stream", "0x0") != "0x0"
                   and (n == "cuLaunchKernel" or "Async" in n))
    busy = sum(e - s for s, e in spans)
    union, end = 0.0, None
    for s, e in spans:
        if end is None or s > end:
            union += e - s
            end = e
        elif e > end:
            union += e - end
            end = e
    if union:
        info = f"; busy/span of its async work on the broker's timeline {busy / union:.2f}"
    else:
        problems.append("no timed async work")
print(same, "; ".join(problems) or "record ok", info)
PY

median() { python3 -c "import sys, statistics; print(f'{statistics.median(float(x) for x in sys.argv[1:]):.2f}')" "$@"; }

echo
echo "== 1. solutions, directly and through the broker ($runs runs each, median wall seconds)"
printf '%-28s %9s %9s %7s  %-6s %s\n' solution direct broker ratio report record
failed=0
for entry in "${solutions[@]}"; do
    read -r kernel name args <<<"$entry"
    binary="$here/$name"
    direct_times=() broker_times=()
    for i in $(seq 1 "$runs"); do
        read -r rc_d t_d <<<"$(run_direct "$logs/$name.direct.json" "$logs/$name.direct.err" "$binary" $args --json)"
        read -r rc_b t_b <<<"$(run_brokered "$logs/$name.broker.json" "$logs/$name.broker.err" "$logs/$name.record" "$binary" $args --json)"
        direct_times+=("$t_d")
        broker_times+=("$t_b")
    done
    d=$(median "${direct_times[@]}")
    b=$(median "${broker_times[@]}")
    ratio=$(python3 -c "print(f'{$b / $d:.2f}')")
    verdict=$(python3 "$logs/check.py" "$kernel" "$logs/$name.direct.json" "$logs/$name.broker.json" "$logs/$name.record")
    [[ "$rc_d" == "$rc_b" && "$rc_d" == 0 && "$verdict" == "same record ok"* ]] || failed=1
    printf '%-28s %9s %9s %7s  %s (exit %s/%s)\n' "$name" "$d" "$b" "$ratio" "$verdict" "$rc_d" "$rc_b"
done

echo
echo "== 2. the vecadd-anyN stub, both ways"
read -r rc_d _ <<<"$(run_direct "$logs/stub.direct.json" "$logs/stub.direct.err" "$here/vecadd-anyN" --json)"
read -r rc_b _ <<<"$(run_brokered "$logs/stub.broker.json" "$logs/stub.broker.err" "$logs/stub.record" "$here/vecadd-anyN" --json)"
cmp -s "$logs/stub.direct.json" "$logs/stub.broker.json" && same=same || same=DIFFER
[[ "$rc_d" == 1 && "$rc_b" == 1 && "$same" == same ]] || failed=1
echo "exit $rc_d directly, $rc_b through the broker; reports $same"

echo
echo "== 3. the memory cap (64 MiB; vecadd-anyN at 2^24 needs 192 MiB)"
"$broker" --driver "$driver" --memory-cap 64MiB --record "$logs/cap.record" \
    -- env LD_LIBRARY_PATH="$client" "$here/vecadd-anyN-solution" --n 16777216 --json >"$logs/cap.json" 2>"$logs/cap.err"
rc_c=$?
grep -q bad-arguments "$logs/cap.json" && [[ $rc_c == 2 ]] && echo "refused as bad arguments (exit 2): ok" || {
    echo "NOT refused (exit $rc_c)"
    failed=1
}

echo
echo "== 4. per-call cost (microseconds, median of 5 runs after a warm-up)"
"$bench" --driver "$driver" --json >"$logs/bench.direct.json" 2>"$logs/bench.direct.err"
"$broker" --driver "$driver" --record "$logs/bench.record" \
    -- env LD_LIBRARY_PATH="$client" "$bench" --json >"$logs/bench.broker.json" 2>"$logs/bench.broker.err"
python3 - "$logs/bench.direct.json" "$logs/bench.broker.json" <<'PY' || failed=1
import json, sys
direct, brokered = (json.load(open(p)) for p in sys.argv[1:3])
print(f"{'measure':<28} {'direct':>10} {'broker':>10} {'added':>10}")
for name, d in direct.items():
    b = brokered[name]
    print(f"{name:<28} {d:>10.2f} {b:>10.2f} {b - d:>10.2f}")
PY

echo
[[ $failed == 0 ]] && echo "broker gpu-check: passed" || echo "broker gpu-check: FAILED (see $logs)"
exit $failed
