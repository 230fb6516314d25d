"""The audit log page by page (issue 26 item 4): a plan that wrote more than 1,000 rows
is reachable from its proposal to its last row over /api/v1/audit, with a total and a
cursor, in chain order; /audit's table folds each batch's config changes into one row."""

from __future__ import annotations

import base64
from datetime import timedelta
from urllib.parse import quote

import pytest
from werkzeug.security import generate_password_hash

from backend.services import plans
from backend.store.audit import append
from dashboard.config import parse_config
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves, orders_cluster

SNAP = orders_cluster()
CONFIGS_PER_BATCH = 600


def seed(store) -> tuple[int, int]:
    """Plan A: proposed, approved, then two batches of 600 config changes each, with a
    few rows of plan B in between; (A's id, A's row count)."""
    a, b = (plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                          content=moves(("orders", p, [3, 4])), preview={}, snapshot=SNAP,
                          now=T0).id for p in (0, 1))
    plans.approve(store, APPROVER, a, sha256=plans.get(store, a).sha256,
                  topics_of=lambda *_: SNAP, now=T0)
    at = T0 + timedelta(minutes=1)
    with store.write() as conn:
        for batch in range(2):
            append(conn, at=at, user="railyard", action="batch_started", plan_id=a,
                   detail={"batch": batch})
            for i in range(CONFIGS_PER_BATCH):
                append(conn, at=at, user="railyard", action="config_set", plan_id=a,
                       detail={"entity_type": "broker", "name": str(i), "set": {}})
            append(conn, at=at, user="railyard", action="note", plan_id=b)
            append(conn, at=at, user="railyard", action="batch_finished", plan_id=a,
                   detail={"batch": batch})
    return a, 2 + 2 * (CONFIGS_PER_BATCH + 2)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from dashboard import runtime
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("audit-pages")
    doc = {"clusters": [{"name": "c1", "gateway": {"type": "twin",
                                                   "url": "http://127.0.0.1:9"}}],
           "cache": {"background_dir": str(tmp / "cache")},
           "store": {"url": f"sqlite:///{tmp / 'railyard.db'}",
                     "audit_key_file": str(tmp / "audit_keys")},
           "auth": {"secret_key_file": str(tmp / "key"), "users": [
               {"name": "vic", "role": "viewer", "password_hash": generate_password_hash(
                   "pw", method="pbkdf2:sha256:1000")}]}}
    app = create_app(parse_config(doc, "cfg"), gateways={})
    store = runtime.current().plan_store()
    plan_id, rows = seed(store)
    token = base64.b64encode(b"vic:pw").decode()
    return {"app": app, "client": app.server.test_client(), "plan": plan_id, "rows": rows,
            "headers": {"Authorization": f"Basic {token}"}}


def get(env, query: str):
    return env["client"].get(f"/api/v1/audit?{query}", headers=env["headers"])


def test_every_row_of_a_long_plan_is_reachable_from_its_proposal(env):
    first = get(env, f"plan={env['plan']}").get_json()
    assert first["total"] == env["rows"] > 1000
    assert len(first["entries"]) == 1000 and first["next"] is not None
    assert [e["action"] for e in first["entries"][:3]] == ["propose", "approve",
                                                          "batch_started"]
    rest = get(env, f"plan={env['plan']}&after={first['next']}").get_json()
    assert rest["next"] is None and rest["total"] == env["rows"]
    ids = [e["id"] for e in first["entries"] + rest["entries"]]
    assert len(ids) == env["rows"] and ids == sorted(set(ids))
    assert rest["entries"][-1]["action"] == "batch_finished"
    since = get(env, f"plan={env['plan']}&since=2026-01-01T00:00:00Z").get_json()
    assert since["total"] == env["rows"] and since["entries"][0]["action"] == "propose"


