# shellcheck shell=bash
# Installing Debian and Ubuntu packages, for scripts/setup.sh and
# scripts/install-cuda-toolkit.sh: which family the machine is, who may
# install, and apt-get itself. Sourced, not run; the caller sets `me` (its
# name, for messages) first.
#
# CUDA_COURSE_OS_RELEASE names another os-release file than /etc/os-release,
# so a test can play a machine of another distribution.

me=${me:-cuda-course}

# One value of os-release, without its quotes; empty when absent.
os_release_value() {
    local file=${CUDA_COURSE_OS_RELEASE:-/etc/os-release}
    [ -r "$file" ] || return 0
    sed -n "s/^$1=//p" "$file" | head -n 1 | tr -d "\"'"
}

# "debian" or "ubuntu": the machine's ID, or for a derivative (Mint, Pop!_OS)
# the first of these its ID_LIKE names; empty for any other system.
apt_family() {
    local id like word
    id=$(os_release_value ID)
    like=$(os_release_value ID_LIKE)
    for word in $id $like; do
        case $word in
        debian | ubuntu) echo "$word"; return 0 ;;
        esac
    done
}

# Stops unless packages can be installed here: a Debian or Ubuntu machine,
# and root or sudo. $1 says what to install by hand otherwise. Sets
# `as_root`, the prefix that runs a command as root.
require_apt() {
    local name
    if [ -z "$(apt_family)" ]; then
        name=$(os_release_value PRETTY_NAME)
        echo "$me: this script installs with apt-get on Debian and Ubuntu, and this is ${name:-an unknown system}: install $1 yourself (README.md, Prerequisites)." >&2
        exit 1
    fi
    if [ "$(id -u)" -eq 0 ]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "$me: installing $1 needs root, and sudo is not installed: run this as root, or install sudo." >&2
        exit 1
    fi
}

# Installs Debian packages without their recommends (they pull in a kernel
# module build for the CUDA toolkit), after one `apt-get update` per script.
# $1 says what they are for, in messages; the rest are the packages.
apt_install() {
    local what=$1
    shift
    require_apt "$what"
    echo "$me: installing $what, with apt-get: $*"
    if [ -z "${apt_updated:-}" ]; then
        "${as_root[@]}" apt-get update -q
        apt_updated=1
    fi
    # env: sudo does not pass the caller's environment on.
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$@"
}
