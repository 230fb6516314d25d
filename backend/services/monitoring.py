"""What monitoring pages ask: the guard-rail overview now, or over a window.

Each concept answers on its own: a frame's rows, or the typed error that stopped it
(so one missing metric greys one card, not the page)."""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from backend.metrics import catalog
from backend.metrics.client import MetricsClient, MetricsError
from backend.model.snapshot import Limits


def _answer(concept: str, fetch) -> dict:
    c = catalog.concept(concept)
    try:
        frame: pd.DataFrame = fetch()
    except MetricsError as e:
        return {"ok": False, "error": type(e).__name__, "message": str(e), "unit": c.unit}
    return {"ok": True, "unit": c.unit, "help": c.help, "frame": frame}


def overview_now(client: MetricsClient, limits: Limits | None = None,
                 at: datetime | float | None = None,
                 concepts: tuple[str, ...] = catalog.OVERVIEW) -> dict:
    """The overview concepts at one instant, plus partition headroom under the limits."""
    out = {name: _answer(name, lambda n=name: client.instant(n, at=at)) for name in concepts}
    parts = out.get("partitions_per_broker")
    if limits is not None and limits.max_broker_partitions is not None and parts and parts["ok"]:
        frame = parts["frame"].copy()
        frame["limit"] = limits.max_broker_partitions
        frame["headroom"] = frame["limit"] - frame["value"]
        frame["over_limit"] = frame["headroom"] < 0
        out["partition_headroom"] = {"ok": True, "unit": "replicas", "frame": frame}
    return out


def overview_window(client: MetricsClient, start: datetime | float, end: datetime | float,
                    step: str = "15s", concepts: tuple[str, ...] = catalog.OVERVIEW) -> dict:
    """The overview concepts as time series over [start, end]."""
    return {name: _answer(name, lambda n=name: client.range(n, start, end, step))
            for name in concepts}


def to_json(answers: dict) -> dict:
    """The same answers with frames as records (for the CLI and JSON endpoints)."""
    out = {}
    for name, a in answers.items():
        a = dict(a)
        if "frame" in a:
            f = a.pop("frame").copy()
            f["timestamp"] = f["timestamp"].map(lambda t: t.isoformat())
            a["rows"] = f.to_dict(orient="records")
        out[name] = a
    return out
