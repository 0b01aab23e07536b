"""nftables rules of a plan: drop filters and random loss, on the delay box's output ports.

They sit in a `netdev` table of the box's namespace, on the `egress` hook of the port that leads
to the receiving host, so a dropped frame never reaches that host (nor its capture) and the
sending host sees a normal transmission (a drop at the sender's own output would be reported to
its TCP as a local error and change what it does). The n-th transmission of a connection's SYN,
SYN-ACK or FIN, or its n-th data packet or pure ACK, is counted with one dynamic set per count,
keyed by the connection's client port (conntrack is not available on this hook): a packet of a
port already in set n−1 is added to set n. Random loss is `numgen random`, per packet.
"""

from __future__ import annotations

TABLE = "tcplab_testbed"

_MATCH = {
    "syn": "tcp flags & (syn | ack) == syn",
    "synack": "tcp flags & (syn | ack) == syn | ack",
    "fin": "tcp flags & fin == fin",
    # Data: longer than the 40 bytes of bare headers (no timestamps; a data sender sends no SACK).
    "data": "tcp flags & (syn | rst) == 0 ip length > 40",
    # With timestamps (RFC 7323) every segment has 12 option bytes: a pure ACK is 52 bytes.
    "data_ts": "tcp flags & (syn | rst) == 0 ip length > 52",
    # The sink sends only pure ACKs after its SYN-ACK (and its FIN).
    "ack": "tcp flags & (syn | fin | rst) == 0",
}


def merged(drops: list) -> list:
    """The drops of one counter: entries of the same packets (the same direction, match and
    ports) share it, their `nth` united. With a counter each, the k-th packet dropped by one entry
    never reached the next entry's counter, which then counted one short: `drops` of ACKs 20 to 30
    dropped ACKs 20, 22, ..., 40 on the real side."""
    out: dict = {}
    for d in drops:
        key = (d["to"], d["frm"], d["match"], tuple(d["ports"]), d["port_field"])
        if key in out:
            out[key] = dict(out[key], nth=sorted(set(out[key]["nth"]) | set(d["nth"])))
        else:
            out[key] = dict(d, nth=sorted(set(d["nth"])))
    return list(out.values())


def ruleset(plan) -> str:
    """The whole table as nft script text, or "" when the plan drops nothing."""
    chains: dict = {}
    sets, subchains = [], []
    for i, d in enumerate(merged(plan.drops)):
        port = plan.hosts.index(d["to"])
        key = f"tcp {d['port_field']}"
        ports = ", ".join(str(p) for p in d["ports"])
        top = max(d["nth"])
        for j in range(1, top + 1):
            sets.append(f"  set d{i}_{j} {{ type inet_service; flags dynamic; size 65535; }}")
        body = [f"    {key} @d{i}_{top} return"]
        for j in range(top, 0, -1):
            cond = f"{key} @d{i}_{j - 1} " if j > 1 else ""
            verdict = "drop" if j in d["nth"] else "return"
            body.append(f"    {cond}add @d{i}_{j} {{ {key} }} {verdict}")
        subchains.append(f"  chain d{i} {{\n" + "\n".join(body) + "\n  }")
        chains.setdefault(port, []).append(
            f"    ip saddr {plan.ip(d['frm'])} ip protocol tcp {key} {{ {ports} }} {_MATCH[d['match']]} jump d{i}"
        )
    for frm, to, p, _ in plan.loss:
        src = ", ".join(plan.ip(h) for h in frm)
        for h in to:
            chains.setdefault(plan.hosts.index(h), []).append(
                f"    ip saddr {{ {src} }} numgen random mod 1000000 < {int(round(p * 1e6))} drop"
            )
    if not chains:
        return ""
    out = [f"table netdev {TABLE} {{"] + sets + subchains
    for port, rules in sorted(chains.items()):
        out.append(f"  chain egress_p{port} {{\n    type filter hook egress device \"p{port}\" priority 0; policy accept;\n"
                   + "\n".join(rules) + "\n  }")
    out.append("}")
    return "\n".join(out) + "\n"
