"""The file-level import graph of the Rust core (crates/tcplab-core/src) has no cycle.

Every `crate::a::b::...` path written in a source file (in `use` lines and inline) is resolved to
the file that defines the longest module prefix of it (`crate::scenario::Network` to
`scenario/mod.rs` or `scenario.rs`; `crate::app::spec::AppSpec` to `app/spec.rs`); a module's
`mod.rs` re-exporting a child counts as depending on it. Paths inside `#[cfg(test)]` modules at
the end of a file, and in files named `tests.rs`, are left out: tests may reach anywhere. The test
fails on any cycle, printing it, so that the layering of the core (error at the bottom, the
scenario's schema and plan below the applications' resolution, the world on top) stays as drawn.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set

from graphs import strongly_connected

SRC = Path(__file__).resolve().parent.parent / "crates" / "tcplab-core" / "src"
PATH_RE = re.compile(r"\bcrate((?:::[A-Za-z_][A-Za-z0-9_]*)+)(::\{[^;]*?\})?")
SUPER_RE = re.compile(r"\bsuper((?:::[A-Za-z_][A-Za-z0-9_]*)+)(::\{[^;]*?\})?")


def module_files() -> Dict[tuple, Path]:
    out = {}
    for f in SRC.rglob("*.rs"):
        parts = list(f.relative_to(SRC).with_suffix("").parts)
        if parts[-1] in ("mod", "lib"):
            parts = parts[:-1]
        out[tuple(parts)] = f
    return out


def non_test_text(f: Path) -> str:
    if f.name == "tests.rs":
        return ""
    text = f.read_text()
    # A `#[cfg(test)]` module runs to the end of the file in this crate's style.
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod tests", text, re.M)
    text = text[: m.start()] if m else text
    # Comments are no imports.
    return re.sub(r"//[^\n]*", "", text)


def reexports(mods: Dict[tuple, Path]) -> Dict[tuple, Dict[str, tuple]]:
    """For each folder module, the names its `mod.rs` re-exports from a child: `pub use
    filter::{FilterKind, ...}` makes `crate::net::FilterKind` a use of `net/filter.rs`."""
    out: Dict[tuple, Dict[str, tuple]] = {}
    for m, f in mods.items():
        if f.name not in ("mod.rs", "lib.rs"):
            continue
        names: Dict[str, tuple] = {}
        for mt in re.finditer(r"pub use (?:self::)?([a-z_0-9]+)::(\{[^;]*\}|[A-Za-z_0-9]+|\*)\s*;", non_test_text(f)):
            child = m + (mt.group(1),)
            if child not in mods:
                continue
            items = re.split(r"[,{}]", mt.group(2))
            if items == ["*"]:
                # A glob: every public item of the child.
                items = re.findall(r"^pub (?:const|static|fn|struct|enum|type|trait|mod) ([A-Za-z_0-9]+)", non_test_text(mods[child]), re.M)
            for item in items:
                item = item.strip().split(" as ")[-1].strip()
                if item:
                    names[item] = child
        out[m] = names
    return out


def resolve(mods: Dict[tuple, Path], parts: List[str], rex: Dict[tuple, Dict[str, tuple]]) -> Optional[tuple]:
    for n in range(len(parts), -1, -1):
        if tuple(parts[:n]) in mods:
            m = tuple(parts[:n])
            if n < len(parts) and parts[n] in rex.get(m, {}):
                return rex[m][parts[n]]
            return m
    return None


def graph() -> Dict[tuple, Set[tuple]]:
    mods = module_files()
    g: Dict[tuple, Set[tuple]] = {m: set() for m in mods}
    rex = reexports(mods)
    for m, f in mods.items():
        # A folder module's `pub use child::...` is its façade, not a dependency of its own: a
        # path through it resolves to the child (`reexports`).
        text = re.sub(r"^\s*pub use [^;]*;", "", non_test_text(f), flags=re.M)
        here = m if f.name in ("mod.rs", "lib.rs") else m[:-1]
        found = []
        for rx, base in ((PATH_RE, []), (SUPER_RE, list(here[:-1]) if f.name == "mod.rs" else list(here))):
            for mt in rx.finditer(text):
                head = base + mt.group(1).strip(":").split("::")
                if mt.group(2):
                    for item in re.split(r"[,{}]", mt.group(2)[3:]):
                        item = item.strip().split(" as ")[0].strip()
                        if item and item != "self":
                            found.append(head + item.split("::"))
                else:
                    found.append(head)
        for p in found:
            t = resolve(mods, p, rex)
            if t is not None and t != m:
                g[m].add(t)
    return g


def cycles(g: Dict[tuple, Set[tuple]]) -> List[List[tuple]]:
    """The strongly connected components with more than one file."""
    return [sorted(c) for c in strongly_connected(g)]


# Cycles known and owned by work under way, each with the reason; an entry that no longer
# matches a cycle fails the test, so that it is removed once the cycle is gone.
KNOWN: dict = {}


def test_the_rust_core_has_no_file_import_cycle():
    g = graph()
    # The graph is real: the world reads the scenario's plan, and errors come from error.rs.
    assert any(k[:1] == ("scenario",) for k in g[("world",)]) and ("error",) in g[("input",)]
    found = cycles({k: {w for w in v if w != ()} for k, v in g.items() if k != ()})
    named = {tuple("/".join(m) for m in c) for c in found}
    unknown = [c for c in named if c not in KNOWN]
    shown = ["  " + " <-> ".join(c) for c in unknown]
    assert not unknown, "import cycles between files of the Rust core:\n" + "\n".join(shown)
    stale = [c for c in KNOWN if c not in named]
    assert not stale, f"no longer a cycle, remove it from KNOWN: {stale}"


def test_the_check_finds_a_cycle(tmp_path, monkeypatch):
    # Two files that import each other, as the scenario and the applications used to.
    (tmp_path / "a.rs").write_text("use crate::b::B;\npub struct A;\n")
    (tmp_path / "b.rs").write_text("use crate::a::A;\npub struct B;\n")
    (tmp_path / "lib.rs").write_text("pub mod a;\npub mod b;\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    assert cycles({k: v - {()} for k, v in graph().items() if k != ()}) == [[("a",), ("b",)]]


#: The core's layers, lowest first (docs/tcp.md): a module may import its own layer and those below,
#: never one above. The scenario's schema and plan, the applications, results and instruments sit
#: between the connections and the world and import each other by file without a circle (checked
#: above); the layers here are the ones the per-packet path is built on.
LAYERS = [
    {"units", "error", "engine", "rv", "template", "input"},
    {"net"},
    {"tcp", "scripted"},
    {"conns", "observe"},
    {"app", "scenario", "footprint", "series", "trace", "result", "tbit"},
    {"world"},
]


def layer_of(top: str) -> int:
    for i, layer in enumerate(LAYERS):
        if top in layer:
            return i
    raise AssertionError(f"module {top!r} of the Rust core is in no layer: add it to LAYERS")


def test_no_module_of_the_core_imports_a_higher_layer():
    g = graph()
    bad = []
    for m, targets in g.items():
        if not m:
            continue
        for t in targets:
            if t and t[0] != m[0] and layer_of(t[0]) > layer_of(m[0]):
                bad.append(f"  {'/'.join(m)} imports {'/'.join(t)}")
    assert not bad, "a lower layer imports a higher one (engine <- net <- tcp <- conns <- app <- world):\n" + "\n".join(sorted(bad))


def test_the_layer_check_sees_an_upward_import(tmp_path, monkeypatch):
    (tmp_path / "net.rs").write_text("use crate::world::World;\npub struct N;\n")
    (tmp_path / "world.rs").write_text("pub struct World;\n")
    (tmp_path / "lib.rs").write_text("pub mod net;\npub mod world;\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    g = graph()
    assert ("world",) in g[("net",)] and layer_of("world") > layer_of("net")


if __name__ == "__main__":
    for c in cycles({k: {w for w in v if w != ()} for k, v in graph().items() if k != ()}):
        print(" <-> ".join("/".join(m) for m in c))
