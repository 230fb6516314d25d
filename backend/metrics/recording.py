"""The recording rule Railyard ships for its one expensive live query.

The per-broker fetcher lag the /throttles lag chart draws (replica_lag_sum_per_broker)
sums every follower's ConsumerLag series: 400k at 200k partitions, 6-13 s per evaluation
on a 2-core machine, and a range query over an hour of it never finishes in a page's time.
Prometheus evaluates the rule once per RULES_INTERVAL_SECONDS instead, and the client reads
one recorded series per broker. Not at the scrape interval: one evaluation takes longer
than a 5 s scrape, so Prometheus would evaluate back to back and keep a core busy; a
minute's age does not change a lag chart.

No rule for the bytes replicas still have to copy (replica_bytes_behind): its join reads
every replica's log size (600k series at 200k partitions, 15-60 s per evaluation) and kept
Prometheus busy for every other query. Live pages ask it for the partitions in flight only
(backend.services.monitoring), which costs tens of milliseconds.

Railyard's own Prometheus (`railyard prometheus up`, `railyard demo`) loads the rule; for
your own Prometheus, `recording_rules(dialect)` is the file to add to ``rule_files`` (see
docs/recording-rules.md). Without it the client falls back to the full expression.
"""

from __future__ import annotations

from backend.metrics import catalog

RULES_FILE = "railyard-recording.rules.yml"
RULES_INTERVAL_SECONDS = 60.0
BY = "broker"  # the rules are written for the label the scrape config puts on brokers
RECORDED = {  # catalog concept -> the series its rule records
    "replica_lag_sum_per_broker": f"railyard:replica_lag:sum_by_{BY}",
}


def recording_rules(dialect: str = "strimzi",
                    interval: float = RULES_INTERVAL_SECONDS) -> dict:
    """The rule file (Prometheus's YAML as a dict) for a naming dialect, evaluated every
    ``interval`` seconds."""
    return {"groups": [{"name": "railyard-recording", "interval": f"{round(interval * 1000)}ms",
                        "rules": [
        {"record": record, "expr": catalog.promql(concept, dialect, by=BY)}
        for concept, record in RECORDED.items()]}]}


def recorded_name(concept: str, by: str) -> str | None:
    """The recorded series standing for ``concept``, when a rule records it for ``by``."""
    return RECORDED.get(concept) if by == BY else None
