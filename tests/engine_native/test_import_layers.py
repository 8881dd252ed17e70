"""No module of the built-in engine imports one that imports it back (tensor_parallel and dp_attention used to)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "engine" / "native"


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The engine.native modules a file imports, at the top or inside a function (`from engine.native import
    x` counts as importing engine.native.x)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & modules


def test_engine_native_has_no_import_circle():
    modules = {_name(p) for p in PACKAGE.rglob("*.py")}
    # the package's __init__ only re-exports lazily; importing a submodule through it is not a circle
    graph = {_name(p): _imports(p, modules) - {"engine.native"} for p in PACKAGE.rglob("*.py")}
    assert "engine.native.ranks" in graph["engine.native.tensor_parallel"]  # the walk sees imports

    def circle_from(start: str, node: str, seen: tuple[str, ...]) -> tuple[str, ...] | None:
        for nxt in graph[node]:
            if nxt == start:
                return seen + (nxt,)
            if nxt not in seen and (found := circle_from(start, nxt, seen + (nxt,))):
                return found
        return None

    circles = [c for m in graph if (c := circle_from(m, m, (m,)))]
    assert not circles, circles
