#!/usr/bin/env bash
# The CPU emulator's hardware counters (kernels::emulator_counters) beside
# Nsight Compute's, launch by launch: the eight solutions' kernels and
# kernels made uncoalesced, bank-conflicting and divergent
# (counters/cases.txt). Each case is one launch of one kernel by
# counters/probe.c, a driver-API program that runs the same on a GPU under
# `ncu` and here on the emulator; the PTX is compiled by the nvcc at hand
# for compute_75.
#
#   Here (nvcc, cc and cargo; writes counters/emulator.txt, to commit):
#     bench/harness/counters-vs-ncu.sh --emulator
#   On the GPU machine (nvcc, cc, ncu and python3; no Rust):
#     OUT=/some/folder bench/harness/counters-vs-ncu.sh
#   which writes $OUT/counters-vs-ncu.txt (the table), $OUT/ncu/*.csv and
#   $OUT/build/, and exits 1 when a figure is out of tolerance.
#
# Tolerance: memory counters (global requests and sectors, atomics, shared
# instructions and wavefronts) within 2% or 2, whichever is more: the same
# accesses, counted by their definitions; instructions differ (the
# emulator counts PTX, ncu SASS), so only the average active lanes
# (thread instructions over instructions) is judged, within 10%.
# Each ncu run is bounded by CASE_TIMEOUT seconds (default 120), and leaves
# the clocks alone (--clock-control none; counts do not depend on them).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/bench/harness/counters"
expected="$here/emulator.txt"
mode=${1:-gpu}
case_timeout=${CASE_TIMEOUT:-120}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out/build" "$out/ncu"

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" --version | tail -2 | tee "$out/build/nvcc.txt"
cc -O2 -o "$out/build/probe" "$here/probe.c" -ldl

# The cases, without comments: NAME SOURCE KERNEL GRID BLOCK SHARED ARGS...
cases() { grep -v '^\s*\(#\|$\)' "$here/cases.txt"; }

ptx_of() { # SOURCE: its PTX, compiled once
    local ptx
    ptx="$out/build/$(echo "$1" | tr '/' '_' | sed 's/\.cu$//').ptx"
    [[ -f "$ptx" ]] || "$nvcc" -ptx -lineinfo -arch=compute_75 "$root/$1" -o "$ptx"
    echo "$ptx"
}

if [[ "$mode" == --emulator ]]; then
    cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p emulator
    mkdir -p "$out/lib"
    ln -sfn "$root/target/release/libemulator.so" "$out/lib/libcuda.so.1"
    {
        echo "# The emulator's counters for counters/cases.txt, one launch each"
        echo "# (bench/harness/counters-vs-ncu.sh --emulator; PTX from $(tail -1 "$out/build/nvcc.txt"))."
        echo "# case inst lanes gld_req gld_sect gld_ideal gst_req gst_sect gst_ideal" \
            "atom_req atom_sect atom_ideal sld_req sld_wave sld_ideal sst_req sst_wave sst_ideal"
        while read -r name source kernel grid block shared args; do
            # shellcheck disable=SC2086
            line=$(LD_LIBRARY_PATH="$out/lib" CUDA_COURSE_EMULATOR_COUNTERS=1 \
                timeout "$case_timeout" "$out/build/probe" "$(ptx_of "$source")" "$kernel" \
                "$grid" "$block" "$shared" $args 2>&1 >/dev/null |
                grep '^cuda-course counters: launch ' | head -1)
            [[ -n "$line" ]] || { echo "counters-vs-ncu: $name counted nothing" >&2; exit 1; }
            echo "$line" | python3 -c '
import sys
name = sys.argv[1]
fields = dict(f.split("=", 1) for f in sys.stdin.read().split()[3:] if "=" in f)
row = [fields["inst"], fields["lanes"]]
for key in ("gld", "gst", "gatom", "sld", "sst"):
    row += fields[key].split("/")
print(name, *row)' "$name"
        done < <(cases)
    } > "$out/emulator.txt"
    cp "$out/emulator.txt" "$expected"
    grep -v "^#" "$expected" | column -t
    echo "counters-vs-ncu: wrote $expected"
    exit 0
fi

