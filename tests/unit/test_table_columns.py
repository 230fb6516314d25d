"""A grid column is a count (thousands separators, right-aligned, sorted as a number) or an
identifier (broker 1001, shown as it is), judged by the words of its name: the batch
table's "partitions" and the quota replay's "partitions_admitted" were shown as
identifiers because their names contain "partition"."""

from __future__ import annotations

import pandas as pd
import pytest

from components.tables import column


@pytest.mark.parametrize("name", ["partitions", "partitions_admitted", "brokers", "replicas",
                                  "max_throttle_ms", "plans waiting"])
def test_counts(name):
    assert column(pd.DataFrame({name: [12500]}), name)["type"] == "numericColumn"


@pytest.mark.parametrize("name", ["partition", "broker", "broker id", "plan", "id",
                                  "scenario", "version", "plan_id"])
def test_identifiers(name):
    assert "type" not in column(pd.DataFrame({name: [1001]}), name)


def test_text_and_flags_are_neither():
    frame = pd.DataFrame({"state": ["done"], "alive": [True]})
    assert "type" not in column(frame, "state") and "type" not in column(frame, "alive")
