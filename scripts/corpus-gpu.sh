#!/usr/bin/env bash
# The GPU side of the emulator's PTX corpus (emulator/tests/corpus/): on a
# machine with an NVIDIA GPU and nvcc but no Rust, compiles the corpus with
# that nvcc (the nvcc 13 set), runs every case of both PTX sets on the GPU
# with the corpus program built elsewhere, checks the subtle cases with
# compute-sanitizer, and packs what to commit into one tarball.
#
# Here (with Rust):
#   cargo test -p emulator --test corpus --no-run   # prints the executable
#   mkdir -p .corpus-carry && cp target/debug/deps/corpus-<hash> .corpus-carry/corpus
# There, from the repository's root (the carried folder beside it):
#   scripts/corpus-gpu.sh .corpus-carry/corpus OUT_DIR
# Then here: tar -xzf OUT_DIR/corpus.tar.gz -C emulator/tests
#   (gpu records: corpus/gpu-nvcc11.txt, ptx/nvcc13/corpus/{*.ptx,gpu.txt}).
set -uo pipefail
cd "$(dirname "$0")/.."
program=$(realpath "$1")
out=$(realpath "${2:-corpus-gpu}")
mkdir -p "$out"
root=emulator
nvidia-smi -L | tee "$out/device.txt"
nvcc --version | tail -n 2 | tee -a "$out/device.txt"

# The nvcc 13 set, into the tree the program reads.
scripts/corpus-ptx.sh "$root/tests/ptx/nvcc13/corpus" 2>&1 | tee "$out/nvcc13.txt"
nvcc --version | tail -n 2 | head -n 1 >"$root/tests/ptx/nvcc13/corpus/VERSION"

for set in nvcc11 nvcc13; do
    "$program" record --root "$root" --driver libcuda.so.1 --set "$set" \
        --out "$out/gpu-$set.txt" >"$out/run-$set.txt" 2>"$out/run-$set.err"
    echo "corpus-gpu: $set: exit $?, $(grep -c '^== ' "$out/gpu-$set.txt") records"
done

# NVIDIA's own tools on the cases whose correctness is subtle (warp-level
# synchronisation, unwritten shared memory read and discarded, atomics that
# order blocks): each must be clean.
subtle=(warp:syncwarp_tail warp:syncwarp_masks coop:cg_dynamic_tile shared:matmul_unwritten_rows
    shared:matmul_partial_tiles atomics:atomic_exch_cas atomics:last_block_sum
    atomics:warp_aggregated_atomic shared:dynamic_carved)
for tool in racecheck synccheck initcheck memcheck; do
    for pair in "${subtle[@]}"; do
        source=${pair%%:*}
        case=${pair##*:}
        timeout 60 compute-sanitizer --tool "$tool" --print-limit 10 \
            "$program" one --driver libcuda.so.1 --case "$case" --out /dev/null \
            --ptx "$root/tests/ptx/corpus/$source.ptx" --source "$root/tests/corpus/cu/$source.cu" \
            >>"$out/sanitizer-$tool.txt" 2>&1
        echo "$case: exit $?" >>"$out/sanitizer-$tool.txt"
    done
    clean=$(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$out/sanitizer-$tool.txt")
    echo "corpus-gpu: compute-sanitizer $tool: $clean of ${#subtle[@]} cases clean"
done

mkdir -p "$out/pack/corpus" "$out/pack/ptx/nvcc13/corpus"
cp "$out/gpu-nvcc11.txt" "$out/pack/corpus/"
cp "$root"/tests/ptx/nvcc13/corpus/*.ptx "$root/tests/ptx/nvcc13/corpus/VERSION" "$out/pack/ptx/nvcc13/corpus/"
cp "$out/gpu-nvcc13.txt" "$out/pack/ptx/nvcc13/corpus/gpu.txt"
mkdir -p "$out/pack/logs"
cp "$out"/*.txt "$out"/*.err "$out/pack/logs/" 2>/dev/null
tar -czf "$out/corpus.tar.gz" -C "$out/pack" .
echo "corpus-gpu: $(du -h "$out/corpus.tar.gz" | cut -f1) in $out/corpus.tar.gz"
