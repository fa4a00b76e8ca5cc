#!/usr/bin/env bash
# Writes a student's copy of the course to OUT: the stubs (exercises/), the
# course toolkit (kernels/), the course command (course/, `cargo course`),
# the CPU emulator (emulator/, scripts/cuda-runner), the book (docs/,
# scripts/install-mdbook.sh) and the set-up script, as a workspace that builds and
# whose `cargo test --workspace` passes. Left out: solutions/, the grader
# (its mutants are edits of the solutions), the GPU and grading bundles, and
# the stub drift test (it reads solutions/). The exercises' tests/cli.rs
# come along: each is the stub's and the solution's one test file (the
# solutions' Cargo.toml names it), and here it tests the stub alone. The
# copy is a git repository
# whose first commit is tagged course-start, which `cargo course reset`
# restores from.
#
# Usage: scripts/student-copy.sh OUT   (OUT must not exist yet, or be empty)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ]; then
    echo "usage: scripts/student-copy.sh OUT   (a folder that does not exist yet)" >&2
    exit 2
fi
out=$1
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
    echo "student-copy: $out exists and is not empty; name a new folder" >&2
    exit 2
fi
mkdir -p "$out"

# Tracked files only: no target/, no bundles, nothing a build left behind;
# and not the course's own tests that hold solved kernels or compare stubs
# with solutions (stub_drift.rs, the PTX style fixtures) or need nvcc 13's
# PTX.
git ls-files -z -- .cargo .gitignore Cargo.lock kernels ptx course emulator exercises docs \
        scripts/setup.sh scripts/lib/packages.sh scripts/install-cuda-toolkit.sh \
        scripts/install-mdbook.sh scripts/cuda-runner \
    | grep -zv '^kernels/tests/stub_drift.rs$' \
    | grep -zv '^kernels/tests/ptx_styles' \
    | grep -zv '^emulator/tests/ptx/nvcc13/' \
    | xargs -0 cp --parents -t "$out"

# The workspace of what was copied: without the solutions, the grader and
# the course's other tools.
grep -q '^members = ' Cargo.toml || {
    echo "student-copy: no members line in Cargo.toml; update this script" >&2
    exit 1
}
sed "s|^members = .*|members = [\"kernels\", \"ptx\", \"course\", \"emulator\", \"exercises/*\"]|" Cargo.toml >"$out/Cargo.toml"

cat >"$out/README.md" <<'README'
# cuda-course

A CUDA programming course as a Rust workspace. Each exercise is a small
program: you write the kernel in CUDA C (`src/kernel.cu`) and the host steps
in Rust (`src/main.rs`, on the cust driver API); the program runs it, checks
every result and reports PASS or FAIL with timings.

You need Rust 1.85 or newer, and the CUDA toolkit's `nvcc` and `libcuda.so`
to build: on Debian or Ubuntu, `scripts/setup.sh` installs them (run it as
yourself; it asks `sudo` for the packages and installs only what is
missing). Elsewhere install the CUDA toolkit and put `nvcc` on `PATH`.

You do not need a GPU. Without one, `cargo run`, `cargo test` and
`cargo course check` run each exercise's kernels on the course's CPU
emulator (`emulator/`, a stand-in for the NVIDIA driver), say so in one line
and use smaller default sizes, so you can do every exercise and see it done
on a laptop. The emulator tells you what a GPU would not: which threads
raced on which word, which access left its allocation, which
`__syncthreads()` not every thread reached, each with its `kernel.cu` line,
failing the run as a GPU fault would (exit code 3). What it does not do: its
times are a CPU's, not a GPU's, so the timings and bandwidth it reports say
nothing about your kernel's speed; and it is far slower than a GPU, so a
large `--n` or `--width` takes minutes. With an NVIDIA GPU of compute
capability 7.5 or newer and its driver, the same programs run on the GPU.
`CUDA_COURSE_EMULATOR=1` forces the emulator, `=0` turns it off.

```
cargo course list                 # every exercise, its state, a progress bar
cargo course next                 # the exercise and the step to do next
cargo course hint dot-sm          # one hint, for the next step (or: hint dot-sm 4)
cargo course watch                # check again on every save (Ctrl-C stops)
cargo course check dot-sm         # build, look at the PTX, run: says "done"
cargo course reset dot-sm         # back to the stub, after you type yes
cargo run -p dot-sm -- --help     # the exercise's own flags
```

Each part for you to write is marked `TODO(step N)` in
`exercises/<name>/src/kernel.cu` and `src/main.rs`, numbered in the order to
do them; the comments may stay once a step is written. An exercise is done
when `cargo course check` says so: no `kernels::unfinished(N)` placeholder
left, the kernel's PTX has what the exercise teaches, and a run passes. The
book is in `docs/` (`scripts/install-mdbook.sh`, then
`target/mdbook-venv/bin/mdbook serve docs`). Your instructor's grading runs
your exercises at more sizes and inputs than `check` does.
README

# Nothing of the solutions may come along: their step marker is `// Step N:`.
if grep -rqE '^\s*// Step [0-9]+:' "$out" || [ -e "$out/solutions" ] || [ -e "$out/grader" ]; then
    echo "student-copy: solution code reached $out; it must not" >&2
    exit 1
fi

# The lock without the packages only the grader used, as cargo would leave
# it after the first build (no versions change).
(cd "$out" && cargo update --workspace --offline --quiet)

if command -v git >/dev/null; then
    git -C "$out" init -q
    git -C "$out" add -A
    git -C "$out" -c user.name=cuda-course -c user.email=cuda-course@localhost \
        commit -qm "The course, as handed out"
    git -C "$out" tag course-start
fi
echo "student-copy: $(git -C "$out" ls-files 2>/dev/null | wc -l) files in $out; start with: cd $out && cargo course list"
