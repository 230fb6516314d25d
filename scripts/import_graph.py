"""The house's import graph between folders: arrows that run back up, and circles.

    python scripts/import_graph.py          # counts, then every offending import

Each folder sits on a floor (docs/architecture.md); an import may only point to the same
floor or lower, and no two folders may import each other, directly or round a loop.
Imports inside functions count too (a lazy import is still an arrow). Tests and
benchmarks are left out: they may import anything.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOORS = {  # folder -> floor; a folder may import its own floor or lower
    "backend/errors": 0,
    "backend/model": 1,
    "backend/engines": 2,
    "backend/metrics": 3, "backend/gateways": 3, "backend/spark": 3, "backend/store": 3,
    "backend/cache": 3,
    "backend/twin": 4, "backend/executor": 4, "backend/localkafka": 4,
    "backend/services": 5,
    "components": 6,
    "dashboard": 7,
    "pages": 8,
    "backend/cli": 9,
}
SKIP = ("tests", "benchmarks", "scripts", ".venv")


def folder_of(path: str) -> str | None:
    """The longest FLOORS key that ``path`` (a/b/c.py or a module a.b.c) lies under."""
    path = path.replace(".", "/")
    best = None
    for f in FLOORS:
        if (path == f or path.startswith(f + "/")) and (best is None or len(f) > len(best)):
            best = f
    return best


def imports(file: Path) -> list[str]:
    """Every module ``file`` imports (absolute names; relative ones resolved)."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    package = ".".join(file.relative_to(ROOT).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out += [f"{base}.{a.name}" if base else a.name for a in node.names]
    return out


def edges() -> list[tuple[str, str, str, str]]:
    """(from folder, to folder, file, module) for every import between two folders."""
    out = []
    for file in sorted(ROOT.rglob("*.py")):
        rel = file.relative_to(ROOT).as_posix()
        if rel.startswith(SKIP):
            continue
        src = folder_of(rel.removesuffix(".py"))
        if src is None:
            continue
        for module in imports(file):
            dst = folder_of(module)
            if dst is not None and dst != src:
                out.append((src, dst, rel, module))
    return out


def circles(pairs: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected groups of two folders or more (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b in pairs:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    all_edges = edges()
    up = [e for e in all_edges if FLOORS[e[1]] > FLOORS[e[0]]]
    loops = circles({(a, b) for a, b, _, _ in all_edges})
    print(f"folder arrows: {len({(a, b) for a, b, _, _ in all_edges})}, "
          f"imports back up: {len(up)}, "
          f"folder pairs back up: {len({(a, b) for a, b, _, _ in up})}, "
          f"circles between folders: {len(loops)}")
    for a, b, file, module in up:
        print(f"  up: {file} imports {module} ({a} -> {b})")
    for group in loops:
        print(f"  circle: {' <-> '.join(group)}")
    return 1 if up or loops else 0


if __name__ == "__main__":
    sys.exit(main())
