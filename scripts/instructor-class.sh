#!/usr/bin/env bash
# Writes the four-student class an instructor meets first into
# DIR/submissions, with a roster in DIR/roster.csv: ada handed in a copy of
# her whole workspace (every exercise solved, and the course's solutions/
# beside them), bo bare copies of two solutions, cy the stubs as they came,
# dee a dot-sm whose kernel does not compile. The roster also lists eve,
# who handed in nothing. Grade it with `grader grade DIR/submissions --out DIR/grading`
# and export with `grader export DIR/grading --lms canvas --roster
# DIR/roster.csv`.
# Usage: scripts/instructor-class.sh DIR
set -euo pipefail
course=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: scripts/instructor-class.sh DIR}
class="$dir/submissions"
rm -rf "$class"
mkdir -p "$class"

# ada: the workspace, as a student who solved everything would zip it.
ws="$class/ada/cuda-course"
mkdir -p "$ws/exercises"
cp "$course/Cargo.toml" "$course/Cargo.lock" "$ws/"
cp -r "$course/kernels" "$course/solutions" "$ws/"
for exercise in "$course"/exercises/*/; do
    name=$(basename "$exercise")
    mkdir -p "$ws/exercises/$name"
    cp "$exercise/Cargo.toml" "$exercise/build.rs" "$ws/exercises/$name/"
    cp -r "$course/solutions/$name/src" "$ws/exercises/$name/"
done

# bo: two solutions as bare folders.
for name in vecadd-anyN dot-sm; do
    mkdir -p "$class/bo/$name"
    cp -r "$course/solutions/$name/src" "$class/bo/$name/"
done

# cy: every stub, untouched.
mkdir -p "$class/cy"
for exercise in "$course"/exercises/*/; do
    name=$(basename "$exercise")
    mkdir -p "$class/cy/$name"
    cp -r "$exercise/src" "$class/cy/$name/"
done

# dee: dot-sm with a kernel that does not compile.
mkdir -p "$class/dee/dot-sm"
cp -r "$course/solutions/dot-sm/src" "$class/dee/dot-sm/"
sed -i 's/float sum = 0.0f;/float sum = 0.0f; undeclared_thing;/' "$class/dee/dot-sm/src/kernel.cu"
grep -q undeclared_thing "$class/dee/dot-sm/src/kernel.cu"

cat >"$dir/roster.csv" <<'ROSTER'
folder,name,lms_id,sis_user_id,sis_login_id,email,username,id_number,section
ada,"Lovelace, Ada",1001,S1001,ada,ada@example.edu,ada,S1001,CUDA-01
bo,Bo Diddley,1002,S1002,bo,bo@example.edu,bo,S1002,CUDA-01
cy,Cy Young,1003,S1003,cy,cy@example.edu,cy,S1003,CUDA-02
dee,Dee Dee Ramone,1004,S1004,dee,dee@example.edu,dee,S1004,CUDA-02
eve,Eve Arden,1005,S1005,eve,eve@example.edu,eve,S1005,CUDA-02
ROSTER
echo "instructor-class: 4 students in $class, roster in $dir/roster.csv"
