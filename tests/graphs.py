"""Graph helpers shared by the layering tests (Python modules and Rust files)."""

from __future__ import annotations

from typing import Dict, Hashable, Iterable, List, Set


def strongly_connected(g: Dict[Hashable, Iterable[Hashable]]) -> List[List[Hashable]]:
    """The strongly connected components of more than one node (Tarjan), each in the order the
    search closed it; nodes are visited in sorted order, so the result is deterministic."""
    index: Dict[Hashable, int] = {}
    low: Dict[Hashable, int] = {}
    on: Set[Hashable] = set()
    stack: List[Hashable] = []
    comps: List[List[Hashable]] = []

    def visit(v) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(g):
        if v not in index:
            visit(v)
    return comps
