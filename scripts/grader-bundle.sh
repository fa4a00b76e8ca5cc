#!/usr/bin/env bash
# Builds, here (no GPU needed), the grader's own GPU check: the grader and
# its test class (every solution, every stub, a mutant per classic bug and
# correct variants: grader::mutants), built by `grader build`, in
# grader-bundle/. On the GPU machine, grader-bundle/run.sh grades the class
# and verifies every expectation (no cargo needed there).
# Usage: scripts/grader-bundle.sh [OUT_DIR]   (default grader-bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-grader-bundle}

cargo build --release -p grader
rm -rf "$out"
mkdir -p "$out"
class=$(mktemp -d)
target/release/grader mutants write "$class/submissions"
target/release/grader build "$class/submissions" --seed 2026 --bundle "$out/class" --target-dir target/grader-class
rm -rf "$class" "$out/class/.build"
cp target/release/grader "$out/"
strip "$out"/class/bin/* "$out/grader"
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Grades the class on this GPU, then checks every expectation: solutions
# full marks, stubs none, each mutant caught, each variant passing.
# Usage: run.sh [OUT_DIR [GRADER_RUN_FLAGS...]], e.g. run.sh out --sanitize
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
shift || true
"$here/grader" run "$here/class" --timeout 120 --out "$out" "$@"
"$here/grader" mutants verify "$out"
RUN
chmod +x "$out/run.sh"
echo "grader-bundle: $(ls "$out/class/bin" | wc -l) binaries, $(du -sh "$out" | cut -f1) in $out/"
