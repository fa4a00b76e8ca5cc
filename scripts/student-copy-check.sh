#!/usr/bin/env bash
# In a student's copy of the course (scripts/student-copy.sh), an exercise
# written as most students write it, every step done and every `TODO(step N)`
# comment left in (this course's solution with its `// Step N:` markers
# turned back into the stub's), must be done for `cargo course check`, and
# `list` and `next` must then say so too. The copy's exercise is put back
# as handed out afterwards.
#
# Usage: scripts/student-copy-check.sh COPY [EXERCISE]   (default vecadd-anyN;
# CARGO_TARGET_DIR as for the copy's own tests). Runs the exercise where
# `cargo run` would: on a GPU, or on the CPU emulator.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: scripts/student-copy-check.sh COPY [EXERCISE]" >&2
    exit 2
fi
copy=$1
exercise=${2:-vecadd-anyN}
[ -d "$copy/exercises/$exercise/src" ] || {
    echo "student-copy-check: $copy has no exercises/$exercise; make it with scripts/student-copy.sh" >&2
    exit 2
}
say() { echo "student-copy-check: $*"; }
fail() {
    echo "student-copy-check: $1" >&2
    printf '%s\n' "$2" >&2
    exit 1
}

src=$copy/exercises/$exercise/src
trap 'git -C "$copy" checkout -q course-start -- "exercises/$exercise"' EXIT
for file in solutions/"$exercise"/src/*; do
    sed -E 's|^([[:space:]]*)// Step ([0-9]+):|\1// TODO(step \2):|' "$file" >"$src/$(basename "$file")"
done
grep -q "TODO(step 1)" "$src/kernel.cu" || fail "the solution's markers did not turn into TODO comments" ""
if grep -q "unfinished(" "$src/main.rs"; then
    fail "the solution still calls a placeholder" "$(grep -n "unfinished(" "$src/main.rs")"
fi

course() { (cd "$copy" && cargo course "$@"); }
list=$(course list)
grep -q "$exercise .*all steps written, not checked" <<<"$list" || fail "list, before the check:" "$list"

if ! out=$(course check "$exercise" 2>&1); then
    fail "check said not done with every step written and the TODO comments left in:" "$out"
fi
grep -q "^done: $exercise is done" <<<"$out" || fail "check exited 0 without saying done:" "$out"
[ "$(grep -c "TODO comments" <<<"$out")" = 1 ] || fail "check should mention the TODO comments once:" "$out"
say "cargo course check $exercise, every step written and the TODO comments left in:"
sed -n '/^done: /,$p' <<<"$out"

list=$(course list)
grep -q "$exercise .*done on this machine" <<<"$list" || fail "list, after check said done:" "$list"
next=$(course next)
if grep -q "^$exercise: " <<<"$next"; then
    fail "next still names $exercise after check said done:" "$next"
fi
say "list and next agree: $(grep -F "$exercise" <<<"$list" | head -n 1 | tr -s ' ')"
