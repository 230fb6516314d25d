"""The plan page's Throttle fact said "2,000,000 B/s" while the propose form asks MB/s (a
new user's report): the fact reads in both, bytes/s as Kafka's configs, --throttle and
the API count them and MB/s as the form asks them, the adaptive floor too."""

from __future__ import annotations

from tests.unit import test_api
from tests.unit.test_api import basic
from tests.unit.test_plan_page_follow import fact
from tests.unit.test_plan_page_pause import page

env = test_api.env  # the API tests' app on a twin, with a user per role


def throttle_fact(env, **extra) -> str:
    """The Throttle fact of a plan proposed through the API with ``extra``."""
    made = env["client"].post("/api/v1/plans", json={**env["body"], **extra},
                              headers=basic("operator1"))
    assert made.status_code == 201, made.get_json()
    with env["client"].application.test_request_context("/api/v1/x",
                                                        headers=basic("operator1")):
        return fact(page().layout(plan_id=str(made.get_json()["id"])), "Throttle")


def test_the_throttle_fact_reads_in_bytes_and_in_the_forms_mb(env):
    assert throttle_fact(env, throttle=2_000_000) == "2,000,000 B/s (2 MB/s)"
    assert throttle_fact(env, throttle=12_345_679) == "12,345,679 B/s (12.345679 MB/s)"
    assert throttle_fact(env, throttle=200_000) == "200,000 B/s (0.2 MB/s)"
    assert throttle_fact(env, throttle=1) == "1 B/s (0.000001 MB/s)"  # no 1e-06
    assert throttle_fact(env, throttle=5_000_000, throttle_mode={
        "mode": "adaptive", "floor": 500_000}) == (
        "5,000,000 B/s (5 MB/s) (adaptive: the ceiling; floor 500,000 B/s, 0.5 MB/s)")
