"""The house rules a script or a scan can check: imports follow docs/architecture.md's
"may import" column, modules cite public sources, and no public name is kept alive by
tests alone."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("backend", "dashboard", "pages", "components", "scripts")


def product_files() -> list[Path]:
    return [f for d in PRODUCT for f in sorted((ROOT / d).rglob("*.py"))]


def import_graph():
    spec = importlib.util.spec_from_file_location("import_graph",
                                                  ROOT / "scripts" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module
    spec.loader.exec_module(module)
    return module


def test_every_import_is_in_its_rows_may_import_column():
    """scripts/import_graph.py on the code as it is: nothing forbidden."""
    graph = import_graph()
    found = graph.problems()
    assert {kind: found[kind] for kind in graph.FAILING} == {
        "forbidden": [], "rows allowing an import up": [], "circles": [],
        "files in no row": []}


def test_a_forbidden_import_fails_the_check(monkeypatch, capsys):
    graph = import_graph()
    table = graph.rooms()
    assert graph.allowed(table["pages"], "backend.services.whatif", table)
    assert not graph.allowed(table["pages"], "backend.spark.sweeps.SweepCancelled", table)
    assert graph.allowed(table["backend/twin"], "backend.gateways.base.ClusterGateway", table)
    assert not graph.allowed(table["backend/twin"], "backend.gateways.kafka", table)
    assert graph.allowed(table["backend/cli"], "dashboard.server", table)
    real = graph.edges
    monkeypatch.setattr(graph, "edges", lambda t: [*real(t), (
        "pages", "backend/spark", "pages/whatif.py", "backend.spark.sweeps.SweepCancelled")])
    assert graph.main() == 1
    assert "pages/whatif.py imports backend.spark.sweeps.SweepCancelled (pages may not " \
        "import backend/spark)" in capsys.readouterr().out


def test_docs_architecture_lists_every_service():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    folder = ROOT / "backend" / "services"
    modules = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
    packages = [p.name for p in folder.iterdir() if (p / "__init__.py").exists()]
    services = sorted(modules + packages)
    unlisted = [s for s in services if f"`{s}`" not in text and f"`{s}/`" not in text]
    assert unlisted == []


def test_modules_cite_public_sources_not_a_file_outside_the_repository():
    citing = [f.relative_to(ROOT).as_posix() for f in product_files()
              if "FACTS.md" in f.read_text(encoding="utf-8")]
    assert citing == []


def test_one_class_named_store():
    """backend.store.Store is the plan store; the cache's backend has its own name."""
    defining = [f.relative_to(ROOT).as_posix() for f in product_files()
                for node in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
                if isinstance(node, ast.ClassDef) and node.name == "Store"]
    assert defining == ["backend/store/store.py"]


def used_names() -> set[str]:
    """Every name the product reads: names, attributes, imported names."""
    out: set[str] = set()
    for f in product_files():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                out.add(node.id)
            elif isinstance(node, ast.Attribute):
                out.add(node.attr)
            elif isinstance(node, ast.ImportFrom):
                out.update(a.name for a in node.names)
    return out


CHECKED_FOR_DEAD_CODE = ("backend/spark", "backend/metrics", "components/banners.py",
                         "components/charts.py", "components/monitor.py",
                         "components/timerange.py", "components/leftovers.py",
                         "components/tables.py")


def test_no_public_function_is_used_by_tests_alone():
    used = used_names()
    dead = []
    for where in CHECKED_FOR_DEAD_CODE:
        path = ROOT / where
        for f in [path] if path.suffix == ".py" else sorted(path.rglob("*.py")):
            for node in ast.parse(f.read_text(encoding="utf-8")).body:
                if (isinstance(node, ast.FunctionDef | ast.ClassDef)
                        and not node.name.startswith("_") and not node.decorator_list
                        and node.name not in used):
                    dead.append(f"{f.relative_to(ROOT).as_posix()}:{node.name}")
    assert dead == []
