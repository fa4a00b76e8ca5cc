#!/usr/bin/env bash
# Installs what building cuda-course needs: nvcc (kernels -> PTX) and a
# libcuda.so to link cust against. Idempotent: does nothing when both are found.
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

. /etc/os-release 2>/dev/null || true
case "${ID:-unknown}" in
    debian) components=(contrib non-free) ;;
    ubuntu) components=(multiverse) ;;
    *)
        cat >&2 <<MSG
install-cuda-toolkit: this script knows Debian and Ubuntu, not '${ID:-unknown}'.
Install the CUDA toolkit (nvcc and libcuda.so) from your distribution or from
NVIDIA, then either put nvcc on PATH or set CUDA_PATH to the toolkit folder, and
set CUDA_LIBRARY_PATH to the folder that holds libcuda.so.
MSG
        exit 1
        ;;
esac

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
        echo "install-cuda-toolkit: run as root or install sudo." >&2
        exit 1
    }
    sudo_cmd=(sudo)
fi

# Enable the components where the toolkit and the driver library live, once.
# deb822 sources (Debian 12+, Ubuntu 24.04+) list them on a Components: line;
# the older one-line format on each deb line.
enable_component() {
    local component=$1 file changed=0
    shopt -s nullglob
    for file in /etc/apt/sources.list.d/*.sources; do
        if grep -qE '^Components:.*\bmain\b' "$file" && ! grep -qE "^Components:.*[[:space:]]$component([[:space:]]|\$)" "$file"; then
            "${sudo_cmd[@]}" sed -i -E "/^Components:.*\bmain\b/ s/\$/ $component/" "$file"
            changed=1
        fi
    done
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        if grep -qE '^deb .* main' "$file" && ! grep -qE "^deb .*[[:space:]]$component([[:space:]]|\$)" "$file"; then
            "${sudo_cmd[@]}" sed -i -E "/^deb .* main/ s/\$/ $component/" "$file"
            changed=1
        fi
    done
    shopt -u nullglob
    echo "install-cuda-toolkit: '$component' component $([ $changed = 1 ] && echo enabled || echo already enabled)."
}

for component in "${components[@]}"; do enable_component "$component"; done
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends nvidia-cuda-toolkit

if have_nvcc && have_libcuda; then
    echo "install-cuda-toolkit: installed: $(nvcc --version | tail -n 1)"
else
    echo "install-cuda-toolkit: nvidia-cuda-toolkit installed, but nvcc or libcuda.so is still missing." >&2
    exit 1
fi
