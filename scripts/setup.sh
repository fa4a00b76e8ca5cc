#!/usr/bin/env bash
# Sets up a machine for cuda-course, on Debian or Ubuntu: installs what is
# missing and says what it did, so it may be run again at any time.
#
#   scripts/setup.sh         what the README's two commands need (`cargo run
#                            -p vecadd-anyN`, `cargo test --workspace`):
#                            nvcc and libcuda.so (scripts/install-cuda-toolkit.sh)
#                            and bubblewrap (the grader's sandbox, which its
#                            tests start; not in a student's copy)
#   scripts/setup.sh --dev   that, and what the course's CI and maintainers
#                            need besides: rustfmt and clippy (rustup), python3
#                            with venv, mdBook (scripts/install-mdbook.sh) and
#                            Slurm with munge (scripts/slurm-test.sh)
#
# Run it as yourself: it asks sudo for what needs root (apt-get), and rustup
# and mdBook are installed for you. Rust itself comes first, from rustup.
# Elsewhere than Debian or Ubuntu, or without root or sudo, it installs
# nothing and says in one line what is missing (exit 1); bad arguments exit 2.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
me=setup
# shellcheck source-path=SCRIPTDIR source=lib/packages.sh
. "$here/lib/packages.sh"

dev=false
case "${1:-}" in
"") ;;
--dev) dev=true ;;
*)
    echo "usage: scripts/setup.sh [--dev]   ('$1' is not an option)" >&2
    exit 2
    ;;
esac
if [ $# -gt 1 ]; then
    echo "usage: scripts/setup.sh [--dev]   (one option at most)" >&2
    exit 2
fi
if $dev && [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ]; then
    echo "$me: run scripts/setup.sh --dev as yourself, not with sudo: rustfmt, clippy and mdBook are installed for your user (it asks sudo for the rest)." >&2
    exit 1
fi

# --- What the README's two commands need ------------------------------------
"$here/install-cuda-toolkit.sh"

# The grader's sandbox: the grader refuses to build or run student code
# without it, and its tests (part of `cargo test --workspace`) start it. A
# student's copy of the course (scripts/student-copy.sh) has no grader.
if [ ! -d "$here/../grader" ]; then
    echo "$me: bubblewrap: not needed, this copy of the course has no grader."
elif [ -n "${GRADER_BWRAP:-}" ] && [ -x "$GRADER_BWRAP" ]; then
    echo "$me: bubblewrap: GRADER_BWRAP names $GRADER_BWRAP; nothing to do."
elif command -v bwrap >/dev/null 2>&1; then
    echo "$me: bubblewrap is already installed ($(bwrap --version)); nothing to do."
else
    apt_install "bubblewrap (bwrap, the grader's sandbox)" bubblewrap
    echo "$me: installed $(bwrap --version)."
fi
# Installed is not enough: a container may forbid the namespaces it needs.
bwrap=${GRADER_BWRAP:-bwrap}
if [ -d "$here/../grader" ] && ! "$bwrap" --ro-bind / / --unshare-all --die-with-parent true 2>/dev/null; then
    echo "$me: warning: $bwrap cannot start a sandbox on this machine (no user namespaces?); the grader's sandbox tests will fail here." >&2
fi

# Rust is the README's own prerequisite (rustup, per user): checked, not installed.
if command -v cargo >/dev/null 2>&1; then
    echo "$me: Rust: $(cargo --version)."
elif [ -n "${SUDO_USER:-}" ]; then
    echo "$me: note: cargo is not on root's PATH; run scripts/setup.sh as yourself (it asks sudo itself) to check Rust too." >&2
else
    echo "$me: note: cargo is not on PATH here; the course needs Rust 1.85 or newer, from https://rustup.rs." >&2
fi

if ! $dev; then
    echo "$me: ready: cargo run -p vecadd-anyN, and cargo test --workspace."
    exit 0
fi

# --- --dev: CI's other parts -------------------------------------------------
# rustfmt and clippy: components of the rustup toolchain, for this user.
missing=()
cargo fmt --version >/dev/null 2>&1 || missing+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || missing+=(clippy)
if [ ${#missing[@]} -eq 0 ]; then
    echo "$me: rustfmt and clippy are already installed; nothing to do."
elif command -v rustup >/dev/null 2>&1; then
    echo "$me: adding ${missing[*]} to the Rust toolchain"
    rustup component add "${missing[@]}"
else
    echo "$me: ${missing[*]} missing, and rustup is not here to add them: install them with your Rust toolchain." >&2
    exit 1
fi

# python3 with venv: the book's scripts (scripts/book/), mdBook's venv and
# scripts/slurm-test.sh. Debian splits venv's pip bootstrap into python3-venv.
if command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "$me: python3 with venv is already installed; nothing to do."
else
    apt_install "python3 with venv, for the book's scripts and mdBook" python3 python3-venv
fi
"$here/install-mdbook.sh"

# Slurm and munge, for scripts/slurm-test.sh (scripts/slurm-local.sh starts
# a one-node cluster of them).
if command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 \
    && command -v sbatch >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; then
    echo "$me: Slurm and munge are already installed; nothing to do."
else
    apt_install "Slurm and munge, for scripts/slurm-test.sh" slurmctld slurmd slurm-client munge
fi
echo "$me: ready for .ci/run's other parts: Slurm, rustfmt, clippy and the book."
