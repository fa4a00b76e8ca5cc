#!/usr/bin/env bash
# Installs what building cuda-course needs from the CUDA toolkit: nvcc
# (kernels -> PTX) and a libcuda.so to link cust against. scripts/setup.sh
# runs it, with everything else the course needs. Idempotent: does nothing
# when both are found.
# Debian: enables the contrib and non-free components (libcuda1 needs
# nvidia-support from contrib); Ubuntu: multiverse; then installs the
# distribution's nvidia-cuda-toolkit without recommends (recommends pull in the
# kernel-module build). Elsewhere it says what to install and exits 1.
set -euo pipefail

have_nvcc() {
    command -v nvcc >/dev/null 2>&1 && return 0
    local dir
    for dir in "${CUDA_PATH:-}" /usr/local/cuda /usr/lib/cuda /opt/cuda; do
        [ -n "$dir" ] && [ -x "$dir/bin/nvcc" ] && return 0
    done
    return 1
}

have_libcuda() {
    local dir
    for dir in "${CUDA_LIBRARY_PATH:-}" /usr/local/cuda/lib64 /usr/local/cuda/lib64/stubs \
        /usr/lib/cuda/lib64 /opt/cuda/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
        [ -n "$dir" ] && [ -e "$dir/libcuda.so" ] && return 0
    done
    return 1
}

if have_nvcc && have_libcuda; then
    echo "install-cuda-toolkit: nvcc and libcuda.so are already installed; nothing to do."
    exit 0
fi

me=install-cuda-toolkit
# shellcheck source-path=SCRIPTDIR source=lib/packages.sh
. "$(dirname "$0")/lib/packages.sh"
what="the CUDA toolkit (nvcc and libcuda.so)"
require_apt "$what"
case $(apt_family) in
    debian) components=(contrib non-free) ;;
    ubuntu) components=(multiverse) ;;
esac

# Enable the components where the toolkit and the driver library live, once.
# deb822 sources (Debian 12+, Ubuntu 24.04+) list them on a Components: line;
# the older one-line format on each deb line.
enable_component() {
    local component=$1 file changed=0
    shopt -s nullglob
    for file in /etc/apt/sources.list.d/*.sources; do
        if grep -qE '^Components:.*\bmain\b' "$file" && ! grep -qE "^Components:.*[[:space:]]$component([[:space:]]|\$)" "$file"; then
            "${as_root[@]}" sed -i -E "/^Components:.*\bmain\b/ s/\$/ $component/" "$file"
            changed=1
        fi
    done
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        if grep -qE '^deb .* main' "$file" && ! grep -qE "^deb .*[[:space:]]$component([[:space:]]|\$)" "$file"; then
            "${as_root[@]}" sed -i -E "/^deb .* main/ s/\$/ $component/" "$file"
            changed=1
        fi
    done
    shopt -u nullglob
    echo "install-cuda-toolkit: '$component' component $([ $changed = 1 ] && echo enabled || echo already enabled)."
}

for component in "${components[@]}"; do enable_component "$component"; done
apt_install "$what" nvidia-cuda-toolkit

if have_nvcc && have_libcuda; then
    echo "install-cuda-toolkit: installed: $(nvcc --version | tail -n 1)"
else
    echo "install-cuda-toolkit: nvidia-cuda-toolkit installed, but nvcc or libcuda.so is still missing." >&2
    exit 1
fi
