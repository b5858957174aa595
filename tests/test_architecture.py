"""The package layout shows the architecture: data flows one way, with no import cycles.

text -> model (``hlo``) -> dump files (``dumps``) -> facts about one module (``analysis``)
-> match and fates (``diff``) -> reports and pictures (``report``, ``render``) -> ``cli``.
A layer may import the layers before it, never after it. Every import counts, also the ones
inside functions, so that a late import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PKG = Path(__file__).resolve().parent.parent / "hlodiff"

# lower number = earlier in the pipeline; a module may import only its own or lower layers
LAYERS = {
    "errors": 0, "userdirs": 0, "outputs": 0, "textsafe": 0, "units": 0, "jsonout": 0, "display": 0,
    "hlo": 1,
    "dumps": 2,
    "analysis": 3,
    "diff": 4,
    "report": 5, "render": 5,
    "jaxrun": 6,
    "cli": 7,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """The hlodiff modules that ``path`` imports (absolute names)."""
    mod = _module_name(path)
    is_pkg = path.name == "__init__.py"
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base[: len(base) - (node.level - 1)]
                target = ".".join(parts + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("hlodiff"):
                continue
            for alias in node.names:  # `from . import x` may name a submodule
                sub = f"{target}.{alias.name}"
                found.add(sub if _exists(sub) else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("hlodiff"))
    found.discard(mod)
    return found


def _exists(module: str) -> bool:
    p = PKG.parent / module.replace(".", "/")
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _graph() -> nx.DiGraph:
    g = nx.DiGraph()
    for path in PKG.rglob("*.py"):
        mod = _module_name(path)
        g.add_node(mod)
        for dep in _imports(path):
            g.add_edge(mod, dep)
    return g


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def test_no_import_cycles():
    g = _graph()
    # a package's __init__ re-exporting its own submodules is not a cycle of the pipeline
    g.remove_edges_from([(a, b) for a, b in list(g.edges) if b.startswith(a + ".")])
    g.remove_node("hlodiff")  # the lazy public API names everything
    cycles = list(nx.simple_cycles(g))
    assert not cycles, f"import cycles: {cycles[:5]}"


def test_data_flows_one_way():
    wrong = []
    for a, b in _graph().edges:
        la, lb = _layer(a), _layer(b)
        if la is not None and lb is not None and lb > la:
            wrong.append(f"{a} imports {b}")
    assert not wrong, "imports against the pipeline's direction:\n" + "\n".join(sorted(wrong))


def test_every_subpackage_has_a_layer():
    subs = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    subs |= {p.stem for p in PKG.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert subs <= set(LAYERS), f"place these in LAYERS: {sorted(subs - set(LAYERS))}"


def test_modules_stay_readable():
    too_long = [f"{p.relative_to(PKG)} ({n} lines)" for p in PKG.rglob("*.py")
                if (n := len(p.read_text().splitlines())) > 800]
    assert not too_long, f"split these modules: {too_long}"
