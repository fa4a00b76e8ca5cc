"""Drawing SVG for the course book: a canvas of shapes and text, and two
charts (grouped bars, lines on a log-2 axis). Python standard library only.

Output is deterministic (fixed number formats, no timestamps), so a rerun on
the same data writes the same bytes and CI can compare them.
"""

import math
from xml.sax.saxutils import escape

# Colour-blind-safe palette (Okabe and Ito), in the order series use it.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"]
INK = "#222222"
GRID = "#dddddd"
FONT = "font-family=\"sans-serif\""


def num(x):
    """A coordinate, short and stable."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


class Canvas:
    """An SVG picture built shape by shape."""

    def __init__(self, width, height, title):
        self.width, self.height = width, height
        self.parts = [f"<title>{escape(title)}</title>"]

    def rect(self, x, y, w, h, fill, stroke="none", opacity=1.0):
        extra = f' fill-opacity="{opacity}"' if opacity != 1.0 else ""
        self.parts.append(
            f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" '
            f'fill="{fill}" stroke="{stroke}"{extra}/>'
        )

    def line(self, x1, y1, x2, y2, stroke=INK, width=1.0, dash=None, arrow=False):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        extra += ' marker-end="url(#arrow)"' if arrow else ""
        self.parts.append(
            f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
            f'stroke="{stroke}" stroke-width="{width}"{extra}/>'
        )

    def polyline(self, points, stroke, width=2.0):
        coords = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.parts.append(
            f'<polyline points="{coords}" fill="none" stroke="{stroke}" stroke-width="{width}"/>'
        )

    def circle(self, x, y, r, fill):
        self.parts.append(f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}" fill="{fill}"/>')

    def text(self, x, y, words, size=12, anchor="start", fill=INK, bold=False, rotate=None):
        weight = ' font-weight="bold"' if bold else ""
        turn = f' transform="rotate({rotate} {num(x)} {num(y)})"' if rotate else ""
        self.parts.append(
            f'<text x="{num(x)}" y="{num(y)}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{fill}" {FONT}{weight}{turn}>{escape(str(words))}</text>'
        )

    def svg(self):
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
            f'viewBox="0 0 {self.width} {self.height}">\n'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
            f'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{INK}"/></marker></defs>\n'
            f'<rect width="{self.width}" height="{self.height}" fill="white"/>\n'
        )
        return head + "\n".join(self.parts) + "\n</svg>\n"


def nice_ticks(top, count=5, floor=0.0):
    """Round tick values from `floor` to at least `top`."""
    raw = (top - floor) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [floor]
    while ticks[-1] < top - 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def tick_label(value):
    return f"{value:g}" if value < 10000 else f"{value / 1000:g}k"


def legend(canvas, names, x, y):
    for i, name in enumerate(names):
        canvas.rect(x, y + 18 * i - 9, 12, 12, PALETTE[i % len(PALETTE)])
        canvas.text(x + 18, y + 18 * i + 1, name, size=12)


def bars(title, categories, series, y_label, width=640, height=360, reference=None,
         log=False, floor=0.0, labels=False):
    """Grouped bars: `series` is [(name, [value per category])]. `reference`
    (value, label) draws a dashed horizontal line, e.g. the copy bandwidth.
    `floor` starts a linear axis above 0 (the title should say so); `labels`
    writes each bar's value above it."""
    canvas = Canvas(width, height, title)
    left, right, top, bottom = 70, 20 + (185 if len(series) > 1 else 0), 56 if reference else 40, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, vs in series for v in vs]
    if log:
        low = 10 ** math.floor(math.log10(min(values)))
        high = 10 ** math.ceil(math.log10(max(values)))
        ticks = [low * 10**k for k in range(round(math.log10(high / low)) + 1)]

        def scale(v):
            return plot_h * math.log10(v / low) / math.log10(high / low)
    else:
        ticks = nice_ticks(max(values + [reference[0] if reference else 0]), floor=floor)

        def scale(v):
            return plot_h * (v - floor) / (ticks[-1] - floor)

    canvas.text(width / 2, 22, title, size=15, anchor="middle", bold=True)
    for t in ticks:
        y = top + plot_h - scale(t)
        canvas.line(left, y, left + plot_w, y, stroke=GRID)
        canvas.text(left - 6, y + 4, tick_label(t), size=11, anchor="end")
    canvas.text(18, top + plot_h / 2, y_label, size=12, anchor="middle", rotate=-90)
    group_w = plot_w / len(categories)
    bar_w = group_w * 0.8 / len(series)
    for c, category in enumerate(categories):
        x0 = left + c * group_w + group_w * 0.1
        for s, (_, vs) in enumerate(series):
            h = scale(vs[c])
            canvas.rect(x0 + s * bar_w, top + plot_h - h, bar_w - 2, h, PALETTE[s % len(PALETTE)])
            if labels:
                canvas.text(x0 + (s + 0.5) * bar_w - 1, top + plot_h - h - 4, f"{vs[c]:g}",
                            size=11, anchor="middle")
        # Long names take two lines, split at the middle space.
        words = category.split(" ")
        half = (len(words) + 1) // 2
        rows = [" ".join(words[:half]), " ".join(words[half:])] if len(category) > 12 else [category]
        for r, row in enumerate(rows):
            canvas.text(left + (c + 0.5) * group_w, top + plot_h + 18 + 14 * r, row,
                        size=12, anchor="middle")
    if reference:
        y = top + plot_h - scale(reference[0])
        canvas.line(left, y, left + plot_w, y, stroke=INK, dash="6,4")
        # Named above the plot, where no bar or value label can cover it.
        canvas.line(left + plot_w - 210, top - 10, left + plot_w - 186, top - 10, stroke=INK, dash="6,4")
        canvas.text(left + plot_w - 180, top - 6, reference[1], size=11)
    canvas.line(left, top + plot_h, left + plot_w, top + plot_h)
    if len(series) > 1:
        legend(canvas, [name for name, _ in series], width - right + 14, top + 10)
    return canvas.svg()


