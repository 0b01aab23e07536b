"""`tcplab trace`: a capture analysed the way tcptrace does (docs/traces.md)."""

from __future__ import annotations

import json

import click

from .. import _core
from .common import _fail


#: What the columns of `tcplab trace` count (docs/traces.md, "Columns").
TRACE_LEGEND = (
    "  data: the direction that carried the data (a2b: from a to b); unique B: distinct data bytes (each counted once); rexmt, rexmt B:\n"
    "  retransmitted data segments and bytes (tcptrace's rexmt data pkts); loss ev: retransmission bursts (loss\n"
    "  events); dupack: duplicate ACKs received by the data sender; IW: segments sent before the first ACK of data;\n"
    "  SYN rx: SYN retransmissions; RTT: mean round-trip time (Karn's rule); time: SYN to the ACK of the last data;\n"
    "  Mb/s: unique bytes over that time. --flows: every column, both directions; docs/traces.md defines each."
)


@click.command("trace")
@click.argument("capture", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the whole analysis as JSON.")
@click.option("--flows", is_flag=True, help="Every connection in full, both directions (as tcptrace -l).")
@click.option("--strict", is_flag=True, help="Exit with an error (status 2) when the capture is cut short or corrupted, instead of analysing what precedes the cut.")
def trace_cmd(capture: str, as_json: bool, flows: bool, strict: bool) -> None:
    """Analyse CAPTURE (pcap or pcapng) per TCP connection, as tcptrace does.

    A capture cut short (tcpdump killed) is analysed up to the cut, with a warning that names
    its byte offset; --strict makes it an error."""
    import warnings

    from .. import trace as _trace

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", _trace.TraceWarning)  # said below, once
            rep = _trace.report(capture)
    except OSError as e:
        _fail(f"{capture}: {getattr(e, 'strerror', None) or e}" if getattr(e, "filename", None) else str(e))
    except _core.TraceError as e:
        _fail(f"{capture}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    stopped = _trace.stopped_message(capture, rep)
    if stopped and strict:
        _fail(stopped)
    if as_json:
        click.echo(json.dumps(rep, indent=2))
    else:
        click.echo(_trace.render(rep, flows=flows))
        if not flows and rep["connections"]:
            click.echo(TRACE_LEGEND)
    if stopped:
        click.echo(f"warning: {stopped} (--strict makes this an error)", err=True)
