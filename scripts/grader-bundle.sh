#!/usr/bin/env bash
# Builds, here (no GPU needed), the grader's own GPU check: the grader and
# its test class (every solution, every stub, a mutant per classic bug and
# correct variants: grader::mutants), built by `grader build`, in
# grader-bundle/. On the GPU machine, grader-bundle/run.sh grades the class
# and verifies every expectation (no cargo needed there);
# grader-bundle/instructor.sh grades the instructor's four-student class
# (scripts/instructor-class.sh) and prints its Canvas and Moodle exports.
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
# The instructor's four-student class (issue 14), graded by instructor.sh.
scripts/instructor-class.sh "$class/instructor"
target/release/grader build "$class/instructor/submissions" --seed 14 --bundle "$out/instructor" --target-dir target/grader-class
target/release/grader similarity "$class/instructor/submissions" --out "$out/instructor"
cp "$class/instructor/roster.csv" "$out/instructor/"
rm -rf "$class" "$out/class/.build" "$out/instructor/.build"
cp target/release/grader "$out/"
strip "$out"/class/bin/* "$out"/instructor/bin/* "$out/grader"
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
cat >"$out/instructor.sh" <<'RUN'
#!/usr/bin/env bash
# Grades the instructor's four-student class on this GPU and prints the
# summary and the Canvas and Moodle gradebooks' first lines.
# Usage: instructor.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
"$here/grader" run "$here/instructor" --timeout 120 --out "$out"
for lms in canvas moodle; do
    "$here/grader" export "$out" --lms "$lms" --roster "$here/instructor/roster.csv"
    head -n 4 "$out/$lms.csv"
done
RUN
chmod +x "$out/instructor.sh"
echo "grader-bundle: $(ls "$out/class/bin" | wc -l) binaries, $(du -sh "$out" | cut -f1) in $out/"
