"""/throttles in the browser while Railyard moves data on Apache Kafka: the session's three
brokers, `railyard serve` with the Kafka gateway and a real Prometheus scraping the brokers'
JMX exporters (tests/integration/test_kafka_plan_flow.py's stack, on this module's own
topic). The operator signs in, a drain approved by a second user runs with a throttle,
and the page shows the move: partitions reassigning (Prometheus), the throttle engine's
prediction at the throttle Railyard set, counted from the bytes the new replicas still
lack, and both KIP-73 rates by name on the chart of throttled bytes per broker."""

from __future__ import annotations

import contextlib
import time

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By

from backend.metrics.client import MetricsError
from backend.model.snapshot import Limits
from backend.services import monitoring
from backend.services.cluster import ClusterSource
from tests.e2e.conftest import console_errors, screenshot, sign_in, wait
from tests.e2e.test_dashboard_live import card_value
from tests.integration.test_kafka_plan_flow import (  # noqa: F401 (fixtures)
    USERS,
    execute_and_wait_in_flight,
    stack,
    topic,
    wait_ended,
)
from tests.kafka_moves import in_flight, wait_until

pytestmark = pytest.mark.e2e

# bytes/s: the two 3 MiB moves into brokers 1 and 2 stay in flight for ~80 s, so the count
# the page shows (Prometheus scrapes, the page refreshes) holds still long enough to be read
# under load (at 60 kB/s, ~50 s, a CI run beside the browser tests once saw none of it);
# the test cancels the move once it has seen it
THROTTLE = 40_000


def written(stack, topic: str) -> float | None:  # noqa: F811
    """The topic's produce bytes/s as the cluster read takes it (Prometheus, over the last
    minute); None before Prometheus has a rate for it."""
    with contextlib.suppress(MetricsError):
        frame = stack.metrics.instant("bytes_in_per_topic")
        mine = frame.loc[frame["topic"] == topic, "value"]
        return float(mine.sum()) if len(mine) else None
    return None


def test_throttles_page_shows_the_move_on_apache_kafka(browser, stack, topic):  # noqa: F811
    sign_in(browser, stack.dashboard.url, "olga", USERS["olga"][1])
    # the topic's fill is a burst of writes: while it is inside Prometheus' one-minute rate
    # window, the write rate the throttle engine reads is above the throttle, and the
    # Predicted ETA rightly says "never" (KIP-73: a throttle at or below the writes it must
    # keep up with never catches up). A CI run saw only that, the whole move long.
    wait_until(lambda: written(stack, topic) == 0, 90,
               f"{topic}'s fill to leave Prometheus' rate window")
    plan_id, _plan = execute_and_wait_in_flight(stack, topic, THROTTLE)
    try:
        browser.get(stack.dashboard.url + "/throttles?cluster=kafka")
        # a card the page redraws between finding and reading it is looked up again
        waiter = wait(browser, 75)
        # the page's counts are the moves in flight now (a 1 MiB partition can finish with
        # its first fetch, before the throttle bites: KIP-73 admits the first response)
        seen = []  # every distinct (s since the page was asked, in flight, cards) read

        def shows_the_move(b) -> bool:
            n = len(in_flight(stack.gw, [topic]))
            now = [n, b.find_element(By.ID, "th-eta").text, card_value(b, "Reassigning")]
            if not seen or seen[-1][1:] != now:
                seen.append([round(time.monotonic() - asked, 1), *now])
            return n > 0 and f"{n} moves at {THROTTLE / 1e6:.2f} MB/s" in now[1] and \
                now[2] == f"{n} partitions"
        asked = time.monotonic()
        try:
            waiter.until(shows_the_move)
        except TimeoutException:
            raise AssertionError("the page never showed the moves in flight; seen (s, in "
                                 f"flight, ETA line, Reassigning card): {seen}") from None
        # the bars of throttled bytes/s per broker carry the rates Railyard set, by name
        for key in ("leader", "follower"):
            waiter.until(lambda b, key=key: f"{key}.replication.throttled.rate = "
                       f"{THROTTLE // 1000} kB/s" in b.page_source)
        # the Predicted ETA counts from now: Prometheus' bytes behind name the new replicas
        # by the broker ids Kafka lists them on, and part of each log is copied already
        waiter.until(lambda b: "from now, for the bytes their new replicas still lack"
                   in b.find_element(By.ID, "th-eta").text)
        source = ClusterSource("kafka", None, Limits(), gateway=stack.gw)

        def from_now_and_shorter() -> tuple[float, float] | None:
            with contextlib.suppress(MetricsError):  # Prometheus slow: ask again
                behind = stack.metrics.instant("replica_bytes_behind_in", topics=topic)
                now, start = (monitoring.predicted_eta(source, behind),
                              monitoring.predicted_eta(source))
                if now["from_now"] and None not in (now["eta_seconds"], start["eta_seconds"]) \
                        and now["eta_seconds"] < start["eta_seconds"]:
                    return now["eta_seconds"], start["eta_seconds"]
            return None
        wait_until(from_now_and_shorter, 30,
                   "the predicted ETA from now below the one from the moves' start")
        assert in_flight(stack.gw, [topic]), "the move ended before the page showed it"
        screenshot(browser, "throttles-apache-kafka-move")
        assert "Traceback" not in browser.page_source
        assert console_errors(browser) == []
    finally:
        if stack.plan(plan_id)["state"] == "executing":  # no need to wait for the end
            stack.call("olga", "POST", f"/plans/{plan_id}/cancel")
        assert wait_ended(stack, plan_id, 60)["state"] in ("cancelled", "completed")
