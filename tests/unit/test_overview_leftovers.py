"""The Overview's leftover throttles through its callbacks: listed with when Railyard
first saw them, a Propose button for admins only (the service refuses anyone else
anyway), and the clear plan's own page listing the configs it deletes."""

from __future__ import annotations

import time

import dash
import pytest
from werkzeug.security import generate_password_hash

from backend.services import plans
from backend.services.cluster import CLUSTER_TTL_SECONDS
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard import ids, runtime
from dashboard.config import parse_config
from tests.unit.test_plan_view import as_user, page, text_of

USERS = {"ines": "admin", "olga": "operator"}
RATE = "leader.replication.throttled.rate"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("leftovers")
    twin = TwinCluster(generate_snapshot(4, 2, 3, 12, 3, seed=3, cluster="demo"))
    twin.alter_configs("broker", "2", {RATE: "5000000"})
    app = create_app(parse_config({
        "clusters": [{"name": "demo", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"}}],
        "cache": {"background_dir": str(tmp / "cache")},
        "store": {"url": f"sqlite:///{tmp / 'railyard.db'}"},
        "auth": {"secret_key_file": str(tmp / "key"), "users": [
            {"name": n, "role": r, "password_hash": generate_password_hash("x")}
            for n, r in USERS.items()]}}), gateways={"demo": TwinGateway(twin)})
    return app


def leftovers_as(app, user: str, shown: str | None = None, range_: str = "1h"):
    """What the list callback answers: (children, rows, button hidden), or no_update x3
    when it is unchanged from ``shown`` (the digest it answered before)."""
    ctx = as_user(app, user)
    try:
        return page("/").show_leftovers({"cluster": "demo", "range": range_}, 0, shown)[:3]
    finally:
        ctx.pop()


def test_leftovers_are_listed_and_only_admins_get_the_button(app):
    shown, rows, hidden = leftovers_as(app, "ines")
    assert not hidden and [(r["entity_type"], r["name"], r["key"], r["value"])
                           for r in rows] == [("broker", "2", RATE, "5000000")]
    words = text_of(shown)
    assert "broker 2" in words and RATE in words and "5000000" in words
    assert "first seen by Railyard" in words and "does not record when a config was set" in words
    assert leftovers_as(app, "olga")[2] is True


def test_admin_proposes_the_listed_configs_and_its_page_shows_them(app):
    _, rows, _ = leftovers_as(app, "olga")
    ctx = as_user(app, "olga")
    try:  # a forged click by an operator: the service refuses it
        href, error = page("/").propose_clear(1, rows, {"cluster": "demo"})
    finally:
        ctx.pop()
    assert error.startswith("Refused: the operator role may not clear_throttles")
    ctx = as_user(app, "ines")
    try:
        href, error = page("/").propose_clear(1, rows, {"cluster": "demo"})
        plan_id = int(href.rsplit("/", 1)[1])
        layout = page("/plans/<plan_id>").layout(plan_id=str(plan_id))
    finally:
        ctx.pop()
    assert error == ""
    plan = plans.get(runtime.current().plan_store(), plan_id)
    assert plan.kind == "clear_throttles" and plan.author == "ines"
    assert plan.content["configs"] == [{"entity_type": "broker", "name": "2", "key": RATE,
                                        "value": "5000000"}]
    table = _find(layout, ids.PV_CLEAR_CONFIGS)
    assert "broker 2" in text_of(table) and "5000000" in text_of(table)
    assert leftovers_as(app, "ines")[1][0]["clear_plan"] == plan_id


def _find(component, wanted: str):
    if getattr(component, "id", None) == wanted:
        return component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            found = _find(child, wanted)
            if found is not None:
                return found
    return None


def _past_the_cap() -> list[dict]:
    """Seven configs more than the list draws."""
    from components.leftovers import SHOWN_ROWS

    return [{"entity_type": "topic", "name": f"t{i}", "key": "x", "value": "0:1",
             "first_seen": 0.0, "clear_plan": None, "moving": False}
            for i in range(SHOWN_ROWS + 7)]


def test_a_long_list_draws_its_first_rows_and_says_how_many_more():
    from components.leftovers import SHOWN_ROWS, config_table

    grid, more = config_table(_past_the_cap()).children
    assert len(grid.rowData) == SHOWN_ROWS and "and 7 more" in text_of(more)


def _components(component) -> int:
    children = getattr(component, "children", None)
    return 1 + sum(_components(c) for c in (children if isinstance(children, list) else
                                             [children]) if hasattr(c, "_type"))


def test_a_long_list_is_a_few_components_not_one_per_cell():
    """Dash re-checks every component on a page on each callback answer: the Overview's
    500-row list as HTML cells (~3,500 components) slowed each range change's charts (the
    demo's 68 configs alone: p95 385 ms, 165 ms as one grid; benchmarks/bench_dashboard)."""
    from components.leftovers import config_table

    assert _components(config_table(_past_the_cap())) <= 3


def test_a_range_change_or_refresh_leaves_an_unchanged_list_as_it_is(app):
    ctx = as_user(app, "ines")
    try:
        first = page("/").show_leftovers({"cluster": "demo", "range": "1h"}, 0, None)
        again = page("/").show_leftovers({"cluster": "demo", "range": "24h"}, 1, first[3])
    finally:
        ctx.pop()
    assert first[1] and all(v is dash.no_update for v in again)
    twin = runtime.current().source("demo").gateway.twin
    twin.alter_configs("broker", "3", {RATE: "7000000"})
    time.sleep(CLUSTER_TTL_SECONDS + 0.1)  # past the cluster-read cache: the new config is read
    try:
        ctx = as_user(app, "ines")
        changed = page("/").show_leftovers({"cluster": "demo", "range": "24h"}, 2, first[3])
    finally:
        ctx.pop()
        twin.alter_configs("broker", "3", delete=[RATE])
        time.sleep(CLUSTER_TTL_SECONDS + 0.1)  # the next reader sees the module's twin again
    assert ("broker", "3") in {(r["entity_type"], r["name"]) for r in changed[1]}
    assert changed[3] != first[3]


def test_a_clear_plan_that_slows_a_move_in_flight_warns_its_approver():
    """A clear plan naming the throttles of a reassignment in flight (the service records
    them in its preview) says on its page what executing it does to that move."""
    from backend.services.plan_preview import Draft
    from dashboard.plan_views.kinds import clear_throttles

    configs = [{"entity_type": "broker", "name": n, "key": RATE, "value": "1000"}
               for n in ("10", "9")] + [{"entity_type": "topic", "name": "orders",
                                          "key": "leader.replication.throttled.replicas",
                                          "value": "0:1"}]
    moving = [{k: c[k] for k in ("entity_type", "name", "key")} for c in configs]
    draft = Draft("clear_throttles", "demo", "t", {"configs": 3, "in_flight": moving},
                  frozen={"configs": configs})
    words = text_of(clear_throttles.block(draft))
    assert ("3 of these configs slowed a reassignment in flight when the plan was proposed "
            "(on brokers 9, 10; topic orders): deleting them lets that move copy "
            "unthrottled") in words
    calm = Draft("clear_throttles", "demo", "t", {"configs": 3, "in_flight": []},
                 frozen={"configs": configs})
    assert "reassignment in flight" not in text_of(clear_throttles.block(calm))
