"""GFLOP/s of the course's matmul solutions and of cuBLAS SGEMM with TF32 off
(through PyTorch), measured in one run on this GPU.

Usage, on the GPU machine: python3 matmul_vs_cublas.py BUNDLE_DIR [WIDTH ...]
(BUNDLE_DIR from scripts/gpu-bundle.sh; widths default to 1024 2048 4096).
The solutions time their kernel with CUDA events, 1 warm-up, median of 20,
and check every entry; cuBLAS is timed the same way and its result compared
with a float64 product (TF32 would be off by about 1e-3; full float32 by
about 1e-6).
"""
import json
import statistics
import subprocess
import sys

import torch

RUNS = 20


def course(bundle, exe, flag, block, width):
    args = [f"{bundle}/{exe}", "--width", str(width), flag, str(block), "--runs", str(RUNS), "--json"]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    report = json.loads(out.stdout)
    if not report["check"]["passed"]:
        raise SystemExit(f"{exe} failed its check at width {width}: {report['check']}")
    return report["gflop_per_s"]


def cublas(width):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    a = torch.randn(width, width, device="cuda")
    b = torch.randn(width, width, device="cuda")
    c = torch.empty_like(a)
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b, out=c)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    reference = a.double() @ b.double()
    error = ((c.double() - reference).norm() / reference.norm()).item()
    if error > 1e-5:
        raise SystemExit(f"cuBLAS relative error {error:.1e}: TF32 seems on")
    return 2 * width**3 / (statistics.median(times) * 1e6), error


def main():
    bundle = sys.argv[1]
    widths = [int(w) for w in sys.argv[2:]] or [1024, 2048, 4096]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, median of {RUNS} runs, GFLOP/s = 2W^3/t")
    print(f"{'W':>5} {'naive 16x16':>12} {'tiled 16':>9} {'tiled 32':>9} {'cuBLAS':>9}"
          f" {'t16/naive':>10} {'t32/naive':>10} {'t32/cuBLAS':>11}")
    for width in widths:
        naive = course(bundle, "matmul-naive-solution", "--block", 16, width)
        tiled16 = course(bundle, "matmul-tiled-solution", "--tile", 16, width)
        tiled32 = course(bundle, "matmul-tiled-solution", "--tile", 32, width)
        peer, error = cublas(width)
        print(f"{width:>5} {naive:>12.0f} {tiled16:>9.0f} {tiled32:>9.0f} {peer:>9.0f}"
              f" {tiled16 / naive:>10.2f} {tiled32 / naive:>10.2f} {tiled32 / peer:>11.3f}"
              f"   (cuBLAS error vs f64 {error:.1e})")


if __name__ == "__main__":
    main()
