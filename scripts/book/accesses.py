#!/usr/bin/env python3
"""Draws the course book's access pictures: each is an exercise binary's own
`--accesses FILE` on the CPU emulator, for a solution's kernel or a classic
mistake made in one (scripts/book/mistakes/, loaded in the solution's place
as the grader loads a student's kernel), so the pictures are the course's
kernels as the emulator runs them, and change when those do.

Usage:
  python3 scripts/book/accesses.py           write docs/src/figures/accesses-*.svg
  python3 scripts/book/accesses.py --check   exit 1 if a committed picture is
                                             not what the binaries draw now (CI)

Builds the solutions it runs and the emulator's library (a no-op when they
are up to date), and needs nvcc for the mistakes. Python standard library only.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "src" / "figures"
MISTAKES = Path(__file__).resolve().parent / "mistakes"
FIX = "python3 scripts/book/accesses.py"
# As kernels::nvcc compiles a kernel.cu (DEFAULT_ARCH, line info).
NVCC_FLAGS = ["--ptx", "-arch=compute_75", "-lineinfo", "-std=c++17"]

# picture: (the solution's package, its flags, a mistake's kernel or None).
FIGURES = {
    "accesses-vecadd.svg": (
        "vecadd-anyN-solution", ["--n", "2000", "--threads", "128", "--blocks", "2"], None),
    "accesses-vecadd-no-loop.svg": (
        "vecadd-anyN-solution", ["--n", "1000", "--threads", "128", "--blocks", "2"],
        "vecadd-no-loop.cu"),
    "accesses-vecadd-run-per-thread.svg": (
        "vecadd-anyN-solution", ["--n", "2000", "--threads", "128", "--blocks", "2"],
        "vecadd-run-per-thread.cu"),
    "accesses-dot-sm.svg": (
        "dot-sm-solution", ["--n", "4096", "--threads", "128", "--blocks", "8"], None),
    "accesses-matmul-tiled.svg": (
        "matmul-tiled-solution", ["--width", "64", "--tile", "32"], None),
    "accesses-matmul-tiled-transposed.svg": (
        "matmul-tiled-solution", ["--width", "64", "--tile", "32"],
        "matmul-tiled-transposed.cu"),
    "accesses-memspace.svg": (
        "memspace-timing-solution", ["--threads", "64", "--blocks", "2"], None),
}


def ptx_of(mistake, scratch):
    """The PTX of a mistake's kernel, compiled as a kernel.cu is, so the
    emulator names its lines kernel.cu:N."""
    folder = scratch / mistake.removesuffix(".cu")
    folder.mkdir()
    shutil.copy(MISTAKES / mistake, folder / "kernel.cu")
    subprocess.run(["nvcc", *NVCC_FLAGS, "-o", "kernel.ptx", "kernel.cu"],
                   cwd=folder, check=True)
    return folder / "kernel.ptx"


def draw(package, flags, mistake, scratch):
    """The picture the solution's binary draws with `flags`."""
    picture = scratch / f"{package}-{mistake or 'solution'}.svg"
    env = dict(os.environ, CUDA_COURSE_EMULATOR="1", CUDA_COURSE_EMULATOR_SAID="1")
    env.pop("CUDA_COURSE_KERNEL_PTX", None)
    if mistake:
        env["CUDA_COURSE_KERNEL_PTX"] = str(ptx_of(mistake, scratch))
    binary = ROOT / "target" / "debug" / package
    command = [str(ROOT / "scripts" / "cuda-runner"), str(binary), *flags,
               "--runs", "1", "--accesses", str(picture)]
    # A mistake's run fails its check (exit 1) and still draws.
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if not picture.exists():
        sys.exit(f"accesses: {' '.join(command[1:])} drew nothing (exit {run.returncode}):\n"
                 f"{run.stderr}")
    return picture.read_text(encoding="utf-8")


def main():
    check = "--check" in sys.argv[1:]
    # The emulator too: the binaries load its library, and nothing they
    # link rebuilds it when its recording changes.
    packages = sorted({f"-p{package}" for package, _, _ in FIGURES.values()} | {"-pemulator"})
    subprocess.run(["cargo", "build", "--quiet", *packages], cwd=ROOT, check=True)
    stale = []
    with tempfile.TemporaryDirectory(prefix="cuda-course-accesses-") as scratch:
        for name, (package, flags, mistake) in FIGURES.items():
            picture = draw(package, flags, mistake, Path(scratch))
            path = OUT / name
            if path.exists() and path.read_text(encoding="utf-8") == picture:
                continue
            if check:
                stale.append(name)
            else:
                path.write_text(picture, encoding="utf-8")
                print(f"accesses: wrote {path.relative_to(ROOT)}")
    for name in stale:
        print(f"accesses: docs/src/figures/{name} is not what the binaries draw; run {FIX}")
    if check:
        print(f"accesses: {len(FIGURES) - len(stale)} passed, {len(stale)} failed")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
