"""Small inline SVG charts for the HTML report (no JavaScript, no network): one panel per metric.

Each panel plots one series on its own y scale, with both axes titled, so
metrics of different sizes (CG ≈ 12 beside SRR ≈ 0.27) are never squeezed onto
one axis. Markers draw a dashed vertical line (a changed dataset in the
history) and a highlighted point (this run).

>>> svg = panel([0.1, 0.5, None, 0.4], title="ndcg@10", x_title="iteration", y_title="ndcg@10")
>>> svg.startswith("<svg") and "polyline" in svg and "iteration" in svg
True
>>> "stroke-dasharray" in panel([1, 2], x_title="run", y_title="mrr", markers={1: "dataset changed"})
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

LINE = "#2563eb"
MARK = "#b45309"
GRID = "#d1d5db"
WIDTH, HEIGHT = 300, 190
LEFT, RIGHT, TOP, BOTTOM = 58, 14, 24, 44
AXIS_TITLE = 22
"""Characters of an axis title; a longer one ends in an ellipsis (the panel's title is whole)."""


def _short(text: str) -> str:
    return text if len(text) <= AXIS_TITLE else text[: AXIS_TITLE - 1] + "…"


def _tick(value: float) -> str:
    return f"{value:.3g}"


def _bounds(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if lo >= 0 and hi <= 1 and hi - lo > 0.2:
        lo = 0.0  # rates and scores read best from 0
    if lo == hi:
        pad = abs(lo) * 0.1
        lo, hi = (lo - pad, hi + pad) if pad else (0.0, 1.0)
    return lo, hi


def panel(
    values: Sequence[float | int | None],
    *,
    title: str = "",
    x_title: str,
    y_title: str,
    labels: Sequence[str] | None = None,
    markers: Mapping[int, str] | None = None,
    highlight: int | None = None,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> str:
    """One series as a line over points 1..n; ``None`` leaves a gap. ``labels`` name the x ticks.

    ``markers`` maps a point's index to a note drawn as a dashed line just before it;
    ``highlight`` rings one point (this run).
    """
    n = len(values)
    finite = [float(v) for v in values if v is not None]
    lo, hi = _bounds(finite)
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM

    def x(i: float) -> float:
        return LEFT + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - (v - lo) / (hi - lo))

    label = escape(f"{title or y_title} by {x_title}")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{label}" class="panel">',
        f'<text x="{LEFT}" y="14" font-size="12" font-weight="600">{escape(title)}</text>' if title else "",
    ]
    for tick in (lo, (lo + hi) / 2, hi):
        parts.append(
            f'<line x1="{LEFT}" y1="{y(tick):.1f}" x2="{LEFT + plot_w}" y2="{y(tick):.1f}" stroke="{GRID}" '
            f'stroke-width="0.5"/><text x="{LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end" '
            f'font-size="10">{_tick(tick)}</text>'
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" stroke="#6b7280"/>'
    )
    step = max(1, (n + 7) // 8)
    for i in range(0, n, step):
        text = labels[i] if labels and i < len(labels) else str(i + 1)
        parts.append(
            f'<text x="{x(i):.1f}" y="{TOP + plot_h + 14}" text-anchor="middle" font-size="10">'
            f"{escape(text)}</text>"
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" font-size="11" '
        f'fill="#374151">{escape(_short(x_title))}</text>'
        f'<text transform="translate(12 {TOP + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" '
        f'font-size="11" fill="#374151">{escape(_short(y_title))}</text>'
    )
    for i, note in (markers or {}).items():
        mx = x(i - 0.5) if n > 1 else x(i)
        parts.append(
            f'<line x1="{mx:.1f}" y1="{TOP}" x2="{mx:.1f}" y2="{TOP + plot_h}" stroke="{MARK}" '
            f'stroke-dasharray="4 3"><title>{escape(note)}</title></line>'
            f'<text x="{mx + 3:.1f}" y="{TOP + 9}" font-size="9" fill="{MARK}">{escape(note)}</text>'
        )
    segment: list[str] = []
    for i, point in enumerate([*values, None]):
        if point is not None:
            segment.append(f"{x(i):.1f},{y(float(point)):.1f}")
            continue
        if len(segment) > 1:
            parts.append(
                f'<polyline points="{" ".join(segment)}" fill="none" stroke="{LINE}" stroke-width="2"/>'
            )
        segment = []
    for i, v in enumerate(values):
        if v is not None:
            tip = f"{labels[i] if labels and i < len(labels) else i + 1}: {float(v):.4g}"
            ring = ' stroke="#111827" stroke-width="2"' if i == highlight else ""
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(float(v)):.1f}" r="{4 if i == highlight else 2.5}" '
                f'fill="{LINE}"{ring}><title>{escape(tip)}</title></circle>'
            )
    parts.append("</svg>")
    return "".join(parts)
