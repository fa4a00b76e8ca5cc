#!/usr/bin/env bash
# On the GPU machine (the device tool, carrying .carry/): issue 50's "Done
# when" and the broker's cost, in the order that matters most, each part
# bounded so that the whole fits one call of the device tool.
#   .carry/gb-h50.tar.xz   scripts/grader-bundle.sh's folder, built with the
#                          broker (every run of a student's binary through it)
#   .carry/gb-main.tar.xz  the same, built before the broker (the tracer)
#   .carry/broker-bench.tar.xz  cuda-course-broker-bench (cargo build
#                          --release -p broker); the broker and its client
#                          come from the bundle
# Made here (each bundle's tar without its instructor/ folder, about 30
# and 18 MB):
#   scripts/grader-bundle.sh DIR/grader-bundle   (at main, and at 6712645)
#   tar -cf - --exclude=grader-bundle/instructor grader-bundle | xz -T2 -4 > .carry/gb-h50.tar.xz
#   cargo build --release -p broker && tar -cJf .carry/broker-bench.tar.xz \
#       -C target/release cuda-course-broker-bench
# Parts (PARTS, default "class forgeries bench throughput"):
#   class       run.sh's steps: the grader's class graded (timed alone)
#               and verified (mutants verify: every solution and variant
#               full marks, every mutant caught), then the GPU-hostile
#               class (a GPU memory hog, a kernel that never ends, ...)
#               between honest students, and nothing left on the GPU;
#   forgeries   forgeries.sh: each forgery flagged with no host points, the
#               honest student untouched;
#   bench       the per-call cost: the bench directly on the driver and
#               through the broker (medians of 5 after a warm-up);
#   throughput  the same class graded by the grader before the broker, on
#               the same card: exercise gradings a minute both ways, each
#               student-host run's time both ways, and every honest
#               student's grade the same;
#   costly      bench/harness/costly-class.sh (issue 52).
# Leaves logs and results under $OUT.
# Usage: bench/harness/broker-on-gpu.sh   (env: PARTS, OUT)
set -uo pipefail
root=$PWD
out=${OUT:-$(mktemp -d)}
parts=${PARTS:-class forgeries bench throughput}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
[ -d /tmp/grader-bundle ] || tar -xJf .carry/gb-h50.tar.xz -C /tmp
here=/tmp/grader-bundle
. "$here/bwrap.sh"
timed() {  # NAME LIMIT COMMAND...: the command's output in $OUT/NAME.log
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    echo "$name: exit $? in $((SECONDS - start)) s" | tee -a "$out/times.txt"
}
for part in $parts; do
    case $part in
    class)
        # run.sh's steps, the class's grading timed alone.
        timed class 240 "$here/grader" run "$here/class" --timeout 120 --out "$out/class"
        timed verify 60 "$here/grader" mutants verify "$out/class"
        tail -3 "$out/verify.log"
        { echo "here=$here; out=$out/class"
          echo 'gpu_processes() { nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader; }'
          sed -n '/# The GPU-hostile class/,$p' "$here/run.sh"; } >/tmp/hostile-class.sh
        timed hostile 150 bash /tmp/hostile-class.sh
        tail -14 "$out/hostile.log"
        ;;
    forgeries)
        timed forgeries 120 "$here/forgeries.sh" "$out/forged"
        tail -14 "$out/forgeries.log"
        ;;
    bench)
        b=/tmp/broker-bench
        mkdir -p $b && tar -xJf "$root/.carry/broker-bench.tar.xz" -C $b
        cp "$here/class/broker/cuda-course-broker" "$here/class/broker/libcuda.so.1" $b/
        timed bench-direct 60 "$b/cuda-course-broker-bench" --json
        timed bench-broker 60 "$b/cuda-course-broker" --record "$out/bench.record" \
            -- env LD_LIBRARY_PATH="$b" "$b/cuda-course-broker-bench" --json
        python3 - "$out/bench-direct.log" "$out/bench-broker.log" <<'PY'
import json, sys
direct, broker = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:])
for key in direct:
    print(f"{key:<28} direct {direct[key]:10.3f} us  broker {broker.get(key, float('nan')):10.3f} us")
PY
        ;;
    throughput)
        mkdir -p /tmp/main && { [ -d /tmp/main/grader-bundle ] || tar -xJf .carry/gb-main.tar.xz -C /tmp/main; }
        timed main-class 240 /tmp/main/grader-bundle/grader run /tmp/main/grader-bundle/class \
            --timeout 120 --out "$out/main-class"
        python3 - "$out/class/results.json" "$out/main-class/results.json" "$out/times.txt" <<'PY'
import json, re, statistics, sys
broker, main = (json.load(open(p)) for p in sys.argv[1:3])
def gradings(r):
    return sum(len(s["exercises"]) for s in r["students"].values())
def host_ms(r):
    return {(s, e, x.get("tag")): x["duration_ms"] for s, rec in r["students"].items()
            for e, ex in rec["exercises"].items() for x in ex.get("runs", [])
            if x.get("role") == "student-host"}
def points(r):
    return {(s, e): ex["points"] for s, rec in r["students"].items() for e, ex in rec["exercises"].items()}
times = {l.split(":")[0]: int(re.search(r"in (\d+) s", l)[1]) for l in open(sys.argv[3])}
b, m = host_ms(broker), host_ms(main)
both = sorted(set(b) & set(m))
ratios = [b[k] / m[k] for k in both if m[k] > 0]
pb, pm = points(broker), points(main)
honest = [k for k in pb if ".mutant-" not in k[0] and "stub" not in k[0]]
differ = [k for k in honest if pb.get(k) != pm.get(k)]
g = gradings(broker)
print(f"gradings: {g}; with the broker {times.get('class')} s ({60 * g / times['class']:.1f} a minute), "
      f"before it {times.get('main-class')} s ({60 * g / times['main-class']:.1f} a minute)")
print(f"student-host runs: {len(both)}; broker/main time, median {statistics.median(ratios):.2f}, "
      f"p90 {sorted(ratios)[int(0.9 * len(ratios))]:.2f}; median ms broker "
      f"{statistics.median(b[k] for k in both):.0f}, main {statistics.median(m[k] for k in both):.0f}")
print(f"grades that differ (broker vs main), every student: "
      f"{[(k, pb.get(k), pm.get(k)) for k in pb if pb.get(k) != pm.get(k)]}")
PY
        ;;
    costly)
        timed costly 300 bash "$root/bench/harness/costly-class.sh"
        tail -10 "$out/costly.log"
        ;;
    esac
done
rm -rf "$out/class/feedback" "$out/class/hostile/feedback" "$out/forged/feedback" "$out/main-class/feedback"
