"""A grid column is a count (thousands separators, right-aligned, sorted as a number) or an
identifier (broker 1001, shown as it is), judged by the words of its name: the batch
table's "partitions" and the quota replay's "partitions_admitted" were shown as
identifiers because their names contain "partition"."""

from __future__ import annotations

import pandas as pd
import pytest

from components.tables import (
    BYTE_RATE,
    BYTES,
    CELL_PAD_PX,
    FILTER_BUTTON_PX,
    column,
    number_column,
    sized,
    text_px,
)


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


@pytest.mark.parametrize(("col", "word"), [
    (number_column("max_lag", "max lag (messages)"), "(messages)"),
    (number_column("headroom"), "headroom"),
    ({"field": "pause_reason"}, "Reason"),  # AG Grid's title of the field
])
def test_a_column_is_as_wide_as_its_longest_header_word(col, word):
    """AG Grid broke "replicas" into "replic as" in a 92 px column: a column is at least
    its padding, its filter button and its longest header word wide."""
    assert sized(col)["minWidth"] >= CELL_PAD_PX + FILTER_BUTTON_PX + text_px(word)
    assert sized(col, filterable=False)["minWidth"] >= CELL_PAD_PX + text_px(word)


def test_a_formatted_value_shows_whole():
    """Bytes in at 1024 px read "4.21 ...": a column is as wide as its widest value."""
    rate = sized(number_column("bytes_in", "in", BYTE_RATE))
    assert rate["minWidth"] >= CELL_PAD_PX + text_px("99.9 MB/s")
    assert sized({**number_column("b", "b", BYTES), "width": 40})["width"] >= \
        CELL_PAD_PX + text_px("1.61 GB")  # a fixed width too


def test_text_widths_are_never_below_what_the_browser_draws():
    """DejaVu Sans at 14 px as chromium measured it (the widest of the usual sans)."""
    drawn = {"headroom": 71.2, "(messages)": 81.1, "replicas": 54.3, "approvals": 68.4,
             "window": 53.1, "74.9 MB/s": 69.3, "12,345,678": 80.2, "reassignment": 96.0}
    assert all(text_px(t) >= px for t, px in drawn.items()), {t: text_px(t) for t in drawn}
