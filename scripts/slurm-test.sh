#!/usr/bin/env bash
# CI for grading through Slurm: a small class graded through a real, one-node Slurm
# (scripts/slurm-local.sh) as `grader slurm --shards 3 --submit` does it (a
# job array of shards, then a merge job), must get exactly the grades of one
# `grader run` of the same bundle: grades.csv byte for byte, results.json
# byte for byte once run times and the runs' own timings are taken out.
#
# The class: the solutions, the stubs and two mutants (grader mutants
# write), two cheap exercises (vecadd-anyN, dot-gm). Without a GPU every
# run ends in a "no GPU" verdict, the same one each time, which is enough
# to compare; with the emulator switched on, the runs are real.
#
# The shards run in the sandbox when bubblewrap works under slurmd, else
# with --no-sandbox; the script says which. Needs root or sudo (Slurm's
# daemons), and what `scripts/setup.sh --dev` installs: the CUDA toolkit
# (the class build), Slurm and munge, python3.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
say() { echo "slurm-test: [$((SECONDS - started)) s] $*"; }
as_root=$([ "$(id -u)" = 0 ] || echo sudo)
$as_root scripts/slurm-local.sh start
say "Slurm is up"

work=$(mktemp -d)
cleanup() {
    rm -rf "$work"
    $as_root scripts/slurm-local.sh stop
}
trap cleanup EXIT

target=${CARGO_TARGET_DIR:-$PWD/target}
cargo build -q -p grader
grader=$target/debug/grader

# The class, built as an instructor would (no GPU needed), with a fixed seed.
"$grader" mutants write "$work/class"
for student in "$work"/class/*; do
    case $(basename "$student") in
    solutions | stubs | dot-gm.drops-the-last-element | vecadd-anyN.host-computes) ;;
    *) rm -rf "$student" ;;
    esac
done
# The dependencies as the grader's own tests build them: compiled once.
"$grader" build "$work/class" --bundle "$work/bundle" --seed 7 \
    --exercise vecadd-anyN --exercise dot-gm --target-dir "$target/tmp/grader-deps"
say "the class is built"

# Can a job start the sandbox? An empty shard (more shards than students)
# checks bubblewrap as every shard would, and runs no student code.
confinement=()
if srun --quiet --time=2 "$grader" run "$work/bundle" --shard 1/10000 --out "$work/probe" >/dev/null 2>"$work/probe.err"; then
    say "the shards run in the sandbox (bubblewrap works under slurmd)"
else
    echo "slurm-test: bubblewrap cannot run under slurmd here; the shards use --no-sandbox:" >&2
    cat "$work/probe.err" >&2
    confinement=(--no-sandbox)
fi

# The reference: one process, the same flags.
"$grader" run "$work/bundle" --out "$work/whole" --timeout 30 "${confinement[@]}" >/dev/null

submitted=$("$grader" slurm "$work/bundle" --out "$work/merged" --shards 3 --submit \
    -- --timeout 30 "${confinement[@]}")
say "graded in one process; submitted: $submitted"
array=$(sed -n 's/^shards: job \([0-9]*\); merge: job \([0-9]*\)$/\1/p' <<<"$submitted")
merge=$(sed -n 's/^shards: job \([0-9]*\); merge: job \([0-9]*\)$/\2/p' <<<"$submitted")
[[ -n $array && -n $merge ]] || { echo "slurm-test: no job ids in '$submitted'" >&2; exit 1; }

logs() {
    for log in "$work"/merged/slurm/logs/*; do
        echo "--- $log" >&2
        cat "$log" >&2
    done
    scontrol show job "$merge" >&2 || true
}
# The merge is cancelled if a shard fails (--kill-on-invalid-dep): either
# way it leaves the queue. Five minutes at most.
for ((waited = 0; ; waited += 2)); do
    if [[ -z $(squeue -h -j "$array,$merge" -o %i 2>/dev/null) ]]; then break; fi
    if ((waited >= 300)); then
        echo "slurm-test: the jobs did not finish within 5 minutes" >&2
        squeue >&2 || true
        logs
        scancel "$array" "$merge" || true
        exit 1
    fi
    sleep 2
done
state=$(scontrol show job "$merge" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' || true)
if [[ $state != JobState=COMPLETED || ! -f $work/merged/results.json ]]; then
    echo "slurm-test: the merge job did not complete (${state:-no state})" >&2
    logs
    exit 1
fi

# What may differ between two gradings of one bundle: how long runs (and
# the sanitizer's tools) took.
comparable() {
    python3 - "$1" <<'EOF'
import json, sys
TIMES = {"duration_ms", "timings", "throughput", "gflop_per_s", "seconds"}
def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value
with open(sys.argv[1]) as f:
    print(json.dumps(strip(json.load(f)), indent=2))
EOF
}
comparable "$work/whole/results.json" >"$work/whole.json"
comparable "$work/merged/results.json" >"$work/merged.json"
if ! cmp "$work/whole/grades.csv" "$work/merged/grades.csv" || ! cmp "$work/whole.json" "$work/merged.json"; then
    diff "$work/whole/grades.csv" "$work/merged/grades.csv" >&2 || true
    diff "$work/whole.json" "$work/merged.json" | head -40 >&2 || true
    logs
    echo "slurm-test: the merged grades differ from one run's" >&2
    exit 1
fi
say "3 shards through Slurm, merged: the grades of one run, byte for byte"
cat "$work/merged/grades.csv"
