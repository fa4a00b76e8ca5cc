#!/usr/bin/env bash
# Builds, here (no GPU needed), the grader's own GPU check: the grader and
# its test class (every solution, every stub, a mutant per classic bug and
# correct variants: grader::mutants), built by `grader build`, in
# grader-bundle/. On the GPU machine, grader-bundle/run.sh grades the class
# and verifies every expectation (no cargo needed there);
# grader-bundle/instructor.sh grades the instructor's four-student class
# (scripts/instructor-class.sh) and prints its Canvas and Moodle exports;
# grader-bundle/scale.sh grades the class over --gpus and in merged shards;
# grader-bundle/confinement.sh grades it with each run's peak memory logged
# against its cap, and again without control groups;
# grader-bundle/forgeries.sh grades the forgeries of the hostile suite
# (reports the GPU did not compute) and checks each is flagged with no
# host points;
# grader-bundle/throughput.sh grades the class one exercise at a time and
# --jobs at a time, and compares the grades;
# grader-bundle/gpu-steady-state.sh grader-bundle OUT grades the solutions
# four times over at --jobs 16 only, with the grader's timeline.
# The bundle also carries bubblewrap's .deb (the GPU machine has no network;
# bwrap.sh unpacks it with dpkg -x for both scripts) and a GPU-hostile class
# (grader/tests/fixtures/hostile-gpu) graded in the sandbox between honest
# students, and the costly class (bench/harness/costly-class.sh grades it).
# Usage: scripts/grader-bundle.sh [OUT_DIR]   (default grader-bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-grader-bundle}

