#!/usr/bin/env bash
# Compiles the emulator's PTX corpus (emulator/tests/corpus/cu/*.cu) with the
# nvcc on PATH, as the course's build helper does (--ptx, compute_75,
# -lineinfo, C++17), into a folder (default emulator/tests/ptx/corpus, the
# nvcc 11.8 set). Each PTX file's first line is the digest of its source, so
# the corpus test finds PTX older than its source. A source nvcc rejects is
# named, the others are still compiled, and the exit status is 1.
#   scripts/corpus-ptx.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
src=emulator/tests/corpus/cu
out=${1:-emulator/tests/ptx/corpus}
mkdir -p "$out"
out=$(cd "$out" && pwd)
failed=()
for cu in "$src"/*.cu; do
    name=$(basename "$cu" .cu)
    # Compiled from inside the folder, so .file names the source alone.
    if (cd "$src" && nvcc --ptx -arch=compute_75 -lineinfo -std=c++17 -o "$out/$name.ptx.new" "$name.cu"); then
        {
            echo "// corpus source sha256 $(sha256sum "$cu" | cut -d' ' -f1)"
            cat "$out/$name.ptx.new"
        } >"$out/$name.ptx"
    else
        failed+=("$name.cu")
    fi
    rm -f "$out/$name.ptx.new"
done
echo "corpus-ptx: $(ls "$src"/*.cu | wc -l) sources, $(nvcc --version | tail -n 2 | head -n 1), into $out"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "corpus-ptx: nvcc rejected ${failed[*]}" >&2
    exit 1
fi
