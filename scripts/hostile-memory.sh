#!/usr/bin/env bash
# The second hostile round (grader/tests/hostile/unstoppable.rs), case by
# case, for one grader binary: each case graded in a class of its own
# beside an honest student (`grader build`, then `grader run --emulate`),
# with a log open at descriptor 200 as a cron wrapper leaves it, and the
# grader's peak memory: /usr/bin/time's maximum resident set, which counts
# the grader and the children it starts outside the sandbox, not what runs
# inside it (a PID namespace's processes do not report to it). The first
# row, the honest student alone, also builds the dependencies and the
# tracer once. Run it with this checkout's grader and with an older one to
# compare: the class comes from this checkout.
#
# Usage: scripts/hostile-memory.sh GRADER [COURSE] [WORK]
#   GRADER  the grader binary to measure
#   COURSE  the course checkout that grader builds against (default: here)
#   WORK    where the classes and gradings go (default: a temporary folder)
# HOSTILE_DEPS names a folder for the dependencies built once (default
# WORK/deps). HOSTILE_PTX_FLOATS sets huge-ptx's array (default 16777216: the issue's
# 192 MB PTX from an 840-byte kernel).
#
# HOSTILE_SKIP lists cases to leave out ("hold-threads starve": an older
# grader runs every student as nobody, so its thread holder would starve
# any other grader's runs on the machine, other people's included).
#
# Prints one row per case: case | build exit, peak MiB | run exit, peak MiB
# | the honest student's points | what the case got.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
grader=$(realpath "$1")
course=$(realpath "${2:-$here}")
work=${3:-$(mktemp -d)}
mkdir -p "$work"
deps=${HOSTILE_DEPS:-$work/deps}
export HOSTILE_PTX_FLOATS=${HOSTILE_PTX_FLOATS:-16777216}

(cd "$here" && HOSTILE_CLASS="$work/class" cargo test -q -p grader --test hostile \
    -- --ignored write_the_class >/dev/null 2>&1)
log=$work/grader.log
secret=s3cr3t-9f2c71

# peak COMMAND...: runs it, the log at fd 200; prints "exit peak_MiB".
peak() {
    /usr/bin/time -f '%x %M' -o "$work/time" "$@" 200>>"$log" >"$work/stdout" 2>"$work/stderr"
    read -r code kib < <(tail -n 1 "$work/time")
    signal=$(sed -n 's/.*terminated by signal \([0-9]*\).*/\1/p' "$work/time")
    [ -z "$signal" ] || code="signal $signal"
    echo "$code $((kib / 1024))"
}

# The points of each student in OUT's results.json, and each case's first
# own run's verdict (or why it was not built or graded).
summary() {
    python3 - "$1" <<'PY'
import json, sys
try:
    students = json.load(open(sys.argv[1] + "/results.json"))["students"]
except Exception as err:
    print(f"no results.json ({type(err).__name__})")
    sys.exit()
out = []
for name, record in sorted(students.items()):
    x = record["exercises"].get("dot-sm", {})
    # results.json schema 2: the student's own binary's runs by role, each
    # verdict typed (its kind and its own fields).
    own = [r for r in x.get("runs", []) if r.get("role") == "student-host"]
    errors = [l for l in (x.get("build_errors") or "").splitlines() if l.startswith("error")]
    verdict = own[0]["verdict"] if own else {}
    detail = json.dumps({k: v for k, v in verdict.items() if k != "kind"})[:50]
    said = (x.get("absent") or (errors[0][:70] if errors else "") or
            "; ".join(x.get("ptx_missing", []))[:60] or
            "; ".join(x.get("refused", []))[:60] or
            (f"{verdict['kind']}: {detail}" if own else ""))
    out.append(f"{name} {x.get('points')}/{x.get('max_points')} {said!r}")
print(" / ".join(out))
PY
}

grade() { # grade CLASS OUT: build then run; prints the row's measured part
    local class=$1 out=$2 built ran
    built=$(cd "$course" && peak "$grader" build "$class" --exercise dot-sm --seed 9 \
        --build-timeout 300 --bundle "$out/bundle" --target-dir "$deps")
    tail -n 3 "$work/stderr" >"$out.build-stderr"
    ran=$(peak "$grader" run "$out/bundle" --emulate --timeout 20 --out "$out")
    tail -n 3 "$work/stderr" >"$out.run-stderr"
    echo "build ${built% *}, ${built##* } MiB | run ${ran% *}, ${ran##* } MiB"
}

printf 'cuda-course-trace log at fd 200: token %s\n' "$secret" >"$log"
echo "case | build exit, peak | run exit, peak | students' points and verdicts | log or outputs touched"
cases=$(ls "$work/class/hostile")
skip=" ${HOSTILE_SKIP:-} "
for case in honest-only $cases names course-clone; do
    [[ $skip == *" $case "* ]] && continue
    class=$work/classes/$case
    rm -rf "$class"
    mkdir -p "$class"
    cp -a "$work/class/honest/honest1" "$class/"
    case $case in
    # Moved, not copied: a copy of hard-link-out's link would be a file.
    honest-only) ;;
    names) for name in "$work/class/honest/"zo*; do mv "$name" "$class/"; done ;;
    course-clone) mv "$work/class/honest/course-clone" "$class/" ;;
    *) mv "$work/class/hostile/$case" "$class/" ;;
    esac
    before=$(md5sum <"$log")
    row=$(grade "$class" "$work/out/$case")
    touched=none
    [ "$(md5sum <"$log")" = "$before" ] || touched="the log changed"
    grep -rlq "$secret" "$work/out/$case" --include='*.json' --include='*.md' 2>/dev/null &&
        touched="$touched; the token is in the outputs"
    echo "$case | $row | $(summary "$work/out/$case") | $touched"
done

# hold-threads beside classmates graded at the same time by another grader.
[[ $skip == *" starve "* ]] && exit 0
class=$work/classes/starve
rm -rf "$class" "$work/out/starve"
mkdir -p "$class"
cp -a "$work/class/honest/honest1" "$work/class/honest/honest2" "$class/"
(cd "$here" && HOSTILE_CLASS="$work/again" cargo test -q -p grader --test hostile \
    -- --ignored write_the_class >/dev/null 2>&1)
mv "$work/again/hostile/hold-threads" "$class/"
(cd "$course" && "$grader" build "$class" --exercise dot-sm --seed 9 --bundle "$work/out/starve/bundle" \
    --target-dir "$deps" >/dev/null 2>&1)
"$grader" run "$work/out/starve/bundle" --emulate --timeout 20 --student hold-threads \
    --out "$work/out/starve/holding" >/dev/null 2>&1 &
holding=$!
sleep 4
/usr/bin/time -f '%x %M' -o "$work/time" "$grader" run "$work/out/starve/bundle" --emulate \
    --timeout 20 --student honest1 --student honest2 --out "$work/out/starve/same-time" \
    >/dev/null 2>"$work/stderr"
read -r code kib <"$work/time"
wait $holding
echo "hold-threads beside two classmates | - | run $code, $((kib / 1024)) MiB | $(summary "$work/out/starve/same-time") | -"