def lines(title, xs, series, x_label, y_label, width=640, height=360, log_x=True):
    """Lines over an x axis, log-2 unless `log_x` is False: `series` is
    [(name, [y per x])]."""
    canvas = Canvas(width, height, title)
    left, right, top, bottom = 70, 20 + (185 if len(series) > 1 else 0), 40, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    ticks = nice_ticks(max(v for _, vs in series for v in vs))
    along = math.log2 if log_x else float
    lo, hi = along(xs[0]), along(xs[-1])

    def px(x):
        return left + plot_w * (along(x) - lo) / (hi - lo)

    def py(y):
        return top + plot_h - plot_h * y / ticks[-1]

    canvas.text(width / 2, 22, title, size=15, anchor="middle", bold=True)
    for t in ticks:
        canvas.line(left, py(t), left + plot_w, py(t), stroke=GRID)
        canvas.text(left - 6, py(t) + 4, tick_label(t), size=11, anchor="end")
    labelled = None
    for x in xs:
        canvas.line(px(x), top + plot_h, px(x), top + plot_h + 4)
        # Skip a label that would run into the one before it.
        if labelled is None or px(x) - labelled >= 40:
            canvas.text(px(x), top + plot_h + 18, f"{x:g}", size=11, anchor="middle")
            labelled = px(x)
    canvas.text(left + plot_w / 2, height - 14, x_label, size=12, anchor="middle")
    canvas.text(18, top + plot_h / 2, y_label, size=12, anchor="middle", rotate=-90)
    for s, (_, vs) in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        canvas.polyline([(px(x), py(y)) for x, y in zip(xs, vs)], colour)
        for x, y in zip(xs, vs):
            canvas.circle(px(x), py(y), 3, colour)
    canvas.line(left, top + plot_h, left + plot_w, top + plot_h)
    if len(series) > 1:
        legend(canvas, [name for name, _ in series], width - right + 14, top + 10)
    return canvas.svg()
