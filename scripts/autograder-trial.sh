#!/usr/bin/env bash
# The Gradescope autograder tried as a new instructor would, in a fresh
# Debian 12 root that nothing of this machine leaks into (issue 53): the
# package is written here (`grader autograder gradescope`), unpacked into
# the root's /autograder/source as Gradescope's harness does, its setup.sh
# run there (it installs everything itself, from Debian's archive and
# crates.io), then every exercise's solution, every stub and a compile
# error graded by /autograder/run_autograder, each inside the platform's
# budget: one core and 768 MiB (Gradescope's defaults), no network; then
# the same with PrairieLearn's entrypoint at one core and 2 GiB. Every
# results.json is held to its platform's schema (grader/tests/schemas).
#
# Each grading runs as Docker's default profile runs a container: without
# CAP_SYS_ADMIN and with unshare, setns and clone's namespace flags
# refused by seccomp (a helper built here from libseccomp), so bubblewrap
# cannot start and the student's code runs as the unprivileged student
# user; the solutions are graded once more as the root allows bubblewrap.
# The budget is a cgroup v1 memory group (memory.limit_in_bytes) and a
# cpuset of CPU 0, both made here under this shell's own groups; the peak
# is the group's RSS, sampled every half second, and its max_usage_in_bytes
# (page cache included).
#
#   scripts/autograder-trial.sh OUT          every exercise (about 40 min here)
#   EXERCISES="dot-sm" scripts/autograder-trial.sh OUT    fewer
#
# Needs root, mmdebstrap, bubblewrap, gcc and libseccomp-dev here, and
# Debian's archive and crates.io reachable. The Debian root is cached in
# OUT/../debian-bookworm.tar; OUT gets setup.log, one folder per grading
# (results.json, the entry point's output, time and memory) and
# summary.tsv (the scores are there to read). Exit status: 0 when the
# setup worked and every results.json is valid against its schema.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
me=autograder-trial
if [ $# -ne 1 ]; then
    echo "usage: scripts/autograder-trial.sh OUT   (OUT: a folder for the root and the raw results)" >&2
    exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "$me: needs root (the root's setup installs packages; gradings need a student user)" >&2
    exit 2
fi
out=$(mkdir -p "$1" && cd "$1" && pwd)
exercises=${EXERCISES:-vecadd-anyN dot-gm dot-sm dot-atomic matmul-naive matmul-tiled memspace-timing streams-overlap}
root=$out/root
say() { echo "$me: $*" | tee -a "$out/trial.log"; }

# --- The package, and the tools of the trial ---------------------------------
cd "$here"
cargo build --release -q -p grader
flags=()
for e in $exercises; do flags+=(--exercise "$e"); done
target/release/grader autograder gradescope "$out/autograder.zip" "${flags[@]}" 2>>"$out/trial.log"
cc -O2 -static -o "$out/docker-like" -x c - -lseccomp <<'C'
/* Runs a command as Docker's default profile runs a container: without
   CAP_SYS_ADMIN, and with unshare, setns and clone's namespace flags
   refused (EPERM) and clone3 unknown (ENOSYS), as its seccomp profile
   does. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: docker-like COMMAND...\n"); return 2; }
    if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0)) { perror("capbset"); return 1; }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    const unsigned long flags[] = {CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
                                   CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
    int failed = !ctx || seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)
        || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0)
        || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0)
        || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    for (unsigned i = 0; i < sizeof flags / sizeof flags[0]; i++)
        failed = failed || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                            SCMP_A0(SCMP_CMP_MASKED_EQ, flags[i], flags[i]));
    if (failed || seccomp_load(ctx)) { fprintf(stderr, "docker-like: seccomp failed\n"); return 1; }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
C

# --- A fresh Debian 12 root ----------------------------------------------------
tarball=$(dirname "$out")/debian-bookworm.tar
if [ ! -s "$tarball" ]; then
    say "making a Debian 12 root with mmdebstrap"
    mmdebstrap --variant=apt --components=main --include=ca-certificates bookworm "$tarball" \
        "deb http://deb.debian.org/debian bookworm main" \
        "deb http://deb.debian.org/debian bookworm-updates main" \
        "deb http://deb.debian.org/debian-security bookworm-security main" >>"$out/trial.log" 2>&1
fi
# REUSE_ROOT=1 keeps a root an earlier trial set up (its setup.sh then
# runs again over the new package, doing only what changed).
if [ "${REUSE_ROOT:-}" != 1 ] || [ ! -d "$root/autograder" ]; then
    rm -rf "$root"
    mkdir -p "$root"
    tar -xf "$tarball" -C "$root"
fi
# As Gradescope's harness does: the zip unpacked in /autograder/source.
mkdir -p "$root/autograder/source" "$root/autograder/submission" "$root/autograder/results"
(cd "$root/autograder/source" && unzip -q -o "$out/autograder.zip")
cp "$out/docker-like" "$root/usr/local/sbin/docker-like"

# Runs a command in the root: a mount and IPC namespace of its own, a /dev
# and /tmp of its own, no /sys (as in a container); the network only where
# $net is "net". This machine's /proc is bound whole: bubblewrap's own
# /proc masks some of its folders, and the kernel then refuses the nested
# /proc the grader's sandbox makes (as in Docker, whose /proc is masked so);
# a chroot cannot make user namespaces at all.
inside() {
    local net=$1
    shift
    local share=(--unshare-net)
    [ "$net" = net ] && share=(--share-net --ro-bind /etc/resolv.conf /etc/resolv.conf)
    bwrap --bind "$root" / --dev /dev --bind /proc /proc --perms 1777 --tmpfs /tmp \
        --perms 1777 --tmpfs /dev/shm --unshare-ipc "${share[@]}" --die-with-parent --clearenv \
        --setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --setenv HOME /root --setenv LANG C.UTF-8 --chdir /autograder "$@"
}

# The one thing of this machine the root is given: the certificate
# authorities this machine's network may add (one that inspects TLS, so
# that cargo reaches crates.io), none of its software.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    inside net update-ca-certificates >>"$out/trial.log" 2>&1
fi

if [ "${SKIP_SETUP:-}" = 1 ] && [ -x "$root/opt/cuda-course-autograder/public/bin/grader" ]; then
    say "setup.sh skipped (SKIP_SETUP=1): the root's install is an earlier trial's"
else
    say "setup.sh in the root (network on, no limits: Gradescope builds its image so)"
    started=$SECONDS
    # As Gradescope builds its image: under Docker's default profile too.
    inside net /usr/local/sbin/docker-like bash /autograder/source/setup.sh >"$out/setup.log" 2>&1 || {
        say "setup.sh failed; see $out/setup.log"
        exit 1
    }
    say "setup.sh done in $((SECONDS - started)) s; the root holds $(du -sh --exclude=proc "$root" | cut -f1)"
    grep -E "^autograder-setup: (Rust|the CUDA toolkit)" "$out/setup.log" | tee -a "$out/trial.log"
fi
# As Gradescope's image build does: run_autograder copied to /autograder.
cp "$root/autograder/source/run_autograder" "$root/autograder/run_autograder"

# --- The budget: a memory group and CPU 0 -------------------------------------
mem_parent=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
memory=$mem_parent/cuda-course-trial
cpuset=/sys/fs/cgroup/cpuset/cuda-course-trial
rmdir "$memory" "$cpuset" 2>/dev/null || true
mkdir -p "$memory" "$cpuset"
echo 0 >"$cpuset/cpuset.cpus"
echo 0 >"$cpuset/cpuset.mems"
cleanup() { rmdir "$memory" "$cpuset" 2>/dev/null || true; }
trap cleanup EXIT

# One grading: $1 a name, $2 the platform's entry (gradescope or
# prairielearn), $3 the memory limit in MiB, $4 "docker" or "bwrap";
# the upload is in $root's submission folder already.
grading() {
    local name=$1 platform=$2 mib=$3 mode=$4 dir=$out/gradings/$1
    mkdir -p "$dir"
    echo $((mib << 20)) >"$memory/memory.limit_in_bytes"
    echo 0 >"$memory/memory.max_usage_in_bytes"
    local entry=(bash /autograder/run_autograder) results=autograder/results/results.json
    if [ "$platform" = prairielearn ]; then
        entry=(bash /opt/cuda-course-autograder/public/prairielearn-entrypoint)
        results=grade/results/results.json
    fi
    [ "$mode" = docker ] && entry=(/usr/local/sbin/docker-like "${entry[@]}")
    rm -f "$root/$results"
    local begin peak=0 rss
    begin=$(date +%s%N)
    (
        echo "$BASHPID" >"$memory/cgroup.procs"
        echo "$BASHPID" >"$cpuset/tasks"
        inside nonet "${entry[@]}" >"$dir/output.log" 2>&1
    ) &
    local child=$!
    while kill -0 "$child" 2>/dev/null; do
        rss=$(awk '$1 == "total_rss" {print $2}' "$memory/memory.stat")
        [ "${rss:-0}" -gt "$peak" ] && peak=$rss
        sleep 0.5
    done
    wait "$child" || true
    local seconds
    seconds=$(awk -v b="$begin" -v e="$(date +%s%N)" 'BEGIN {printf "%.1f", (e - b) / 1e9}')
    cp "$root/$results" "$dir/results.json" 2>/dev/null || echo '{}' >"$dir/results.json"
    local usage failcnt
    usage=$(cat "$memory/memory.max_usage_in_bytes")
    failcnt=$(cat "$memory/memory.failcnt")
    local score
    if [ "$platform" = prairielearn ]; then
        score=$(jq -r 'if .gradable == false then "not gradable" else "\(.score)" end' "$dir/results.json")
    else
        score=$(jq -r '"\(.score)/\([.tests[]?.max_score // 0] | add)"' "$dir/results.json")
    fi
    local confined
    confined=$(grep -o 'confinement: [^;]*' "$dir/output.log" | head -n 1 | cut -c14- || true)
    printf '%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n' "$name" "$platform" "$mib" "$mode" "$seconds" \
        $((peak >> 20)) $((usage >> 20)) "$score" "${confined:-none}" | tee -a "$out/summary.tsv"
}

# The submission folder of $1 holding exercise $2's files from $3
# (solutions or exercises), as loose files in their exercise's folder.
upload() {
    local platform=$1 exercise=$2 kind=$3 dir
    dir=$root/autograder/submission
    [ "$platform" = prairielearn ] && dir=$root/grade/student
    rm -rf "$dir"
    mkdir -p "$dir/$exercise/src"
    cp "$here/$kind/$exercise/src/"* "$dir/$exercise/src/"
}

# One grading of $1's solution in mode $2 ("docker" or "bwrap"), without
# limits and not recorded: the first grading in a confinement the setup did
# not build for builds the dependencies (the setup builds for its own).
warm_up() {
    upload gradescope "$1" solutions
    local entry=(bash /autograder/run_autograder)
    [ "$2" = docker ] && entry=(/usr/local/sbin/docker-like "${entry[@]}")
    say "warm-up grading ($2): $(inside nonet "${entry[@]}" 2>&1 | tail -n 1)"
}

# PrairieLearn's entrypoint, as its Dockerfile's package holds it.
cp "$here/scripts/autograder/prairielearn-entrypoint" "$root/opt/cuda-course-autograder/public/"
mkdir -p "$root/grade"
printf 'name\tplatform\tMiB\tconfinement\tseconds\tpeak_rss_MiB\tmax_usage_MiB\tscore\tsaid\n' >"$out/summary.tsv"
first=${exercises%% *}
warm_up "$first" docker
for e in $exercises; do
    for kind in solutions exercises; do
        upload gradescope "$e" "$kind"
        grading "$e-$kind" gradescope 768 docker
    done
done
upload gradescope "$first" solutions
sed -i '0,/fn main/s/fn main/fn main() { let broken: u32 = "no"; }\nfn not_main/' \
    "$root/autograder/submission/$first/src/main.rs"
grading "$first-compile-error" gradescope 768 docker
warm_up "$first" bwrap
for e in $exercises; do
    upload gradescope "$e" solutions
    grading "$e-solutions-bwrap" gradescope 768 bwrap
done
for e in $exercises; do
    for kind in solutions exercises; do
        upload prairielearn "$e" "$kind"
        grading "$e-$kind-prairielearn" prairielearn 2048 docker
    done
done
upload prairielearn "$first" solutions
sed -i '0,/fn main/s/fn main/fn main() { let broken: u32 = "no"; }\nfn not_main/' \
    "$root/grade/student/$first/src/main.rs"
grading "$first-compile-error-prairielearn" prairielearn 2048 docker
say "done: $out/summary.tsv"
column -t -s $'\t' "$out/summary.tsv" | tee -a "$out/trial.log"

# Every results.json against its platform's schema (grader/tests/schemas),
# with Python's jsonschema where it is installed.
if python3 -c 'import jsonschema' 2>/dev/null; then
    python3 - "$here/grader/tests/schemas" "$out/gradings" <<'PY' | tee -a "$out/trial.log"
import json, pathlib, sys
import jsonschema
schemas, gradings = map(pathlib.Path, sys.argv[1:])
bad = 0
done = sorted(gradings.glob("*/results.json"))
for results in done:
    platform = "prairielearn" if results.parent.name.endswith("-prairielearn") else "gradescope"
    schema = json.loads((schemas / f"{platform}.json").read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.loads(results.read_text())))
    for error in errors:
        print(f"autograder-trial: {results.parent.name}: not {platform}'s schema: {error.message}")
    bad += bool(errors)
print(f"autograder-trial: {len(done) - bad} of {len(done)} results.json valid against their platform's schema")
sys.exit(1 if bad else 0)
PY
else
    say "python3's jsonschema is missing: the results were not held to the schemas"
fi
