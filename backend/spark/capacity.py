"""A fleet's capacity forecasts in one Spark job: every cluster's partition history (its
daily peaks from its own Prometheus) grouped by cluster, the forecast engine run per
cluster in pandas UDFs, one time-to-limit table for the fleet back.

The engine is the same one /capacity and `railyard capacity forecast` run, so a cluster's
rows here equal its forecast there."""

from __future__ import annotations

import numpy as np
import pandas as pd

from backend.engines import forecast as fc
from backend.errors import BadInput
from backend.model.snapshot import Limits

CLUSTER_SERIES = "__cluster__"  # the cluster's own replicas series among its brokers'
UNLIMITED = -1  # a missing limit in the long frame (Spark longs have no None in arrays)
INPUT = ("cluster_order long, series string, time double, value double, "
         "max_broker_partitions long, max_partitions long")
COLUMNS = {"cluster_order": "long", "cluster": "string", "scope": "string",
           "limit_name": "string", "limit": "long", "now": "double",
           "growth_per_day": "double", "days": "double", "earliest_days": "double",
           "latest_days": "double", "brokers_to_add": "long",
           "brokers_to_add_cautious": "long", "error": "string"}


def long_frame(histories: list[dict]) -> pd.DataFrame:
    """One row per (cluster, series, day): what Spark groups by cluster."""
    parts = []
    for order, h in enumerate(histories):
        values = np.vstack([h["broker_values"], np.asarray(h["cluster_values"])[None, :]])
        names = [*h["brokers"], CLUSTER_SERIES]
        n_series, n_days = values.shape
        lim: Limits = h["limits"]
        parts.append(pd.DataFrame({
            "cluster_order": order, "series": np.repeat(names, n_days),
            "time": np.tile(np.asarray(h["times"], np.float64), n_series),
            "value": values.ravel(),
            "max_broker_partitions": UNLIMITED if lim.max_broker_partitions is None
            else lim.max_broker_partitions,
            "max_partitions": UNLIMITED if lim.max_partitions is None else lim.max_partitions}))
    return pd.concat(parts, ignore_index=True)


def cluster_rows(name: str, part: pd.DataFrame, scenario: fc.Scenario, by_days: float
                 ) -> list[dict]:
    """One cluster's time-to-limit rows from its slice of the long frame."""
    wide = part.pivot_table(index="series", columns="time", values="value", aggfunc="max")
    brokers = [s for s in wide.index if s != CLUSTER_SERIES]
    brokers.sort(key=lambda b: (0, int(b), "") if b.isdigit() else (1, 0, b))
    mbp, mp = (int(part[c].iloc[0]) for c in ("max_broker_partitions", "max_partitions"))
    limits = Limits(None if mbp == UNLIMITED else mbp, None if mp == UNLIMITED else mp)
    answer = fc.forecast(wide.columns.to_numpy(np.float64), brokers,
                         wide.loc[brokers].to_numpy(np.float64),
                         wide.loc[CLUSTER_SERIES].to_numpy(np.float64), limits, scenario, by_days)
    add = answer["brokers_to_add"]
    return [{"cluster": name, **r, "brokers_to_add": add["likely"]["brokers_to_add"],
             "brokers_to_add_cautious": add["cautious"]["brokers_to_add"], "error": None}
            for r in answer["table"]]


def fleet_forecast(spark, histories: list[dict], scenario: fc.Scenario = fc.AS_IS,
                   by_days: float = 90.0) -> pd.DataFrame:
    """Every cluster's time-to-limit rows, the fleet's most urgent first."""
    names = [h["cluster"] for h in histories]
    columns = list(COLUMNS)

    def per_cluster(part: pd.DataFrame) -> pd.DataFrame:
        order = int(part["cluster_order"].iloc[0])
        try:
            rows = cluster_rows(names[order], part, scenario, by_days)
        except BadInput as e:
            rows = [{"cluster": names[order], "error": str(e)}]
        return pd.DataFrame([{**dict.fromkeys(columns), **r, "cluster_order": order}
                             for r in rows], columns=columns)

    frame = spark.createDataFrame(long_frame(histories), INPUT)
    schema = ", ".join(f"{k} {v}" for k, v in COLUMNS.items())
    out = frame.groupBy("cluster_order").applyInPandas(per_cluster, schema).toPandas()
    out["urgency"] = out["days"].fillna(np.inf)
    out = out.sort_values(["urgency", "cluster_order", "scope"], kind="stable")
    return out.drop(columns=["urgency", "cluster_order"]).reset_index(drop=True)
