#!/usr/bin/env bash
# Compiles the PTX-style test kernels (kernels/tests/ptx_styles/*.cu: correct
# kernels of each exercise written with cooperative groups, warp shuffles,
# __syncwarp tails, inline PTX, other atomics and vector loads, and a few
# wrong ones) to PTX with the nvcc on PATH, as the course's build does
# (compute_75, -lineinfo, C++17), into OUT_DIR/<name>.ptx with nvcc's
# version in OUT_DIR/VERSION. Each PTX file's first line is the digest of
# its source, so the test finds PTX older than its source.
# kernels/tests/ptx_styles.rs checks every folder of PTX under
# kernels/tests/ptx_styles/ against the catalogue's needs.
#
# Here (nvcc 11.8):  scripts/ptx-styles.sh kernels/tests/ptx_styles/nvcc11.8
# On the GPU machine, which has nvcc 13 and no Rust, through the device tool:
#   scripts/ptx-styles.sh "$OUT/nvcc13"
# then copy the files back to kernels/tests/ptx_styles/nvcc13/.
# Usage: scripts/ptx-styles.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ]; then
    echo "usage: scripts/ptx-styles.sh OUT_DIR   (a folder for the .ptx files)" >&2
    exit 2
fi
out=$1
nvcc=${NVCC:-nvcc}
# A GPU machine may have the toolkit off PATH.
if ! command -v "$nvcc" >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    nvcc=/usr/local/cuda/bin/nvcc
fi
command -v "$nvcc" >/dev/null || {
    echo "ptx-styles: no nvcc on PATH (set NVCC to its path)" >&2
    exit 2
}
mkdir -p "$out"
out=$(cd "$out" && pwd)
"$nvcc" --version | tail -n 2 >"$out/VERSION"

# From the sources' folder, so the PTX's .file lines name the file alone.
cd kernels/tests/ptx_styles
count=0
for source in *.cu; do
    ptx="$out/${source%.cu}.ptx"
    "$nvcc" --ptx -arch=compute_75 -lineinfo -std=c++17 -o "$ptx.new" "$source"
    {
        echo "// ptx-style source sha256 $(sha256sum "$source" | cut -d' ' -f1)"
        cat "$ptx.new"
    } >"$ptx"
    rm "$ptx.new"
    count=$((count + 1))
done
echo "ptx-styles: $count kernels compiled by $(head -n 1 "$out/VERSION") into $out"
