"""`railyard capacity forecast|fleet`: when the KIP-578 limits are reached, from Prometheus
history, for one cluster of a dashboard config or for every cluster on Spark.

Exit 3 when a source does not answer (Prometheus, Spark), with one line saying which."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from backend.cli import (
    counts_spec,
    non_negative_int,
    number,
    partition_limit,
    positive_int,
    verb_parser,
)
from backend.engines.forecast import Scenario
from backend.errors import BadInput, Unavailable

UNAVAILABLE_EXIT = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "capacity")
    actions = p.add_subparsers(dest="action", required=True)
    f = actions.add_parser("forecast", help="one cluster: time to each limit, brokers to add")
    f.add_argument("--config", required=True, metavar="FILE", help="the dashboard's YAML config")
    f.add_argument("--cluster", help="a cluster of the config (default: the first)")
    add_knobs(f)
    f.set_defaults(func=_forecast)
    fl = actions.add_parser("fleet", help="every cluster of the config in one Spark job")
    fl.add_argument("--config", required=True, metavar="FILE", help="the dashboard's YAML config")
    add_knobs(fl)
    fl.add_argument("--spark-master", help="default: the config's spark section")
    fl.add_argument("--spark-remote", help="Spark Connect sc://host:port instead")
    fl.set_defaults(func=_fleet)


def add_knobs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window", type=positive_int, default=30, choices=(7, 30, 90),
                   help="days of history to fit (default 30)")
    p.add_argument("--end", metavar="YYYY-MM-DDTHH:MM", help="history up to this UTC time "
                   "(default: now); the forecast is made as of then")
    p.add_argument("--by", metavar="YYYY-MM-DD", help="plan brokers to add by this date "
                   "(default: 90 days from now)")
    p.add_argument("--growth-pct-month", type=number, default=0.0,
                   help="extra growth: this %% of today's count each month")
    p.add_argument("--add-brokers", type=non_negative_int, default=0,
                   help="brokers added and filled to the average")
    p.add_argument("--max-broker-partitions", type=partition_limit,
                   help="raise the limit to")
    p.add_argument("--max-partitions", type=partition_limit, help="raise the limit to")
    p.add_argument("--topic", metavar="PARTITIONS:RF", type=counts_spec("PARTITIONS:RF", "100:3"),
                   help="a planned topic created today")


def scenario_of(a: argparse.Namespace) -> Scenario:
    from backend.services.capacity_view import check_growth, check_planned_topic
    check_growth(a.growth_pct_month, "--growth-pct-month")
    partitions, rf = 0, 1
    if a.topic:
        try:
            partitions, rf = (int(x) for x in a.topic.split(":"))
        except ValueError:
            raise BadInput(f"--topic: expected PARTITIONS:RF like 100:3, got '{a.topic}'") \
                from None
        check_planned_topic(partitions, rf, "--topic")
    s = Scenario(a.growth_pct_month, a.add_brokers, a.max_broker_partitions, a.max_partitions,
                 partitions, rf)
    s.validate()
    return s


def end_of(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(f"--end: expected a UTC time like 2025-06-30T12:00, got '{text}'") \
            from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def by_days(text: str | None, now: datetime | None = None) -> float:
    """Days from ``now`` to the date a plan is for (90 without one)."""
    if not text:
        return 90.0
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise BadInput(f"--by: expected a date like 2025-06-30, got '{text}'") from None
    days = (day - (now or datetime.now(UTC))).total_seconds() / 86_400
    if days < 0:
        raise BadInput(f"--by {text} is before the forecast is made")
    return days


def _runtime(config_path: str):
    """The clusters of a dashboard config as the dashboard reads them (the gateway each
    config names)."""
    from backend.gateways.factory import open_gateway
    from dashboard.config import load_config
    from dashboard.runtime import Runtime
    config = load_config(config_path)
    opened = {c.name: open_gateway(c) for c in config.clusters}
    return Runtime(config, cache=None,
                   gateways={name: gw for name, gw in opened.items() if gw is not None})


def _source(config_path: str, name: str | None):
    rt = _runtime(config_path)
    known = [c.name for c in rt.config.clusters]
    if name is not None and name not in known:
        raise BadInput(f"--cluster: '{name}' is not in {config_path} (known: {', '.join(known)})")
    return rt.source(name)


def _unavailable(verb: str, e: Unavailable):
    sys.stderr.write(f"railyard capacity {verb}: unavailable: {e}\n")
    raise SystemExit(UNAVAILABLE_EXIT)


def _forecast(a: argparse.Namespace) -> dict:
    from backend.services import capacity
    end = end_of(a.end)
    scenario, days = scenario_of(a), by_days(a.by, end)
    source = _source(a.config, a.cluster)
    try:
        answer = capacity.forecast(source, a.window, scenario, days,
                                   end=None if end is None else end.timestamp())
    except Unavailable as e:
        _unavailable("forecast", e)
    answer.pop("history")
    answer.pop("projection")
    return capacity.to_json(answer)



def _fleet(a: argparse.Namespace) -> dict:
    from backend.services import capacity
    from backend.spark.session import settings_from
    end = end_of(a.end)
    scenario, days = scenario_of(a), by_days(a.by, end)
    rt = _runtime(a.config)
    settings = settings_from(a.spark_master, a.spark_remote, rt.config.spark)
    try:
        return capacity.fleet([rt.source(c.name) for c in rt.config.clusters], a.window,
                              scenario, days, settings,
                              end=None if end is None else end.timestamp())
    except Unavailable as e:
        _unavailable("fleet", e)
