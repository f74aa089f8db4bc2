"""Small inline SVG charts for the HTML report (no JavaScript, no network).

>>> svg = line_chart({"ndcg@10": [0.1, 0.5, 0.4]}, labels=["1", "2", "3"])
>>> svg.startswith("<svg") and "polyline" in svg
True
>>> "<rect" in bar_chart([("a", 0.5), ("b", 1.0)])
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4d7c0f", "#be185d")


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def bar_chart(items: Sequence[tuple[str, float | None]], *, width: int = 420, bar_height: int = 18) -> str:
    """Horizontal bars, one per (label, value); values are drawn against the largest |value| (or 1)."""
    values = [abs(v) for _, v in items if v is not None]
    top = max([1.0, *values]) if values and max(values) > 1 else 1.0
    label_w, pad = 150, 4
    height = max(1, len(items)) * (bar_height + pad) + pad
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for i, (label, value) in enumerate(items):
        y = pad + i * (bar_height + pad)
        parts.append(
            f'<text x="{label_w - 6}" y="{y + bar_height * 0.72:.1f}" text-anchor="end" font-size="12">'
            f"{escape(label[:24])}</text>"
        )
        if value is None:
            parts.append(
                f'<text x="{label_w}" y="{y + bar_height * 0.72:.1f}" font-size="12" fill="#888">—</text>'
            )
            continue
        w = (width - label_w - 60) * abs(value) / top
        parts.append(
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_height}" fill="{PALETTE[0]}" rx="2"/>'
            f'<text x="{label_w + w + 4:.1f}" y="{y + bar_height * 0.72:.1f}" font-size="12">{_fmt(value)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    series: Mapping[str, Sequence[float | None]],
    *,
    labels: Sequence[str] | None = None,
    width: int = 560,
    height: int = 220,
) -> str:
    """One polyline per series over a shared x axis, with a legend; ``None`` values leave a gap."""
    n = max((len(v) for v in series.values()), default=0)
    finite = [v for values in series.values() for v in values if v is not None]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    left, right, top, bottom = 48, 12, 12, 36 + 16 * ((len(series) + 2) // 3)
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#999"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#999"/>',
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end" font-size="11">{_fmt(hi)}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end" font-size="11">{_fmt(lo)}</text>',
    ]
    tick_every = max(1, n // 10)
    for i in range(0, n, tick_every):
        text = labels[i] if labels and i < len(labels) else str(i + 1)
        parts.append(
            f'<text x="{x(i):.1f}" y="{top + plot_h + 14}" text-anchor="middle" font-size="11">{escape(text)}</text>'
        )
    for s, (name, values) in enumerate(series.items()):
        color = PALETTE[s % len(PALETTE)]
        run: list[str] = []
        segments: list[list[str]] = []
        for i, v in enumerate(values):
            if v is None:
                if run:
                    segments.append(run)
                run = []
                continue
            run.append(f"{x(i):.1f},{y(v):.1f}")
        if run:
            segments.append(run)
        for seg in segments:
            if len(seg) == 1:
                cx, cy = seg[0].split(",")
                parts.append(f'<circle cx="{cx}" cy="{cy}" r="3" fill="{color}"/>')
            else:
                parts.append(
                    f'<polyline points="{" ".join(seg)}" fill="none" stroke="{color}" stroke-width="2"/>'
                )
        lx = left + (s % 3) * (plot_w / 3)
        ly = top + plot_h + 30 + 16 * (s // 3)
        parts.append(
            f'<rect x="{lx:.1f}" y="{ly - 9}" width="10" height="10" fill="{color}"/>'
            f'<text x="{lx + 14:.1f}" y="{ly}" font-size="11">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