def test_pages_of_any_size_newest_first_and_bad_cursors(env):
    pages, after = [], ""
    while True:
        page = get(env, f"order=newest&limit=400{after}").get_json()
        pages.append(page["entries"])
        if page["next"] is None:
            break
        after = f"&after={page['next']}"
    ids = [e["id"] for p in pages for e in p]
    assert len(ids) == page["total"] and ids == sorted(ids, reverse=True)
    assert [len(p) for p in pages][:-1] == [400] * (len(pages) - 1)
    for query, field in (("after=0", "after"), ("after=²", "after"),
                         ("after=99999999999999999999999", "after"), ("limit=1001", "limit"),
                         ("order=sideways", "order")):
        answer = get(env, query)
        assert answer.status_code == 400, query
        assert answer.get_json()["error"].startswith(f"{field}: "), answer.get_json()


def test_the_page_folds_each_batchs_config_changes_into_one_row(env):
    import sys

    import dash

    audit_table = sys.modules[next(p["module"] for p in dash.page_registry.values()
                                   if p["path"] == "/audit")].audit_table
    rows = [{"id": i, "at": "2026-03-01T09:00:00+00:00", "user": "railyard",
             "action": action, "plan_id": plan, "before": None, "after": None,
             "address": None, "detail": detail} for i, (action, plan, detail) in enumerate([
                 ("propose", 1, None), ("batch_started", 1, {"batch": 0}),
                 ("config_set", 1, {}), ("config_set", 1, {}), ("batch_finished", 1, {}),
                 ("batch_started", 1, {"batch": 1}), ("config_set", 1, {}),
                 ("config_restored", 1, {})], start=1)]
    body = audit_table(rows).children[1].children
    assert len(body) == 6  # propose, started, 2 changes, finished, started, 2 changes
    summaries = [r.children.children.children[0].children for r in body
                 if type(r.children).__name__ == "Td"]
    assert summaries == ["batch 1: 2 config changes (rows 3 to 4), config_set",
                         "batch 2: 2 config changes (rows 7 to 8), config_restored, "
                         "config_set"]


def test_the_plan_page_shows_the_trail_from_its_proposal_and_links_to_the_rest(env):
    """A plan's own page opened at its newest 1,000 rows, so its proposal and approval
    were out of reach; it now starts at the proposal and links to /audit for the rest,
    with the "at" column wide enough for a whole time."""
    from dashboard.plan_views import stored
    from dashboard.plan_views.shared import AT_WIDTH

    with env["app"].server.test_request_context("/"):
        shown = stored.audit(env["plan"])
    grid, note = shown.children
    assert [r["action"] for r in grid.rowData[:3]] == ["propose", "approve", "batch_started"]
    assert len(grid.rowData) == stored.AUDIT_ROWS_SHOWN
    link = note.children[1]
    assert link.href == f"/audit?plan={env['plan']}"
    assert f"Rows 1 to {stored.AUDIT_ROWS_SHOWN:,} of {env['rows']:,}" in note.children[0]
    at = next(c for c in grid.columnDefs if c["field"] == "at")
    assert at["minWidth"] == AT_WIDTH >= 8 * len("2024-01-01 00:40:00 UTC")


def audit_page():
    import sys

    import dash

    return sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path"] == "/audit")]


def show(env, plan=None, user=None, since=None, page=None, button="au-apply") -> tuple:
    """The audit page's Show (or Next page) as Dash calls it, signed in as vic."""
    from dash._callback_context import context_value
    from dash._utils import AttributeDict

    context_value.set(AttributeDict(triggered_inputs=[{"prop_id": f"{button}.n_clicks",
                                                       "value": 1}]))
    with env["app"].server.test_request_context("/", headers=env["headers"]):
        return audit_page().show(1, None, plan, user, since, page)


@pytest.mark.parametrize("since", ["0001-01-01T00:00+14:00", "9999-12-31T23:59-14:00"])
def test_a_since_past_the_years_a_time_can_show_is_one_line(env, since):
    """Year 1 with a +14:00 zone raised OverflowError on the page and was a 500 on the
    API (as was 9999-12-31 at -14:00): both now refuse it as the time control does."""
    error = f"since: {since} is not a time between 1970 and 9999 (UTC)"
    answer = get(env, "since=" + since.replace("+", "%2B"))
    assert (answer.status_code, answer.get_json()) == (400, {"error": error})
    assert show(env, since=since)[1] == error
    zoned = get(env, "since=2026-03-01T10:00%2B01:00").get_json()  # 09:00 UTC: every row
    assert zoned["total"] == get(env, "").get_json()["total"] > 0



