#!/usr/bin/env bash
# The emulator's speed before and after a change, measured alternately on
# one machine: dot-sm's kernel at n = 1e6, thread-instructions per CPU
# second on one core (the median launch of 5, as bench/harness/emulator.sh
# reads it), strict (a student's run) and carrying on (the grader's,
# CUDA_COURSE_EMULATOR_CARRY_ON=1), ROUNDS times.
# Each checkout needs `cargo build --release -p emulator -p dot-sm-solution`
# (e.g. git worktree add /tmp/before <commit>, then build there).
# Usage: bench/harness/emulator-ab.sh BEFORE_CHECKOUT NOW_CHECKOUT [ROUNDS]
set -euo pipefail
before=${1:?usage: emulator-ab.sh BEFORE_CHECKOUT NOW_CHECKOUT [ROUNDS]}
now=${2:?usage: emulator-ab.sh BEFORE_CHECKOUT NOW_CHECKOUT [ROUNDS]}
rounds=${3:-4}
for checkout in "$before" "$now"; do
    [ -x "$checkout/target/release/dot-sm-solution" ] || {
        echo "emulator-ab: $checkout/target/release/dot-sm-solution is not built" >&2
        exit 2
    }
done
rate() { # CHECKOUT [VAR=VALUE]
    env CUDA_COURSE_EMULATOR=1 CUDA_COURSE_EMULATOR_THREADS=1 CUDA_COURSE_EMULATOR_STATS=1 ${2:-} \
        "$1/scripts/cuda-runner" "$1/target/release/dot-sm-solution" --n 1000000 --runs 4 2>&1 >/dev/null |
        sed -n 's/.*(\([0-9]*\) million per CPU second)/\1/p' | sort -n | sed -n 3p
}
for i in $(seq "$rounds"); do
    echo "round $i: before $(rate "$before") now $(rate "$now")" \
        "now carrying on $(rate "$now" CUDA_COURSE_EMULATOR_CARRY_ON=1) (million/s)"
done
