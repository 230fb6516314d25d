"""Lines named as people look for them: a chart of a line per broker (per principal)
lists them in id order, broker 9 before broker 10 (the legend read 1, 10, 100, 11, ...)."""

import pandas as pd

from components import charts

START = 1_796_000_000


def brokers(n: int, prefix: str = "") -> pd.DataFrame:
    """Chart rows of ``n`` brokers over three samples, broker b at b bytes/s."""
    return pd.DataFrame({
        "time": pd.to_datetime([START + 60 * k for b in range(n) for k in range(3)], unit="s"),
        "value": [float(b + 1) for b in range(n) for _ in range(3)],
        "series": [f"{prefix}{b + 1}" for b in range(n) for _ in range(3)]})


def test_lines_are_named_in_broker_id_order():
    """As strings the legend read 1, 10, 100, 11, ...: broker 57 was nowhere to look."""
    names = [t["name"] for t in charts.time_series(brokers(100), "t", "messages")["data"]]
    assert names == [str(b) for b in range(1, 101)]
    rates = pd.concat([brokers(12, "leader "), brokers(12, "follower ")])
    names = [t["name"] for t in charts.time_series(rates, "t", "bytes/s")["data"]]
    assert names == [f"follower {b}" for b in range(1, 13)] + \
        [f"leader {b}" for b in range(1, 13)]
    assert [charts.by_id(n) < charts.by_id(m) for n, m in (("9", "10"), ("a-2", "a-10"),
                                                           ("tenant", "tenant/2"))] == \
        [True, True, True]
    # a principal's name is what its client chose: any text sorts, digits or not
    assert sorted(["x²", "²", "٣", "app-1", "3"], key=charts.by_id) == \
        ["3", "app-1", "x²", "²", "٣"]