cargo build --release -p grader
rm -rf "$out"
mkdir -p "$out"
class=$(mktemp -d)
target/release/grader mutants write "$class/submissions"
target/release/grader build "$class/submissions" --seed 2026 --bundle "$out/class" --target-dir target/grader-class
# The GPU-hostile class: each case the dot-sm solution with its own files
# laid over it, each followed (in name order) by an honest student.
hostile=$class/hostile
for case in grader/tests/fixtures/hostile-gpu/*/; do
    name=$(basename "$case")
    mkdir -p "$hostile/$name" "$hostile/$name-then-honest/dot-sm"
    cp -r solutions/dot-sm "$hostile/$name/"
    cp "$case"dot-sm/src/* "$hostile/$name/dot-sm/src/"
    cp -r solutions/dot-sm/src "$hostile/$name-then-honest/dot-sm/"
done
target/release/grader build "$hostile" --exercise dot-sm --seed 2026 --bundle "$out/hostile" --target-dir target/grader-class
# The forgeries: each case of the hostile suite that reports an
# answer the GPU did not compute, the solution's files where it has none,
# beside an honest student; graded by forgeries.sh.
forged=$class/forgeries
for exercise in vecadd-anyN matmul-naive; do
    mkdir -p "$forged/honest"
    cp -r "solutions/$exercise" "$forged/honest/"
done
for case in cpu-overwrite forged-trace real-kernel-cpu-report trace-mid-run dlopen-driver forged-any-descriptor device-nodes broker-flood; do
    for folder in grader/tests/fixtures/hostile/"$case"/*/; do
        exercise=$(basename "$folder")
        mkdir -p "$forged/$case"
        cp -r "solutions/$exercise" "$forged/$case/"
        cp "$folder"src/* "$forged/$case/$exercise/src/"
    done
done
target/release/grader build "$forged" --exercise vecadd-anyN --exercise matmul-naive --seed 2026 --bundle "$out/forgeries" --target-dir target/grader-class
# The costly class (issue 52): $COSTLY_COPIES students with every
# exercise's solution and one student of each costly kind of
# grader/tests/hostile/costly.rs (dot-sm), graded by
# bench/harness/costly-class.sh with and without the costly ones. The
# sleeper sleeps 58 s, just under the default --timeout of 60 s.
costly=$class/costly
for k in $(seq 1 "${COSTLY_COPIES:-4}"); do
    mkdir -p "$costly/honest$k"
    cp -r solutions/* "$costly/honest$k/"
done
fixtures=grader/tests/fixtures/hostile
for case in remake-sleeper report-flood trace-flood big-static; do
    mkdir -p "$costly/$case"
    cp -r solutions/dot-sm "$costly/$case/"
    cp "$fixtures/$case"/dot-sm/src/* "$costly/$case/dot-sm/src/"
done
sed -i 's/@SLEEP@/58/g' "$costly/remake-sleeper/dot-sm/src/main.rs"
sed -i 's/^fn main() -> ExitCode {$/mod flood;\n\nfn main() -> ExitCode {\n    flood::flood_trace();/' "$costly/trace-flood/dot-sm/src/main.rs"
grep -q flood_trace "$costly/trace-flood/dot-sm/src/main.rs"
target/release/grader build "$costly" --seed 2026 --bundle "$out/costly" --target-dir target/grader-class
# The four-student class an instructor meets first, graded by instructor.sh.
scripts/instructor-class.sh "$class/instructor"
target/release/grader build "$class/instructor/submissions" --seed 14 --bundle "$out/instructor" --target-dir target/grader-class
target/release/grader similarity "$class/instructor/submissions" --out "$out/instructor"
cp "$class/instructor/roster.csv" "$out/instructor/"
rm -rf "$class" "$out/class/.build" "$out/hostile/.build" "$out/instructor/.build" "$out/forgeries/.build" "$out/costly/.build"
cp target/release/grader "$out/"
# Stripped, every bundle fits the GPU machine's transfer: the students'
# binaries, the course's reference binaries, the tracer and the emulator.
for bundle in "$out"/class "$out"/hostile "$out"/instructor "$out"/forgeries "$out"/costly; do
    strip "$bundle"/bin/* "$bundle"/emulator/*
    find "$bundle/reference" -type f ! -name '*.ptx' -exec strip {} +
done
strip "$out/grader"
# Stripping changes the binaries, and bundle.json holds each one's sha256 (a
# changed binary is refused at run time): record the stripped ones'.
for bundle in "$out"/class "$out"/hostile "$out"/instructor "$out"/forgeries "$out"/costly; do
    python3 - "$bundle" <<'SEAL'
import hashlib, json, pathlib, sys
bundle = pathlib.Path(sys.argv[1])
manifest = json.loads((bundle / "bundle.json").read_text())
digest = lambda path: hashlib.sha256((bundle / path).read_bytes()).hexdigest()
def seal(value):  # every {"path", "digest"}: references, tracer, emulator, canaries
    if isinstance(value, dict):
        if set(value) >= {"path", "digest"}:
            value["digest"] = digest(value["path"])
        for inner in value.values():
            seal(inner)
for item in manifest["items"]:
    if item.get("binary"):
        item["digest"] = digest(item["binary"])
    seal(item.get("canary"))
seal({k: v for k, v in manifest.items() if k != "items"})
(bundle / "bundle.json").write_text(json.dumps(manifest, indent=1) + "\n")
SEAL
done
(cd "$out" && apt-get download bubblewrap)
cat >"$out/bwrap.sh" <<'BWRAP'
# Sourced by run.sh and instructor.sh: bubblewrap from the bundle's .deb,
# unpacked privately (no network here), in a folder nobody may enter: the
# grader starts it as nobody.
if ! command -v bwrap >/dev/null 2>&1 && [ -z "${GRADER_BWRAP:-}" ]; then
    bwrap_root=$(mktemp -d /tmp/grader-bwrap.XXXXXX)
    chmod 755 "$bwrap_root"
    dpkg -x "$here"/bubblewrap_*.deb "$bwrap_root"
    export GRADER_BWRAP=$bwrap_root/usr/bin/bwrap
fi
echo "sandbox: ${GRADER_BWRAP:-$(command -v bwrap)}"
BWRAP
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Grades the class on this GPU, then checks every expectation: solutions
# full marks, stubs none, each mutant caught, each variant passing.
# Usage: run.sh [OUT_DIR [GRADER_RUN_FLAGS...]], e.g. run.sh out --no-sanitize
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
shift || true
. "$here/bwrap.sh"
gpu_processes() { nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader; }
"$here/grader" run "$here/class" --timeout 120 --out "$out" "$@"
"$here/grader" mutants verify "$out"
grep -m1 '"sandbox"' "$out/results.json"
# The GPU-hostile class, in the sandbox: each case its verdict, the honest
# student after it passes, and nothing left on the GPU.
"$here/grader" run "$here/hostile" --timeout 20 --out "$out/hostile"
left=$(gpu_processes)
[ -z "$left" ] || { echo "run.sh: processes left on the GPU: $left" >&2; exit 1; }
python3 - "$out/hostile/results.json" <<'CHECK'
import json, sys
students = json.load(open(sys.argv[1]))["students"]
# (the student's binary's runs, their kernel's runs in the course's host
# code): a hostile kernel fails both, a hostile main.rs only its own.
# The student's binary runs with the grader's canary kernel in place of
# theirs, so a hostile kernel shows only in the course's host.
expected = {"gpu-infinite": ("passed", "timed-out"),
            "gpu-oob": ("passed", "cuda-error"),
            "gpu-oom": ("garbage", "passed"), "gpu-setsid": ("garbage", "passed"),
            "gpu-hidden": ("garbage", "passed")}
broken = 0
for name, record in sorted(students.items()):
    runs = record["exercises"]["dot-sm"]["runs"]
    host = [r for r in runs if r.get("role") == "student-host"]
    kernel = [r for r in runs if r.get("role") == "kernel-in-course-host"]
    kinds = tuple(sorted({r["verdict"]["kind"] for r in rs}) for rs in (host, kernel))
    want = expected.get(name, ("passed", "passed"))
    ok = kinds == ([want[0]], [want[1]])
    if name == "gpu-hidden":
        ok = ok and "blocked" in json.dumps(host[0]["verdict"])
    broken += not ok
    print(f"{'ok ' if ok else 'BROKEN'} {name}: {kinds} (expected {want}): {json.dumps(host[0]['verdict'])[:160]}")

sys.exit(1 if broken else 0)
CHECK
[ $? -eq 0 ] || { echo "run.sh: the hostile class did not get its verdicts" >&2; exit 1; }
echo "run.sh: hostile class as expected; no process on the GPU"
RUN
chmod +x "$out/run.sh"
cat >"$out/instructor.sh" <<'RUN'
#!/usr/bin/env bash
# Grades the instructor's four-student class on this GPU and prints the
# summary and the Canvas and Moodle gradebooks' first lines.
# Usage: instructor.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
. "$here/bwrap.sh"
"$here/grader" run "$here/instructor" --timeout 120 --out "$out"
for lms in canvas moodle; do
    "$here/grader" export "$out" --lms "$lms" --roster "$here/instructor/roster.csv"
    head -n 4 "$out/$lms.csv"
done
RUN
chmod +x "$out/instructor.sh"
# The forgeries on the GPU: each must earn no host points and an
# integrity flag, the honest student full marks and none.
cat >"$out/forgeries.sh" <<'RUN'
#!/usr/bin/env bash
# Grades the forgeries class on this GPU and prints, per student and
# exercise, the points, the host points and the integrity flags; exits 1
# when a forgery kept a host point or went unflagged, or the honest student
# lost a point or was flagged.
# Usage: forgeries.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
. "$here/bwrap.sh"
"$here/grader" run "$here/forgeries" --timeout 120 --out "$out" | sed -n '/integrity flags/,$p'
python3 - "$out/results.json" <<'CHECK'
import json, sys
results = json.load(open(sys.argv[1]))
broken = 0
print("case | exercise | points | host points | integrity")
for name, student in sorted(results["students"].items()):
    for exercise, record in sorted(student["exercises"].items()):
        if record.get("absent"):
            continue
        host = sum(r["points"] for r in record["runs"] if r.get("role") == "student-host")
        flags = sorted({f["evidence"]["kind"] for f in record.get("integrity", [])})
        if name == "honest":
            ok = record["points"] == record["max_points"] and not flags
        else:
            ok = host == 0 and flags == ["cpu-answer"]
        broken += not ok
        print(f"{name} | {exercise} | {record['points']} of {record['max_points']} | {host} | {', '.join(flags) or '-'}{'' if ok else '  BROKEN'}")
sys.exit(1 if broken else 0)
CHECK
echo "forgeries.sh: every forgery flagged with no host points; the honest student at full marks"
RUN
chmod +x "$out/forgeries.sh"
# Grading throughput, one exercise at a time against --jobs, on
# the class copied COPIES times over (bench/harness/grading-throughput.sh).
cp bench/harness/grading-throughput.sh bench/harness/same-grades.py bench/harness/gpu-steady-state.sh \
    bench/harness/gpu-sampled-throughput.sh bench/harness/busy-windows.py bench/probes/gpu-huge-run-parts.sh \
    bench/probes/gpu-tool-processes.sh bench/probes/gpu-memspace-racecheck.sh \
    bench/harness/gpu-graders-throughput.sh bench/harness/gpu-scaling.sh "$out/"
cat >"$out/throughput.sh" <<'RUN'
#!/usr/bin/env bash
# Usage: throughput.sh [COPIES [JOBS [GRADER_RUN_FLAGS...]]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bwrap.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$here/grading-throughput.sh" "$here/grader" "$here/class" "${1:-1}" "${2:-$(nproc)}" --timeout 120 "${@:3}"
RUN
chmod +x "$out/throughput.sh"
# Scale: the class over every GPU of this machine (--gpus) and in two
# shards merged, each against one plain run: the same grades, and the wall
# times.
cat >"$out/scale.sh" <<'RUN'
#!/usr/bin/env bash
# Grades the class three ways on this machine's GPUs: one `grader run`,
# `--gpus` over all of them, and `--shard 1/2` + `--shard 2/2` then
# `grader merge`. Each must pass `mutants verify` and give one run's
# grades.csv; prints each way's wall time.
# Usage: scale.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
. "$here/bwrap.sh"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
timed() {
    local start=$SECONDS
    "$@" >/dev/null
    echo "scale.sh: $((SECONDS - start)) s: grader ${*:2}"
}
timed "$here/grader" run "$here/class" --timeout 120 --out "$out/one"
timed "$here/grader" run "$here/class" --timeout 120 --out "$out/gpus" --gpus "$gpus"
timed "$here/grader" run "$here/class" --timeout 120 --out "$out/shard-1" --shard 1/2
timed "$here/grader" run "$here/class" --timeout 120 --out "$out/shard-2" --shard 2/2
"$here/grader" merge --bundle "$here/class" "$out/merged" "$out/shard-1" "$out/shard-2" >/dev/null
for way in gpus merged; do
    "$here/grader" mutants verify "$out/$way"
    if cmp -s "$out/one/grades.csv" "$out/$way/grades.csv"; then
        echo "scale.sh: $way: the grades of one run"
    else
        echo "scale.sh: $way: grades differ from one run's:" >&2
        diff "$out/one/grades.csv" "$out/$way/grades.csv" >&2 || true
        exit 1
    fi
done
echo "scale.sh: GPUs $gpus; results in $out"
RUN
chmod +x "$out/scale.sh"
# How runs are confined on the GPU machine. The class graded with
# every run's peak memory logged against its cap, then again without
# control groups (rlimits only, RLIMIT_DATA under CUDA): both must keep
# every expectation (the solutions' sanitizer point proves
# compute-sanitizer's folders are bound), and no cell may be left.
cat >"$out/confinement.sh" <<'RUN'
#!/usr/bin/env bash
# Grades the class with each run's peak memory logged, then with
# GRADER_CGROUP=none; prints the confinement line of each, the peaks
# against the caps, and mutants verify's count for both.
# Usage: confinement.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
. "$here/bwrap.sh"
for way in cells rlimits; do
    cgroup=$([ "$way" = rlimits ] && echo none || echo "${GRADER_CGROUP:-}")
    env ${cgroup:+GRADER_CGROUP=$cgroup} GRADER_LOG_MEMORY=1 "$here/grader" run "$here/class" \
        --timeout 120 --out "$out/$way" >/dev/null 2>"$out/$way.log"
    grep -m1 "grader: confinement" "$out/$way.log"
    "$here/grader" mutants verify "$out/$way"
    python3 - "$out/$way.log" <<'PEAKS'
import re, sys
peaks = [(int(p), int(c), "killed" in l) for l in open(sys.argv[1])
         for p, c in re.findall(r"grader: memory: peak (\d+) MiB of (\d+) MiB", l)]
for cap in sorted({c for _, c, _ in peaks}):
    mine = [p for p, c, _ in peaks if c == cap]
    print(f"confinement.sh: cap {cap} MiB: {len(mine)} runs, peak {max(mine)} MiB, "
          f"{sum(k for _, c, k in peaks if c == cap)} killed at the cap")
if not peaks:
    print("confinement.sh: no peaks logged (no control group)")
PEAKS
done
left=$(ls /sys/fs/cgroup/cuda-course-grader 2>/dev/null | grep -E '^[0-9]+-' || true)
[ -z "$left" ] || { echo "confinement.sh: cells left: $left" >&2; exit 1; }
echo "confinement.sh: results in $out"
RUN
chmod +x "$out/confinement.sh"
echo "grader-bundle: $(ls "$out/class/bin" | wc -l) binaries, $(du -sh "$out" | cut -f1) in $out/"
