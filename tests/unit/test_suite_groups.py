"""`make test` runs in two processes: what keeps one Apache Kafka cluster per run and a
module's fixtures started once is the group tests/conftest.py gives each test."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import pytest_collection_modifyitems


class _Item:
    def __init__(self, nodeid: str, fixturenames: tuple[str, ...]) -> None:
        self.nodeid, self.fixturenames, self.marks = nodeid, fixturenames, []

    def add_marker(self, mark) -> None:
        self.marks.append(mark.mark if hasattr(mark, "mark") else mark)

    def group(self) -> str:
        [name] = [m.args[0] for m in self.marks if m.name == "xdist_group"]
        return name


def test_every_kafka_test_in_one_group_the_others_by_module():
    items = [_Item("tests/e2e/test_a.py::test_x", ("kafka_cluster", "browser")),
             _Item("tests/integration/test_b.py::test_y[p]", ("kafka_gateway", "kafka_cluster")),
             _Item("tests/integration/test_b.py::test_z", ("tmp_path",)),
             _Item("tests/unit/test_c.py::test_w", ())]
    pytest_collection_modifyitems(items)
    assert [i.group() for i in items] == ["kafka", "kafka", "tests/integration/test_b.py",
                                          "tests/unit/test_c.py"]
    assert [any(m.name == "kafka" for m in i.marks) for i in items] == [True, True, False,
                                                                       False]


def test_make_test_groups_by_them():
    """Without --dist loadgroup the marks are ignored: each process would start a cluster."""
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    [recipe] = re.findall(r"^test: .*\n\t(.*)$", makefile, re.M)
    assert "--dist loadgroup" in recipe and re.search(r"-n \d", recipe), recipe

