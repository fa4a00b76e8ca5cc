#!/usr/bin/env python3
"""Draws the course book's pictures: diagrams from code, plots from the
committed CSV data in docs/data/ (H100 numbers; replace a CSV's rows with
another GPU's and rerun to plot those).

Usage:
  python3 scripts/book/figures.py           write docs/src/figures/*.svg
  python3 scripts/book/figures.py --check   exit 1 if a committed SVG is not
                                            what this script draws (CI)
Python standard library only. The streams timeline
(docs/src/streams-overlap/timeline-h100.svg) is not drawn here: the
exercise draws it itself (`--timeline FILE`); nor are the access pictures
(docs/src/figures/accesses-*.svg), which the exercises' binaries draw
(`--accesses FILE`, through scripts/book/accesses.py).
"""

import csv
import sys
from pathlib import Path

# No __pycache__ beside the scripts: git would see it as a new folder.
sys.dont_write_bytecode = True
import accesses  # noqa: E402 (after the line above, on purpose)
import svg  # noqa: E402
from svg import INK, PALETTE, Canvas

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "data"
OUT = ROOT / "docs" / "src" / "figures"
FIX = "python3 scripts/book/figures.py"
PALE = ["#cfe3f3", "#f8e2b5", "#c4ebdd"]


def table(name):
    """A CSV of docs/data as (header, rows), its `#` lines skipped."""
    with open(DATA / name, encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = list(csv.reader(lines))
    return rows[0], rows[1:]


def columns(name):
    """A CSV as its first column (labels) and the other columns as floats."""
    header, rows = table(name)
    labels = [row[0] for row in rows]
    series = [(header[c], [float(row[c]) for row in rows]) for c in range(1, len(header))]
    return labels, series


# --- Diagrams ------------------------------------------------------------------


def grid_stride():
    """Three blocks of four threads covering 30 elements in three passes."""
    blocks, threads, n = 3, 4, 30
    grid = blocks * threads
    cell = 22
    c = Canvas(760, 250, "A grid-stride loop: 3 blocks of 4 threads over 30 elements")
    c.text(380, 22, "Grid-stride loop: 3 blocks × 4 threads = 12 threads, n = 30", 15, "middle", bold=True)
    # The grid, block by block.
    for b in range(blocks):
        x = 40 + b * (threads * cell + 30)
        c.rect(x - 4, 44, threads * cell + 8, 44, PALE[b], stroke=PALETTE[b])
        c.text(x + threads * cell / 2, 58, f"block {b}", 11, "middle")
        for t in range(threads):
            c.rect(x + t * cell, 64, cell - 2, 20, PALETTE[b])
            c.text(x + t * cell + cell / 2 - 1, 78, b * threads + t, 11, "middle", fill="white")
    c.text(460, 70, "thread t = blockIdx.x · blockDim.x + threadIdx.x", 12)
    c.text(460, 86, "stride G = blockDim.x · gridDim.x = 12", 12)
    # The array, each element coloured by the block whose thread writes it.
    top = 130
    for i in range(n):
        x = 40 + i * cell
        t = i % grid
        b = t // threads
        c.rect(x, top, cell - 2, 26, PALETTE[b])
        c.text(x + cell / 2 - 1, top + 17, t, 11, "middle", fill="white")
        c.text(x + cell / 2 - 1, top + 42, i, 10, "middle")
    c.text(40, top - 8, "c[i], labelled with the thread that writes it", 12)
    c.text(40 + n * cell + 6, top + 42, "i", 11)
    for p in range(3):
        start = 40 + p * grid * cell
        end = 40 + min((p + 1) * grid, n) * cell - 2
        c.line(start, top + 54, end, top + 54, stroke=INK)
        c.line(start, top + 50, start, top + 58)
        c.line(end, top + 50, end, top + 58)
        label = [f"pass 1: i = t", f"pass 2: i = t + 12", "pass 3: i = t + 24"][p]
        c.text((start + end) / 2, top + 72, label, 12, "middle")
    c.text(40 + 24 * cell, top + 90, "threads 6–11 stop: t + 24 ≥ 30", 11)
    return c.svg()


def reduction_tree():
    """Eight threads add their sums in shared memory, halving each step."""
    slots, cell, gap = 8, 56, 70
    values = [3, 1, 4, 1, 5, 9, 2, 6]
    c = Canvas(800, 420, "A tree reduction in shared memory with a barrier after every step")
    c.text(400, 22, "Tree reduction in a block of 8 threads", 15, "middle", bold=True)
    left, top = 190, 50
    rows = [values]
    while len(rows[-1]) > 1:
        half = len(rows[-1]) // 2
        rows.append([rows[-1][i] + rows[-1][i + half] for i in range(half)])
    labels = ["cache[t] = sum", "t < 4: += cache[t + 4]", "t < 2: += cache[t + 2]", "t < 1: += cache[t + 1]"]
    for r, row in enumerate(rows):
        y = top + r * (gap + 20)
        c.text(left - 12, y + 22, labels[r], 12, "end")
        for s in range(slots):
            live = s < len(row)
            c.rect(left + s * cell, y, cell - 6, 34, PALETTE[0] if live else "#eeeeee",
                   stroke="none" if live else "#cccccc")
            c.text(left + s * cell + (cell - 6) / 2, y + 22, row[s] if live else "", 13, "middle",
                   fill="white")
        if r + 1 < len(rows):
            half = len(rows[r + 1])
            for s in range(half):
                for source in (s, s + half):
                    c.line(left + source * cell + (cell - 6) / 2, y + 36,
                           left + s * cell + (cell - 6) / 2, y + gap + 18, stroke=INK, arrow=True)
        bar = y + 34 + (gap + 20 - 34) / 2 - 4
        if r + 1 < len(rows):
            c.line(left - 10, bar, left + slots * cell, bar, stroke=PALETTE[5], width=2, dash="8,5")
            c.text(left + slots * cell + 4, bar + 4, "__syncthreads()", 12, fill=PALETTE[5])
    c.text(left, top + 3 * (gap + 20) + 60, "slot 0 holds the block's total, 31, after log₂ 8 = 3 steps;", 12)
    c.text(left, top + 3 * (gap + 20) + 76, "no thread reads a slot before the barrier that follows its write", 12)
    for s in range(slots):
        c.text(left + s * cell + (cell - 6) / 2, top - 6, f"t = {s}", 11, "middle")
    return c.svg()


def tiles():
    """Tiles of M and N staged through shared memory for one tile of P."""
    c = Canvas(760, 470, "Tiled matrix multiplication: tiles of M and N through shared memory")
    c.text(380, 22, "One block computes one tile of P, one phase at a time", 15, "middle", bold=True)
    k, size = 4, 34  # tiles per side, pixels per tile
    n_x, n_y = 250, 50  # N, top right
    m_x, m_y = 60, 50 + k * size + 30  # M, bottom left
    p_x, p_y = n_x, m_y  # P, bottom right
    tile_row, tile_col, phase = 1, 2, 1

    def matrix(x, y, name, mark):
        for i in range(k):
            for j in range(k):
                fill, text = mark(i, j)
                c.rect(x + j * size, y + i * size, size - 2, size - 2, fill)
                if text:
                    c.text(x + j * size + size / 2 - 1, y + i * size + size / 2 + 4, text, 11, "middle")
        c.text(x + k * size / 2, y - 8 if name == "N" else y + k * size + 18, name, 14, "middle", bold=True)

    def m_mark(i, j):
        if i != tile_row:
            return "#eeeeee", ""
        return (PALETTE[1] if j == phase else PALE[1]), f"p{j}"

    def n_mark(i, j):
        if j != tile_col:
            return "#eeeeee", ""
        return (PALETTE[2] if i == phase else PALE[2]), f"p{i}"

    def p_mark(i, j):
        return (PALETTE[0], "") if (i, j) == (tile_row, tile_col) else ("#eeeeee", "")

    matrix(n_x, n_y, "N", n_mark)
    matrix(m_x, m_y, "M", m_mark)
    matrix(p_x, p_y, "P", p_mark)
    # Shared memory on the right, with the phase's two tiles.
    s_x, s_y = 480, 150
    c.rect(s_x - 10, s_y - 30, 250, 150, "#f6f6f6", stroke="#999999")
    c.text(s_x + 115, s_y - 12, "shared memory (one block)", 12, "middle")
    c.rect(s_x, s_y, 100, 70, PALETTE[1])
    c.text(s_x + 50, s_y + 40, "m_tile", 13, "middle", fill="white")
    c.rect(s_x + 125, s_y, 100, 70, PALETTE[2])
    c.text(s_x + 175, s_y + 40, "n_tile", 13, "middle", fill="white")
    c.text(s_x + 112, s_y + 100, "each read TILE times", 11, "middle")
    c.line(m_x + phase * size + size / 2, m_y + tile_row * size + 4, s_x + 30, s_y + 70, arrow=True)
    c.line(n_x + tile_col * size + size - 2, n_y + phase * size + size / 2, s_x + 150, s_y, arrow=True)
    c.line(s_x + 110, s_y + 110, p_x + tile_col * size + size / 2, p_y + tile_row * size + 6, arrow=True)
    notes = [
        "phase p: every thread loads one element of M's tile p and one of N's,",
        "__syncthreads(), then adds TILE products from shared memory,",
        "__syncthreads() again before phase p + 1 overwrites the tiles.",
        "Shown: phase 1 of 4. Each element leaves global memory W / TILE times, not W.",
    ]
    for i, note in enumerate(notes):
        c.text(60, 395 + 18 * i, note, 12)
    return c.svg()


def coalescing():
    """The addresses one warp's 32 threads touch at one step, three ways."""
    c = Canvas(760, 440, "Which addresses a warp touches: in order, strided, rotated")
    c.text(380, 22, "One warp's 32 loads at one step (4-byte floats; a box = 32 bytes)", 15, "middle", bold=True)
    cases = [
        ("stride 32, offset 0: one 128-byte run, in thread order", lambda t: t),
        ("stride 8: four runs of 8, far apart: 4 separate segments", lambda t: (t // 8) * 64 + t % 8),
        ("stride 32, offset 1: the same 128 bytes, threads rotated by one", lambda t: (t + 1) % 32),
    ]
    w = 18
    for row, (label, address) in enumerate(cases):
        y = 60 + row * 130
        c.text(30, y, label, 12.5, bold=True)
        for t in range(32):
            c.rect(30 + t * w, y + 10, w - 2, 16, PALETTE[0])
        c.text(30 + 32 * w + 8, y + 23, "threads 0–31", 11)
        addresses = [address(t) for t in range(32)]
        # Memory drawn as segments of 8 floats; only touched segments and gaps.
        segments = sorted({a // 8 for a in addresses})
        x = 30
        seg_x = {}
        for i, s in enumerate(segments):
            if i and s != segments[i - 1] + 1:
                c.text(x + 4, y + 84, "…", 14)
                x += 24
            seg_x[s] = x
            c.rect(x, y + 70, 8 * w - 2, 18, PALE[0], stroke=PALETTE[0])
            c.text(x + 4 * w, y + 103, f"floats {s * 8}–{s * 8 + 7}", 10, "middle")
            x += 8 * w
        for t, a in enumerate(addresses):
            ax = seg_x[a // 8] + (a % 8) * w + w / 2 - 1
            c.line(30 + t * w + w / 2 - 1, y + 27, ax, y + 69, stroke=PALETTE[5], width=0.8)
    return c.svg()


# --- Plots from docs/data ------------------------------------------------------


def vecadd_variants():
    labels, series = columns("vecadd-variants.csv")
    return svg.bars("vecadd variants on an H100, n = 2^28 (axis from 0.8)", labels, series,
                    "fraction of copy bandwidth", width=720, reference=(1.0, "copy"), floor=0.8)


def dot_bandwidth():
    labels, series = columns("dot-bandwidth.csv")
    gbs = [s for s in series if s[0] == "GB/s"]
    return svg.bars("Kernel bandwidth on an H100, n = 2^28", labels, gbs, "GB/s", width=720,
                    reference=(gbs[0][1][0], "vecadd-anyN = 1.000 x copy"), labels=True)


def dot_gm_steps():
    labels, series = columns("dot-gm-steps.csv")
    return svg.bars("dot-gm end to end on an H100, n = 2^28", labels, series, "ms", labels=True)


def dot_atomic_sweep():
    header, rows = table("dot-atomic-sweep.csv")
    xs = [int(row[0]) for row in rows]
    series = [(header[c], [float(row[c]) for row in rows]) for c in (2, 3)]
    return svg.lines("dot-atomic --sweep on an H100, n = 32M, 512 threads", xs, series,
                     "blocks (each thread loops n / (blocks · 512) times)", "GB/s", width=720)


def matmul():
    labels, series = columns("matmul.csv")
    return svg.bars("P = M × N on an H100", [f"W = {w}" for w in labels], series, "GFLOP/s", width=720)


def memspace():
    labels, series = columns("memspace.csv")
    return svg.bars("One sum read from each memory space, H100 (log scale)", labels, series,
                    "kernel ms", log=True, width=680)


def streams_work():
    header, rows = table("streams-work.csv")
    xs = [int(row[0]) for row in rows]
    stages = [[float(v) for v in row[1:4]] for row in rows]
    chunks = 32  # 4 streams × 8 chunks
    serial = [sum(s) for s in stages]
    bound = [max(s) + (sum(s) - max(s)) / chunks for s in stages]
    overlapped = [float(row[4]) for row in rows]
    series = [("one stream", serial), ("4 streams", overlapped), ("perfect overlap", bound)]
    return svg.lines("streams-overlap on an H100: time against --work", xs, series,
                     "--work (steps per element)", "ms", width=720, log_x=False)


FIGURES = {
    "grid-stride.svg": grid_stride,
    "reduction-tree.svg": reduction_tree,
    "tiles.svg": tiles,
    "coalescing.svg": coalescing,
    "vecadd-variants.svg": vecadd_variants,
    "dot-bandwidth.svg": dot_bandwidth,
    "dot-gm-steps.svg": dot_gm_steps,
    "dot-atomic-sweep.svg": dot_atomic_sweep,
    "matmul.svg": matmul,
    "memspace.svg": memspace,
    "streams-work.svg": streams_work,
}


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    OUT.mkdir(parents=True, exist_ok=True)
    for name, draw in FIGURES.items():
        path = OUT / name
        picture = draw()
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != picture:
                stale.append(name)
        elif not path.exists() or path.read_text(encoding="utf-8") != picture:
            path.write_text(picture, encoding="utf-8")
            print(f"figures: wrote {path.relative_to(ROOT)}")
    extra = sorted(
        p.name for p in OUT.glob("*.svg") if p.name not in FIGURES and p.name not in accesses.FIGURES
    )
    for name in stale:
        print(f"figures: docs/src/figures/{name} is not what the script draws; run {FIX}")
    for name in extra:
        print(f"figures: docs/src/figures/{name} is drawn by nothing; remove it or add it to FIGURES")
    if check:
        print(f"figures: {len(FIGURES) - len(stale)} passed, {len(stale) + len(extra)} failed")
    return 1 if stale or extra else 0


if __name__ == "__main__":
    sys.exit(main())
