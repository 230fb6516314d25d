"""A limits sweep's table on the demo (max.broker.partitions=11200,12500; add_brokers=0,1;
workload orders-v2:300:3) read as contradicting itself: "ok ✓" beside "brokers over limit
2, 3", and "brokers at limit" held a count where "brokers over limit" held broker ids.
Both are KIP-578 as Kafka does it (a broker over its limit keeps its partitions and takes
no new one); the headers now say count from ids and the help says what ok means. The
rows' numbers are the engine's, unchanged, and the CSV keeps their names."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from backend.spark.spec import LimitsSpec, Topic
from backend.spark.sweeps import limits_row
from backend.twin.examples import demo_snapshot
from components import tables
from components.help import TERMS
from tests.unit.test_plan_view import text_of
from tests.unit.test_whatif_throttle_network import app, page  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def rows():
    demo = demo_snapshot()
    spec = LimitsSpec("demo", (Topic("orders-v2", 300, 3),), {})
    return pd.DataFrame([
        {"scenario": i, **limits_row(demo, spec, {"max_broker_partitions": mbp,
                                                  "max_partitions": None, "add_brokers": add})}
        for i, (mbp, add) in enumerate((m, a) for m in (11_200, 12_500) for a in (0, 1))])


def test_headers_say_count_from_ids_and_explain_ok_and_over_limit(rows):
    row = rows.iloc[0]
    assert row["ok"] and list(row["brokers_over_limit"]) == [2, 3]  # the engine's, as was
    columns = {c["field"]: c for c in tables.sweep_grid(rows).columnDefs}
    assert columns["brokers_at_limit"]["headerName"] == "brokers at limit (count)"
    assert columns["brokers_over_limit"]["headerName"] == "brokers over limit (ids)"
    assert columns["ok"]["headerTooltip"] == TERMS["sweep ok"]
    assert "keeps its partitions and takes no new one" in TERMS["sweep ok"]
    assert columns["brokers_over_limit"]["headerTooltip"] == TERMS["over limit"]
    assert columns["brokers_at_limit"]["headerTooltip"].startswith("A count")
    # brokers with no room left count those over the limit too (2 and 3 here: 2 at limit)
    assert row["brokers_at_limit"] == 2
    assert "brokers over limit are among them" in columns["brokers_at_limit"]["headerTooltip"]
    # a header is never narrower than its longest word ("(count)")
    assert columns["brokers_at_limit"]["minWidth"] >= tables.CELL_PAD_PX + \
        tables.FILTER_BUTTON_PX + tables.text_px("(count)")
    # the cells are the rows' own: ids as words, counts as numbers
    grid_row = tables.sweep_grid(rows).rowData[0]
    assert grid_row["brokers_over_limit"] == "2, 3"
    assert grid_row["brokers_at_limit"] == row["brokers_at_limit"]


@pytest.mark.usefixtures("app")  # the pages registered
def test_the_page_shows_the_legend_under_a_limit_sweep_only(rows):
    answer = page("/what-if")._sweep_answer("limits", rows, time.monotonic(), [])
    shown = text_of(answer[1])
    assert "so a row can be ok with brokers over the limit" in shown
    assert tables.sweep_legend(pd.DataFrame({"throttle": [1.0]})) is None
    # the CSV keeps the rows' column names for scripts
    assert "brokers_over_limit" in tables.lists_as_text(rows).columns
