#!/usr/bin/env bash
# The solutions' PTX as the GPU machine's nvcc 13 compiled it
# (emulator/tests/ptx/nvcc13/, VERSION beside it) runs on the CPU emulator:
# each solution is built with a stand-in nvcc that hands back that PTX instead
# of compiling kernel.cu, then runs at its emulator default sizes and must pass
# its own check (exit 0). The course's nvcc 11.8 PTX is emulated-suite.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."

ptx_dir="$PWD/emulator/tests/ptx/nvcc13"
fake="$(mktemp -d)"
trap 'rm -rf "$fake"' EXIT
cat >"$fake/nvcc" <<'NVCC'
#!/usr/bin/env bash
# Stand-in nvcc: copies the crate's nvcc 13 PTX to the path after -o.
out=""
while [[ $# -gt 0 ]]; do
    [[ "$1" == -o ]] && out="$2"
    shift
done
cp "$NVCC13_PTX_DIR/${CARGO_PKG_NAME%-solution}.ptx" "$out"
NVCC
chmod +x "$fake/nvcc"

packages=()
for dir in solutions/*/; do
    packages+=(-p "$(basename "$dir")-solution")
done
cargo build --quiet -p emulator
NVCC13_PTX_DIR="$ptx_dir" PATH="$fake:$PATH" CUDA_PATH="$fake/none" \
    cargo build --quiet --target-dir target/nvcc13-ptx "${packages[@]}"

mkdir -p "$fake/lib"
ln -s "$PWD/target/debug/libemulator.so" "$fake/lib/libcuda.so.1"
for dir in solutions/*/; do
    name="$(basename "$dir")"
    # The binary embeds the PTX it was built with: nvcc 13's, unchanged.
    embedded="$(find target/nvcc13-ptx/debug/build -path "*/$name-solution-*/out/kernel.ptx" | head -n 1)"
    cmp -s "$embedded" "$ptx_dir/$name.ptx"
    echo "emulated-nvcc13: $name-solution with nvcc 13's PTX"
    LD_LIBRARY_PATH="$fake/lib" "target/nvcc13-ptx/debug/$name-solution" --runs 1 |
        grep -E '^(check|parameters)'
done
echo "emulated-nvcc13: passed"
