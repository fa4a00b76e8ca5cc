#!/usr/bin/env bash
# cuda-course's autograder setup, written into the package by `grader
# autograder gradescope|prairielearn`. The platform runs it once, as root,
# when it builds its image: Gradescope from /autograder/source (its Ubuntu
# 22.04 base), PrairieLearn's Dockerfile from the package's folder. It
# installs only what Debian and Ubuntu 22.04 both provide, with apt-get:
# build tools, bubblewrap, the distribution's CUDA toolkit
# (course/scripts/install-cuda-toolkit.sh); Rust 1.85 or newer from the
# distribution where it has one (Debian 12: rustc-web; Ubuntu 22.04:
# rustc-1.XX from universe), else from rustup (CUDA_COURSE_RUST=apt or
# rustup chooses); then it builds the grader and has it install the
# autograder (`grader autograder prepare`: the trusted bundle of the
# course's solutions, the public course, one build of the stubs as the
# student user). Every step says what it did; any failure stops it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
me=autograder-setup
home=/opt/cuda-course-autograder
started=$SECONDS
# shellcheck source=../lib/packages.sh
. "$here/course/scripts/lib/packages.sh"
export DEBIAN_FRONTEND=noninteractive
step() { echo "$me: $1 ($((SECONDS - started)) s)"; }

apt_install "build tools, curl and bubblewrap" build-essential ca-certificates curl bubblewrap
"$here/course/scripts/install-cuda-toolkit.sh"
step "the CUDA toolkit: $(nvcc --version | tail -n 1)"

# --- Rust 1.85 or newer ------------------------------------------------------
at_least_185() { # a version like 1.85.0 or 1.85.1+dfsg
    local minor
    minor=$(echo "$1" | sed -n 's/^1\.\([0-9]*\).*/\1/p')
    [ -n "$minor" ] && [ "$minor" -ge 85 ]
}
rust_ready() {
    command -v rustc >/dev/null 2>&1 && command -v cargo >/dev/null 2>&1 \
        && at_least_185 "$(rustc --version | awk '{print $2}')"
}
candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '(none)' || true; }
rust_from_apt() {
    local version pick=""
    apt-get update -q >/dev/null
    case $(apt_family) in
    debian)
        for name in rustc-web rustc; do
            version=$(candidate "$name")
            if [ -n "$version" ] && at_least_185 "$version"; then pick=$name; break; fi
        done
        case $pick in
        rustc-web) apt_install "Rust $(candidate rustc-web)" rustc-web cargo-web ;;
        rustc) apt_install "Rust $(candidate rustc)" rustc cargo ;;
        *) return 1 ;;
        esac
        ;;
    ubuntu)
        # Versioned toolchains (rustc-1.85, cargo-1.85...) in universe.
        for name in $(apt-cache pkgnames rustc-1. | sort -t. -k2 -n -r); do
            version=${name#rustc-}
            if at_least_185 "$version" && [ -n "$(candidate "cargo-$version")" ]; then
                apt_install "Rust $version" "rustc-$version" "cargo-$version"
                export PATH="/usr/lib/rust-$version/bin:$PATH"
                pick=$version
                break
            fi
        done
        [ -n "$pick" ] || return 1
        ;;
    *) return 1 ;;
    esac
    rust_ready
}
rust_from_rustup() {
    export RUSTUP_HOME=/opt/rust/rustup CARGO_HOME=/opt/rust/cargo
    curl --proto '=https' --tlsv1.2 -sSf -o /tmp/rustup-init \
        https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init
    chmod +x /tmp/rustup-init
    /tmp/rustup-init -y -q --no-modify-path --profile minimal --default-toolchain stable
    rm -f /tmp/rustup-init
    export PATH="$CARGO_HOME/bin:$PATH"
    rust_ready
}
if rust_ready && [ -z "${CUDA_COURSE_RUST:-}" ]; then
    step "Rust: $(rustc --version), already here"
elif [ "${CUDA_COURSE_RUST:-}" != rustup ] && rust_from_apt; then
    step "Rust: $(rustc --version), the distribution's"
elif [ "${CUDA_COURSE_RUST:-}" != apt ] && rust_from_rustup; then
    step "Rust: $(rustc --version), from rustup"
else
    echo "$me: no Rust 1.85 or newer could be installed (apt-get, then rustup); install one and run setup.sh again" >&2
    exit 1
fi
# The toolchain's own folder first: the grader's builds find cargo beside
# rustc's sysroot, for every user, without rustup's proxies.
PATH="$(rustc --print sysroot)/bin:$PATH"
export PATH

# --- The student user: student code runs as it where bubblewrap cannot -----
student=$(sed -n 's/^ *"student": *\([0-9]*\).*/\1/p' "$here/autograder.json")
if ! getent group "$student" >/dev/null; then
    groupadd --gid "$student" cuda-course-student
fi
if ! getent passwd "$student" >/dev/null; then
    useradd --uid "$student" --gid "$student" --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin cuda-course-student
fi
step "the student user: uid $student"

# --- The grader, and the autograder it installs ------------------------------
mkdir -p "$home/work"
export CARGO_HOME="$home/work/cargo-home"
cargo build --release --locked -q -p grader --manifest-path "$here/course/Cargo.toml" \
    --target-dir "$home/build"
step "the grader built"
"$home/build/release/grader" autograder prepare "$here"
# Build folders the gradings do not use: the grader's and the trusted
# bundle's (the bundle keeps its binaries).
rm -rf "$home/build" "$home/private/target" "$home/private/trusted/.build"
# The package holds the solutions and the settings: root's alone.
chmod 700 "$here"
step "ready"
