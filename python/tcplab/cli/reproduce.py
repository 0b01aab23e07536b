"""`tcplab reproduce STUDY`: one of the five reproductions, run, fitted and reported (docs/reproductions.md)."""

from __future__ import annotations

import sys

import click

from .common import _fail


@click.command("reproduce")
@click.argument("study", type=click.Choice(["mathis97", "rfc2415", "allman98", "ladha04", "seddigh01"]))
@click.option("--quick", is_flag=True, help="Smaller grids: within about 5 minutes on 2 cores.")
@click.option("--scale", type=click.Choice(["tiny", "quick", "full"]), default=None, help="Grid size (overrides --quick).")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Output directory (default results/STUDY[-quick]).")
@click.option("--workers", type=int, default=None, help="Worker processes (default: every core; 0 = in this process).")
@click.option("--only", default=None, help="mathis97: comma-separated experiments to run (default: all).")
@click.option("--ns2/--no-ns2", default=True, show_default=True,
              help="Run the ns-2 column beside tcplab's where the study has one (mathis97, rfc2415, ladha04, seddigh01; "
                   "needs `ns`, and is most of the time of some); --no-ns2 leaves it out.")
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
def reproduce_cmd(study: str, quick: bool, scale, out, workers, only, ns2: bool, quiet: bool) -> None:
    """Reproduce a published study: run its sweeps (stored: a rerun only reads), then write the
    figures (PNG, SVG), the tables (Markdown, CSV) and a report (report.md, report.html) that sets
    the paper's numbers beside tcplab's with the tolerance and verdict of each."""
    import importlib
    import os

    mod = importlib.import_module(f"..experiments.{study}", __package__)
    scale = scale or ("quick" if quick else "full")
    out = out or f"results/{study}" + ("" if scale == "full" else f"-{scale}")
    n = workers if workers is not None else (os.cpu_count() or 1)
    est = mod.estimate_seconds(scale, max(1, n), **({} if study == "allman98" else {"ns2": ns2}))
    if not quiet:
        when = f"{est:.0f} s" if est < 120 else f"{est / 60:.0f} min"
        click.echo(f"{study} ({scale}): about {when} on {max(1, n)} worker(s) (runs already in {out}/store are not run again)", err=True)
    kwargs = {}
    if only:
        if study != "mathis97":
            _fail(f"--only applies to mathis97, not to {study}")
        kwargs["only"] = [x.strip() for x in only.split(",")]
    if not ns2 and study != "allman98":
        kwargs["ns2"] = False
    try:
        res = mod.reproduce(out, scale=scale, workers=workers, progress=None if not quiet else False,
                            log=(lambda m: None) if quiet else (lambda m: click.echo(m, err=True)),
                            command=["tcplab", *sys.argv[1:]], **kwargs)
    except (ValueError, FileNotFoundError) as e:
        _fail(str(e))
    s = res["summary"]
    if not quiet:
        import pandas as pd

        checks = pd.read_csv(res["paths"]["checks"], keep_default_na=False)
        cols = ["kind", "quantity", "paper", "tcplab", "difference", "tolerance", "verdict"]
        rows = [[str(v) for v in r] for r in checks[cols].itertuples(index=False)]
        widths = [min(60, max(len(c), *(len(r[i]) for r in rows))) for i, c in enumerate(cols)]
        click.echo("  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip())
        for r in rows:
            click.echo("  ".join(v[:w].ljust(w) for v, w in zip(r, widths)).rstrip())
        click.echo("")
    click.echo(f"report: {res['paths']['markdown']} and {res['paths']['html']}")
    click.echo(f"{s['within']} of {s['checks']} paper comparisons within tolerance ({s['elapsed_s']:.0f} s)")
    rest = "; ".join(f"{k} {v['within']} of {v['checks']}" for k, v in s.get("by_kind", {}).items() if k != "paper" and v["shown"])
    if rest:
        click.echo(f"  not counted: {rest}")
    for m in s["missed"]:
        click.echo(f"  missed: {m}")
