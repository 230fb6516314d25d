"""The house's import graph, checked against docs/architecture.md's table of floors.

    python scripts/import_graph.py          # counts, then every offending import

The table gives each folder its floor and what it may import (the backticked folders or
modules of its "may import" column; "anything below" is every lower floor). An import
breaks the house when its folder's row does not allow it, when a row allows a folder on
a higher floor, or when folders import each other, directly or round a loop. A product
file in no row of the table is reported too. Imports inside functions count (a lazy
import is still an arrow). Tests, benchmarks and scripts may import anything.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PRODUCT = ("backend", "dashboard", "pages", "components")
UNPLACED_OK = ("backend/__init__.py",)



@dataclass(frozen=True)
class Room:
    """One row of the table: a folder (or module), its floor, what it may import."""

    folder: str
    floor: int
    may_import: tuple[str, ...]  # folders or modules, as a/b or a/b/c
    anything_below: bool


def _paths(cell: str) -> list[str]:
    return [p.strip().rstrip("/").removesuffix(".py") for p in re.findall(r"`([^`]+)`", cell)]


def rooms(doc: Path = DOC) -> dict[str, Room]:
    """The table of floors in docs/architecture.md: | floor | folder | what | may import |."""
    out: dict[str, Room] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].isdigit():
            continue
        for folder in _paths(cells[1]):
            out[folder] = Room(folder, int(cells[0]), tuple(_paths(cells[3])),
                               cells[3].lower().startswith("anything below"))
    if not out:
        raise SystemExit(f"{doc}: no table of floors (| floor | folder | what | may import |)")
    return out


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def folder_of(path: str, table: dict[str, Room]) -> str | None:
    """The longest folder of the table that ``path`` (a/b/c.py or a module a.b.c) lies
    under."""
    path = path.removesuffix(".py").replace(".", "/")
    found = [f for f in table if _under(path, f)]
    return max(found, key=len) if found else None


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


def product_files() -> list[Path]:
    return [f for top in PRODUCT for f in sorted((ROOT / top).rglob("*.py"))]


def edges(table: dict[str, Room]) -> list[tuple[str, str, str, str]]:
    """(from folder, to folder, file, module) for every import between two folders."""
    out = []
    for file in product_files():
        rel = file.relative_to(ROOT).as_posix()
        src = folder_of(rel, table)
        if src is None:
            continue
        for module in imports(file):
            dst = folder_of(module, table)
            if dst is not None and dst != src:
                out.append((src, dst, rel, module))
    return out


def allowed(room: Room, module: str, table: dict[str, Room]) -> bool:
    """Whether ``room``'s row lets it import ``module``."""
    path = module.replace(".", "/")
    if room.anything_below:
        dst = folder_of(module, table)
        return dst is not None and table[dst].floor < room.floor
    return any(_under(path, entry) for entry in room.may_import)


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


def problems(table: dict[str, Room] | None = None) -> dict[str, list[str]]:
    """Everything that breaks the house, by kind (each list empty when all is well)."""
    table = rooms() if table is None else table
    all_edges = edges(table)
    up_rows = [f"{r.folder} (floor {r.floor}) may import {e} (floor {table[d].floor})"
               for r in table.values() for e in r.may_import
               for d in [folder_of(e, table)] if d is None or table[d].floor > r.floor]
    forbidden = [f"{file} imports {module} ({src} may not import {dst})"
                 for src, dst, file, module in all_edges
                 if not allowed(table[src], module, table)]
    unplaced = [f.relative_to(ROOT).as_posix() for f in product_files()
                if folder_of(f.relative_to(ROOT).as_posix(), table) is None
                and f.relative_to(ROOT).as_posix() not in UNPLACED_OK]
    return {
        "forbidden": forbidden,
        "rows allowing an import up": up_rows,
        "circles": [" <-> ".join(g) for g in circles({(a, b) for a, b, _, _ in all_edges})],
        "files in no row": unplaced,
    }


FAILING = ("forbidden", "rows allowing an import up", "circles", "files in no row")


def main() -> int:
    found = problems()
    print(", ".join(f"{kind}: {len(lines)}" for kind, lines in found.items()))
    for kind, lines in found.items():
        for line in lines:
            print(f"  {kind}: {line}")
    return 1 if any(found[kind] for kind in FAILING) else 0


if __name__ == "__main__":
    sys.exit(main())