def test_the_user_filter_reads_a_name_as_sign_in_does(env):
    """'ANNA ' found nothing on /audit and over the API, though sign-in takes 'OLIVIA '
    as olivia: the filter reads the name as dashboard.config.normal_name does, and the
    rows of names no user has ('(unknown user)') are still found as written."""
    from backend.store.audit import append
    from dashboard import auth, runtime

    with runtime.current().plan_store().write() as conn:
        append(conn, at=T0, user=auth.UNKNOWN_USER, action="sign_in_failed")
    for typed, user, rows in (("ANNA ", "anna", 1), ("ａｎｎａ", "anna", 1),
                              ("(Unknown User)", auth.UNKNOWN_USER, 1),
                              (auth.UNKNOWN_USER, auth.UNKNOWN_USER, 1)):
        api = get(env, f"user={quote(typed)}").get_json()
        assert (api["total"], {e["user"] for e in api["entries"]}) == (rows, {user}), typed
        grid, error, _plans, count, *_ = show(env, user=typed)
        assert error == "" and count.startswith(f"Rows 1 to {rows} of {rows} "), typed
        assert {tr.children[2].children for tr in grid.children[1].children} == {user}


def test_a_refused_filter_empties_the_last_result(env):
    """Plan -5 showed its error above the last Show's rows and count, as if they were
    this filter's: now the error alone, the rows, the count and Next page gone."""
    shown = show(env, plan=env["plan"])
    assert shown[3].startswith("Rows 1 to 1,000 of ") and shown[4] is False
    grid, error, _plans, count, no_next, page = show(env, plan="-5", page=shown[5])
    assert error == "plan: give a whole number of at least 1, got -5"
    assert (grid, count, no_next, page) == ("", "", True, None)


def test_the_filters_shown_are_what_show_writes_into_the_url(env):
    """Show's page store holds the filters as checked, which assets/railyard.js auditUrl
    writes into the URL (tests/e2e/test_audit_browser.py); a deep link's own link."""
    page = show(env, user="ANNA ", since=" 2026-01-01T00:00 ")[5]
    assert page["query"] == {"plan": None, "user": "anna", "since": "2026-01-01T00:00"}
    with env["app"].server.test_request_context("/"):
        shown = audit_page().layout(plan="3", user="anna")
    from dashboard import ids
    link = next(c for row in shown.children if isinstance(row.children, list)
                for c in row.children if getattr(c, "id", None) == ids.AU_LINK)
    assert link.href == "/audit?plan=3&user=anna"


def test_config_changes_are_labelled_with_the_batch_they_were_for(env):
    """In the order the executor writes them (on Apache Kafka: a batch's throttles are set,
    then it starts; the configs are put back after the last ends), a batch's throttles
    were labelled with the batch before it ("batch 1: config_set" for batch 2's)."""
    import sys

    import dash

    audit_table = sys.modules[next(p["module"] for p in dash.page_registry.values()
                                   if p["path"] == "/audit")].audit_table
    rows = [{"id": i, "at": "2026-03-01T09:00:00+00:00", "user": "railyard",
             "action": action, "plan_id": 1, "before": None, "after": None,
             "address": None, "detail": detail} for i, (action, detail) in enumerate([
                 ("config_set", {}), ("batch_started", {"batch": 0}),
                 ("config_restored", {}), ("batch_finished", {"batch": 0}),
                 ("config_set", {}), ("config_set", {}), ("batch_started", {"batch": 1}),
                 ("batch_finished", {"batch": 1}), ("config_restored", {})], start=1)]
    body = audit_table(list(reversed(rows))).children[1].children  # newest first
    summaries = [r.children.children.children[0].children for r in body
                 if type(r.children).__name__ == "Td"]
    assert summaries == ["after batch 2: 1 config change (rows 9 to 9), config_restored",
                         "batch 2: 2 config changes (rows 5 to 6), config_set",
                         "batch 1: 1 config change (rows 3 to 3), config_restored",
                         "batch 1: 1 config change (rows 1 to 1), config_set"]
