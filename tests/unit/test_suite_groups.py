"""`make test` runs in two processes: what keeps one Apache Kafka cluster per run and a
module's fixtures started once is the scope tests/conftest.py gives each test."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import xdist_scope

TESTS = Path(__file__).parents[1]


def test_every_kafka_module_in_one_scope_the_others_by_module():
    assert [xdist_scope(n) for n in (
        "tests/e2e/test_kafka_throttles_browser.py::test_x",
        "tests/integration/test_kafka_plan_flow.py::test_y[past-the-lend]",
        "tests/integration/test_store.py::test_z[sqlite]",
        "tests/unit/test_kafka_dist.py::test_w",
        "tests/unit/test_store_json.py::test_v")] == [
        "kafka", "kafka", "tests/integration/test_store.py", "kafka",
        "tests/unit/test_store_json.py"]


def test_every_module_on_the_kafka_cluster_is_a_test_kafka_module():
    """A module using the session's cluster under another name would be run by the other
    process too, which would start a second cluster."""
    on_kafka = {p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")
                if re.search(r"\bkafka_cluster\b|\bkafka_gateway\b|test_kafka_plan_flow import",
                             p.read_text()) and p.name != Path(__file__).name}
    assert on_kafka and {m for m in on_kafka if xdist_scope(m) != "kafka"} == set()


def test_make_test_runs_two_processes():
    makefile = (TESTS.parent / "Makefile").read_text()
    [recipe] = re.findall(r"^test: .*\n\t(.*)$", makefile, re.M)
    assert re.search(r"-n 2\b", recipe), recipe
