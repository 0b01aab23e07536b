"""The import layering of the Python package.

Every module of python/tcplab is parsed with `ast` for its imports of the package's own modules,
at the top level and inside functions (an import a function makes when called is a dependency all
the same); imports under `if TYPE_CHECKING:` are left out, since they never run. From these the
graph of modules is built, and the test fails

- on any import cycle between modules (the cycle is printed), and
- on a module importing one of a higher layer than its own.

The layers, lowest first (a module may import its own layer and those below it):

  0 core      `_core` (the Rust bindings), `errors`, `limits` (units, sizes, seeds), `progress`
  1 data      `api` (run, validate, scenarios), `trace`, `series`, `results` (tidy sweep tables),
              `executors` (worker pools), `store` (DuckDB)
  2 sweep     `sweep` (grids over the store and the executors)
  3 reading   `analysis`, `models`, `report`, `plot`, `tbit.*` (the TCP behaviour inference tool),
              `testbed.*` (the namespace test bed, except its front below), `ns2.*` (the same
              scenario in ns-2, except its front below), `script.*` (scripted tests in
              packetdrill's language, except its front below)
  4 studies   `experiments.*` (the reproductions, on the frame `experiments.study`)
  5 front     `cli` (the package `cli.*`), `testbed.cli`, `ns2.cli`, `script.cli`, and the package `tcplab` itself (its lazy attribute lookup)

A module missing from the map fails the test too, so that a new module is given its place.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

from graphs import strongly_connected

PKG = "tcplab"
ROOT = Path(__file__).resolve().parent.parent / "python" / PKG

LAYERS = {
    0: ["_core", "errors", "units", "limits", "progress", "netns", "rows"],
    1: ["api", "trace", "series", "results", "executors", "store"],
    2: ["sweep"],
    3: ["analysis", "models", "report", "plot", "tbit", "tbit.*", "testbed", "testbed.*", "ns2", "ns2.*", "script", "script.*"],
    4: ["experiments", "experiments.*"],
    5: ["cli", "cli.*", "testbed.cli", "ns2.cli", "script.cli", ""],
}


def layer_of(mod: str) -> Optional[int]:
    """The layer of `tcplab.<mod>` ("" for the package): an exact entry wins over a `pkg.*` one."""
    rel = mod[len(PKG) + 1:] if mod != PKG else ""
    for n, names in LAYERS.items():
        if rel in names:
            return n
    for n, names in LAYERS.items():
        if any(p.endswith(".*") and rel.startswith(p[:-1]) for p in names):
            return n
    return None


def modules() -> Dict[str, Path]:
    out = {}
    for f in sorted(ROOT.rglob("*.py")):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    for f in ROOT.glob("_core*.so"):  # the compiled bindings
        out[f"{PKG}._core"] = f
    if f"{PKG}._core" not in out:
        out[f"{PKG}._core"] = ROOT / "_core"
    return out


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _walk(tree: ast.AST):
    """Every node, except what sits under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def imports(mod: str, path: Path, known: Set[str]) -> Set[str]:
    """The package's own modules `mod` imports (a name imported from a package is the submodule
    when there is one, the package otherwise)."""
    if path.suffix != ".py":
        return set()
    is_pkg = path.name == "__init__.py"
    here = mod.split(".") if is_pkg else mod.split(".")[:-1]
    out = set()
    for node in _walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            names = [f"{src}.{a.name}" if f"{src}.{a.name}" in known else src for a in node.names]
        else:
            continue
        for n in names:
            while n and n not in known:  # `import tcplab.sweep.x` -> the longest known prefix
                n = n.rpartition(".")[0]
            if n and n != mod:
                out.add(n)
    return out


def graph() -> Dict[str, Set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imports(m, p, known) for m, p in mods.items()}


def cycles(g: Dict[str, Set[str]]) -> List[List[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan)."""
    comps = strongly_connected(g)
    out = []
    for comp in comps:
        members = set(comp)
        start = min(comp)
        # A shortest path back to the start inside the component (breadth first).
        prev = {start: None}
        queue = [start]
        found = None
        while queue and found is None:
            v = queue.pop(0)
            for w in sorted(g[v] & members):
                if w == start:
                    found = v
                    break
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [start]
        v = found
        while v is not None and v != start:
            path.insert(1, v)
            v = prev[v]
        out.append(path + [start])
    return out


def test_the_map_knows_every_module():
    missing = sorted(m for m in graph() if layer_of(m) is None)
    assert not missing, f"modules without a layer in LAYERS: {missing}"


def test_the_graph_sees_the_imports():
    """The parser finds known edges of both kinds (top level and inside a function)."""
    g = graph()
    assert f"{PKG}.report" in g[f"{PKG}.experiments.mathis97"]
    assert f"{PKG}.sweep" in g[f"{PKG}.experiments.study"]  # imported inside a function
    assert f"{PKG}.store" in g[f"{PKG}.sweep"]
    assert not any(f"{PKG}.sweep" in d for m, d in g.items() if m == f"{PKG}.store")


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join("  " + " -> ".join(c) for c in found)


def test_no_module_imports_a_higher_layer():
    bad = []
    for m, deps in sorted(graph().items()):
        lm = layer_of(m)
        for d in sorted(deps):
            ld = layer_of(d)
            if lm is not None and ld is not None and ld > lm:
                bad.append(f"{m} (layer {lm}) imports {d} (layer {ld})")
    assert not bad, "imports of a higher layer:\n" + "\n".join("  " + b for b in bad)
