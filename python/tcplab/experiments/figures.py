"""The plotting helpers the reproductions share: matplotlib without a display, and a figure saved
as PNG and SVG."""

from __future__ import annotations

from pathlib import Path


def plt():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def save(fig, figs: Path, stem: str):
    """Save `fig` as figs/<stem>.png and .svg, close it, and return the two paths."""
    figs.mkdir(parents=True, exist_ok=True)
    png, svg = figs / f"{stem}.png", figs / f"{stem}.svg"
    fig.savefig(png, dpi=120, bbox_inches="tight")
    fig.savefig(svg, bbox_inches="tight")
    plt().close(fig)
    return png, svg
