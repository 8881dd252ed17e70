"""Package layering: the judges read records without importing the harness (no package cycle)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_judges_import_without_the_harness():
    code = ("import sys, judges, judges.base, judges.rules, judges.llm, judges.hybrid, records\n"
            "judges.create_judge('rules'); judges.create_judge('rules+llm', judge_model='m')\n"
            "loaded = sorted(m for m in sys.modules if m == 'harness' or m.startswith('harness.'))\n"
            "print(','.join(loaded))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def module_imports(path: Path, package: str) -> set[str]:
    """The modules of `package` that a file imports, at the top or inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.startswith(package + ".")}


def test_the_tasks_package_has_no_import_circle():
    # tasks.base imports the readers (columns, sources) inside a function; they used to import it back for
    # DataError, and sources imported hub_sources (for `hf:` specs) while hub_sources builds on sources
    graph = {}
    for path in (ROOT / "tasks").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        graph[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = module_imports(path, "tasks")
    assert graph["tasks.columns"] and "tasks.base" in graph  # the walk found the modules

    def circle_from(start: str, node: str, seen: tuple[str, ...]) -> tuple[str, ...] | None:
        for nxt in graph.get(node, ()):
            if nxt == start:
                return seen + (nxt,)
            if nxt not in seen and nxt != "tasks":  # the package's own __init__ re-exports; not a reader
                found = circle_from(start, nxt, seen + (nxt,))
                if found:
                    return found
        return None

    circles = [c for m in graph if m != "tasks" and (c := circle_from(m, m, (m,)))]
    assert not circles, circles
