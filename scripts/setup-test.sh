#!/usr/bin/env bash
# Tests scripts/setup.sh's refusals on machines this one plays: a PATH of
# the basic tools only (no nvcc, no bwrap, no sudo, no apt-get, so nothing
# can be installed whatever happens), an `id` that says uid 1000, and an
# os-release of another system (CUDA_COURSE_OS_RELEASE). Each refusal must
# exit 1 with one line on stderr naming what is wrong. Then, on this machine
# as it is (set up), a second run must find everything and change nothing.
# Usage: scripts/setup-test.sh   (after scripts/setup.sh; CI runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
for tool in bash env sed head tr dirname cat grep; do
    ln -s "$(command -v "$tool")" "$work/bin/$tool"
done
printf '#!/bin/sh\necho 1000\n' >"$work/bin/id"
chmod +x "$work/bin/id"
# The same machine with the toolkit installed (a stand-in nvcc; libcuda.so is
# looked for in the system's folders): only bubblewrap is missing.
cp -r "$work/bin" "$work/bin-toolkit"
printf '#!/bin/sh\necho "Cuda compilation tools"\n' >"$work/bin-toolkit/nvcc"
chmod +x "$work/bin-toolkit/nvcc"

failed=0
# expect NAME OS_RELEASE CODE TEXT [ARGS...]: scripts/setup.sh exits CODE
# with one line on stderr that contains TEXT. $bin is the machine's PATH.
bin=$work/bin
expect() {
    local name=$1 release=$2 code=$3 text=$4 got=0
    shift 4
    printf '%s\n' "$release" >"$work/os-release"
    env -i PATH="$bin" HOME="$work" CUDA_COURSE_OS_RELEASE="$work/os-release" \
        bash scripts/setup.sh "$@" >"$work/out" 2>"$work/err" || got=$?
    if [[ $got != "$code" || $(wc -l <"$work/err") != 1 ]] || ! grep -qF -- "$text" "$work/err"; then
        echo "setup-test: $name: expected exit $code and one line with '$text'; got exit $got:" >&2
        cat "$work/out" "$work/err" >&2
        failed=1
    else
        echo "setup-test: $name: exit $got, $(cat "$work/err")"
    fi
}

fedora='NAME="Fedora Linux"
ID=fedora
PRETTY_NAME="Fedora Linux 40 (Workstation Edition)"'
debian='ID=debian
PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"'
mint='ID=linuxmint
ID_LIKE="ubuntu debian"
PRETTY_NAME="Linux Mint 22"'

expect "another distribution" "$fedora" 1 "on Debian and Ubuntu, and this is Fedora Linux 40"
expect "no os-release at all" "" 1 "and this is an unknown system"
expect "Debian, not root, no sudo" "$debian" 1 "needs root, and sudo is not installed"
# A derivative is its ID_LIKE: past the distribution, to the missing sudo.
expect "Linux Mint, not root, no sudo" "$mint" 1 "needs root, and sudo is not installed"
expect "an unknown option" "$debian" 2 "'--deb' is not an option" --deb
if [[ -e /usr/lib/x86_64-linux-gnu/libcuda.so || -e /usr/lib64/libcuda.so ]]; then
    bin=$work/bin-toolkit
    expect "the toolkit there, bubblewrap not, on Fedora" "$fedora" 1 "install bubblewrap (bwrap, the grader's sandbox) yourself"
    expect "the toolkit there, bubblewrap not, no sudo" "$debian" 1 "installing bubblewrap (bwrap, the grader's sandbox) needs root"
fi

# This machine, set up: everything is found, nothing is installed.
if ! out=$(scripts/setup.sh 2>&1) || grep -q 'installing' <<<"$out" \
    || [[ $(grep -c 'nothing to do' <<<"$out") != 2 ]]; then
    echo "setup-test: a second run on this machine was not a no-op:" >&2
    echo "$out" >&2
    failed=1
else
    echo "setup-test: a second run here: nothing to do"
fi
exit $failed