command -v ncu >/dev/null || { echo "counters-vs-ncu: no ncu here" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
ncu --version | tail -1 | tee -a "$out/device.txt"
metrics=(
    smsp__inst_executed.sum
    smsp__thread_inst_executed.sum
    l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
    l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
    l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
    l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
    l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum
    l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
    smsp__sass_inst_executed_op_shared_ld.sum
    smsp__sass_inst_executed_op_shared_st.sum
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
)
list=$(IFS=,; echo "${metrics[*]}")
while read -r name source kernel grid block shared args; do
    # shellcheck disable=SC2086
    timeout "$case_timeout" ncu --clock-control none --csv --print-units base --metrics "$list" \
        -k "regex:^${kernel}\$" -c 1 "$out/build/probe" "$(ptx_of "$source")" "$kernel" \
        "$grid" "$block" "$shared" $args > "$out/ncu/$name.csv" 2> "$out/ncu/$name.stderr" ||
        echo "counters-vs-ncu: ncu on $name failed ($?): $(tail -3 "$out/ncu/$name.stderr")" >&2
done < <(cases)

python3 - "$expected" "$out/ncu" <<'PY' | tee "$out/counters-vs-ncu.txt"
import csv, io, sys
expected, folder = sys.argv[1], sys.argv[2]
columns = ("inst lanes gld_req gld_sect gld_ideal gst_req gst_sect gst_ideal atom_req atom_sect "
           "atom_ideal sld_req sld_wave sld_ideal sst_req sst_wave sst_ideal").split()
emulator = {}
for line in open(expected):
    if line.startswith("#") or not line.strip():
        continue
    name, *values = line.split()
    emulator[name] = dict(zip(columns, map(int, values)))

def ncu(name):
    try:
        text = open(f"{folder}/{name}.csv").read()
    except OSError:
        return None
    rows = [l for l in text.splitlines() if l.startswith('"')]
    if not rows:
        return None
    table = list(csv.reader(io.StringIO("\n".join(rows))))
    head = table[0]
    metric, value = head.index("Metric Name"), head.index("Metric Value")
    return {r[metric]: float(r[value].replace(",", "")) for r in table[1:] if len(r) > value}

M = "l1tex__t_{}_pipe_lsu_mem_global_op_{}.sum"
W = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum"
C = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{}.sum"
S = "smsp__sass_inst_executed_op_shared_{}.sum"
compared = [
    # (label, emulator's figure, ncu's, tolerance: "memory" or "lanes" or None)
    ("global load requests", lambda e: e["gld_req"], lambda n: n[M.format("requests", "ld")], "memory"),
    ("global load sectors", lambda e: e["gld_sect"], lambda n: n[M.format("sectors", "ld")], "memory"),
    ("global store requests", lambda e: e["gst_req"], lambda n: n[M.format("requests", "st")], "memory"),
    ("global store sectors", lambda e: e["gst_sect"], lambda n: n[M.format("sectors", "st")], "memory"),
    ("global atomic requests", lambda e: e["atom_req"],
     lambda n: n[M.format("requests", "atom")] + n[M.format("requests", "red")], "memory"),
    ("shared load instructions", lambda e: e["sld_req"], lambda n: n[S.format("ld")], "memory"),
    ("shared load wavefronts", lambda e: e["sld_wave"], lambda n: n[W.format("ld")], "memory"),
    ("shared load conflicts", lambda e: e["sld_wave"] - e["sld_ideal"], lambda n: n[C.format("ld")], "memory"),
    ("shared store instructions", lambda e: e["sst_req"], lambda n: n[S.format("st")], "memory"),
    ("shared store wavefronts", lambda e: e["sst_wave"], lambda n: n[W.format("st")], "memory"),
    ("shared store conflicts", lambda e: e["sst_wave"] - e["sst_ideal"], lambda n: n[C.format("st")], "memory"),
    ("warp instructions", lambda e: e["inst"], lambda n: n["smsp__inst_executed.sum"], None),
    ("average active lanes", lambda e: e["lanes"] / max(e["inst"], 1),
     lambda n: n["smsp__thread_inst_executed.sum"] / max(n["smsp__inst_executed.sum"], 1), "lanes"),
]

def within(kind, mine, theirs):
    if kind == "memory":
        return abs(mine - theirs) <= max(2, 0.02 * max(abs(mine), abs(theirs)))
    if kind == "lanes":
        return abs(mine - theirs) <= 0.10 * max(mine, theirs)
    return True

bad = 0
print(f"{'case':<21} {'counter':<26} {'emulator':>12} {'ncu':>12}  verdict")
for name, mine in emulator.items():
    theirs = ncu(name)
    if theirs is None:
        print(f"{name:<21} {'(no ncu figures: see ncu/' + name + '.stderr)':<26}")
        bad += 1
        continue
    for label, e, n, kind in compared:
        try:
            a, b = e(mine), n(theirs)
        except KeyError as missing:
            print(f"{name:<21} {label:<26} ncu gave no {missing}")
            bad += 1
            continue
        if a == 0 and b == 0 and kind != "lanes":
            continue
        ok = within(kind, a, b)
        bad += not ok
        verdict = "shown only (PTX against SASS)" if kind is None else ("ok" if ok else "OUT OF TOLERANCE")
        print(f"{name:<21} {label:<26} {a:>12.1f} {b:>12.1f}  {verdict}")
print(f"\n{bad} figures out of tolerance (memory: 2% or 2; active lanes: 10%)")
sys.exit(1 if bad else 0)
PY
