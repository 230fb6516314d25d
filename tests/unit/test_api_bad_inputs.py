"""Bad input over HTTP is a 4xx with one line, never a 500 with a traceback (issue 27 item
5): each input the security probe sent, with the status docs/api.md's error table gives it,
and nothing stored. A full store is a 503 naming the cause (item 6). PostgreSQL's own
refusals (NUL, long names) are in tests/integration/test_plan_text_bounds.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event

from backend.services import plans as plan_service
from dashboard import auth, ids
from tests.unit import test_api
from tests.unit.test_api import PASSWORD, basic, count, make_plan

env = test_api.env  # the API tests' app on a twin, with a user per role

DEEP = "[" * 1000 + "]" * 1000  # nested 1,000 deep


def _plan_body(env, **entry) -> dict:
    body = json.loads(json.dumps(env["body"]))
    body["plan"]["partitions"][0].update(entry)
    return body


def _raw(body: dict, **replace: str) -> str:
    """``body`` as JSON text with placeholders swapped for literal numbers Python's json
    would never write (10**30 is fine, but a literal keeps the probe's exact bytes)."""
    text = json.dumps(body)
    for key, literal in replace.items():
        text = text.replace(f'"@{key}"', literal)
    return text


@pytest.mark.parametrize(("name", "entry", "extra"), [
    ("partition 10**30", {"partition": "@n"}, {}),
    ("partition 2**63", {"partition": "@n"}, {}),
    ("replica 10**30", {"replicas": ["@n", 1, 2]}, {}),
    ("throttle 10**30", {}, {"throttle": "@n"}),
    ("throttle 2**63", {}, {"throttle": "@n"}),
])
def test_numbers_past_a_long_are_400(env, name, entry, extra):
    number = str(10**30 if "10**30" in name else 2**63)
    text = _raw({**_plan_body(env, **entry), **extra}, n=number)
    before = count(env)
    answer = env["client"].post("/api/v1/plans", data=text, content_type="application/json",
                                headers=basic("operator1"))
    assert answer.status_code == 400, answer.get_json()
    assert answer.get_json() == {"error": f"body: the integer {number[:24]}"
                                          f"{'...' if len(number) > 24 else ''} is past "
                                          "Kafka's largest value (2^63-1)"}
    assert count(env) == before


@pytest.mark.parametrize(("query", "status", "error"), [
    ("/api/v1/audit?plan=%C2%B2", 400,
     "plan: expected a plan id (1 to 2147483647), got '\u00b2'"),
    ("/api/v1/audit?plan=" + "9" * 26, 400,
     f"plan: expected a plan id (1 to 2147483647), got '{'9' * 26}'"),
    ("/api/v1/plans/" + "9" * 26, 404, f"no plan {'9' * 26}"),
    ("/api/v1/plans/2147483648", 404, "no plan 2147483648"),
])
def test_plan_ids_past_the_column_are_refused(env, query, status, error):
    answer = env["client"].get(query, headers=basic("viewer1"))
    assert (answer.status_code, answer.get_json()) == (status, {"error": error})


def test_json_nested_1000_deep_is_400(env):
    before = count(env)
    answer = env["client"].post("/api/v1/plans", data='{"cluster": "demo", "plan": ' + DEEP
                                + "}", content_type="application/json",
                                headers=basic("operator1"))
    assert answer.status_code == 400
    assert answer.get_json()["error"].startswith("body: nested too deeply")
    assert count(env) == before


def test_a_body_over_the_limit_is_413(env, monkeypatch):
    monkeypatch.setitem(env["app"].server.config, "MAX_CONTENT_LENGTH", 1000)
    answer = env["client"].post("/api/v1/plans", data=json.dumps({"title": "x" * 2000}),
                                content_type="application/json", headers=basic("operator1"))
    assert answer.status_code == 413
    assert answer.get_json() == {"error": "the body is larger than the 1,000 bytes this "
                                          "server accepts (from server.max_upload_bytes)"}


@pytest.mark.parametrize(("field", "value", "error"), [
    ("title", "a\x00b", "title: control character '\\x00' at position 1: give plain text"),
    ("title", "t" * 201, "title: give a non-empty string of at most 200 characters"),
    ("comment", "a\x00b", "comment: control character '\\x00' at position 1: give plain text"),
    ("comment", "c" * 5_000_000, "comment: 5,000,000 characters, more than the 2,000 "
                                 "allowed"),
])
def test_titles_and_comments_are_bounded_plain_text(env, field, value, error):
    before = count(env)
    if field == "title":
        answer = env["client"].post("/api/v1/plans", json={**env["body"], "title": value},
                                    headers=basic("operator1"))
    else:
        plan_id = make_plan(env, "operator1", "proposed")
        before = count(env)
        answer = env["client"].post(f"/api/v1/plans/{plan_id}/reject",
                                    json={"comment": value}, headers=basic("approver1"))
    assert (answer.status_code, answer.get_json()) == (400, {"error": error})
    assert count(env) == before


def test_a_comment_at_the_limit_is_kept(env):
    plan_id = make_plan(env, "operator1", "proposed")
    answer = env["client"].post(f"/api/v1/plans/{plan_id}/reject",
                                json={"comment": "why\n" + "c" * 1996},
                                headers=basic("approver1"))
    assert answer.status_code == 200
    got = env["client"].get(f"/api/v1/plans/{plan_id}", headers=basic("viewer1")).get_json()
    assert got["decisions"][0]["comment"] == "why\n" + "c" * 1996


@pytest.mark.parametrize(("log_dirs", "error"), [
    (["../../x", "any", "any"], "log_dirs[0] '../../x': Kafka takes an absolute path or "
                                '"any"'),
    (["any", "/data/../etc", "any"], "log_dirs[1] '/data/../etc': not a plain absolute path"),
    (["any", "any", 7], "log_dirs[2] '7': Kafka takes an absolute path or \"any\""),
])
def test_log_dirs_must_be_absolute_paths_or_any(env, log_dirs, error):
    before = count(env)
    body = _plan_body(env, log_dirs=log_dirs)
    entry = body["plan"]["partitions"][0]
    answer = env["client"].post("/api/v1/plans", json=body, headers=basic("operator1"))
    assert answer.status_code == 400
    assert answer.get_json()["error"].startswith(
        f"plan: partition {entry['topic']}-{entry['partition']}: {error}")
    assert count(env) == before


def test_absolute_log_dirs_and_any_are_accepted(env):
    body = _plan_body(env, log_dirs=["/var/lib/kafka/data", "any", "/data/kafka-2"])
    answer = env["client"].post("/api/v1/plans", json=body, headers=basic("operator1"))
    assert answer.status_code == 201, answer.get_json()


@pytest.fixture
def browser(env):
    """A signed-in browser on the app: its client and its CSRF token."""
    client = env["app"].server.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    client.post("/login", data={"username": "viewer1", "password": PASSWORD.format("viewer1"),
                                "csrf_token": token, "next": "/"})
    csrf = client.get_cookie(auth.csrf_cookie_name(env["rt"].config.server.port)).value
    return client, csrf


def test_a_callback_body_nested_1000_deep_is_400(browser):
    client, csrf = browser
    answer = client.post("/_dash-update-component", data='{"output": ' + DEEP + "}",
                         content_type="application/json", headers={auth.CSRF_HEADER: csrf})
    assert answer.status_code == 400
    assert answer.get_json() == {"error": "the body is nested too deeply to be a callback "
                                          "request"}


@pytest.mark.parametrize(("query", "error"), [
    ("from=1&to=99999999999999", "to: 99999999999999 is not a time between 1970 and 9999 "
                                 "(UTC)"),
    # epoch seconds are digits (assets/railyard.js reads the same grammar)
    *[(query, f"{what}: could not read '{text}' as a date and time (e.g. 2024-05-01T12:00, "
              "UTC)")
      for query, what, text in [("from=nan&to=inf", "from", "nan"),
                                ("from=1&to=inf", "to", "inf"), ("from=1&to=1e9", "to", "1e9"),
                                ("from=2024-02-30T00:00&to=2024-03-02T00:00", "from",
                                 "2024-02-30T00:00")]],
])
def test_incident_report_windows_out_of_range_are_400(browser, query, error):
    client, _ = browser
    answer = client.get(f"/reports/incident.html?cluster=demo&range=abs&{query}")
    assert answer.status_code == 400
    assert answer.get_data(as_text=True) == f"{error}\n"


@contextmanager
def full_store(env) -> Iterator[None]:
    """SQLite at its max_page_count answers SQLITE_FULL, as on a full disk."""
    engine = env["store"].engine

    def full(dbapi_conn, _record) -> None:
        pages = dbapi_conn.execute("PRAGMA page_count").fetchone()[0]
        dbapi_conn.execute(f"PRAGMA max_page_count = {pages}")

    event.listen(engine, "connect", full)
    engine.dispose()
    try:
        yield
    finally:
        event.remove(engine, "connect", full)
        engine.dispose()


FULL = ("Plan store: database or disk is full: nothing was stored; try again when it has "
        "room and answers")


def test_a_full_store_is_503_naming_the_cause(env):
    with full_store(env):
        for _ in range(200):  # until the free pages inside the file are used up
            answer = env["client"].post("/api/v1/plans", json={**env["body"],
                                                               "title": "t" * 200},
                                        headers=basic("operator1"))
            if answer.status_code != 201:
                break
    assert answer.status_code == 503
    assert answer.get_json() == {"error": FULL}


def test_a_full_store_is_named_on_the_plan_page(env, caplog):
    from tests.unit.test_plan_uploads import _callback, _signed_in

    plan_ids = [make_plan(env, "operator1", "proposed") for _ in range(200)]
    shown = {i: plan_service.get(env["store"], i).sha256 for i in plan_ids}  # as the page
    client, csrf = _signed_in(env, "approver1")
    with full_store(env), caplog.at_level("WARNING", logger="railyard.dashboard"):
        for plan_id in plan_ids:  # each decision writes rows, until there is no room
            answer = _callback(env, client, csrf, ids.PV_DECISIONS, {
                f"{ids.PV_REJECT}.n_clicks": 1, f"{ids.PV_COMMENT}.value": "c" * 2000,
                f"{ids.PV_PLAN}.data": {"id": plan_id, "sha256": shown[plan_id]}},
                f"{ids.PV_REJECT}.n_clicks", whole=True)
            if "sideUpdate" in answer:
                break
    assert answer["sideUpdate"][ids.APP_ERROR]["children"] == FULL
    assert [r.exc_info for r in caplog.records if FULL in r.getMessage()] == [None]


def test_the_error_table_lists_every_status_these_inputs_get():
    """docs/api.md's error table holds for the inputs above: each status they get is a
    row, saying why."""
    table = test_api.DOC.read_text().split("## Errors")[1].split("## Who may do what")[0]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert "2^63-1" in rows["400"] and "nested too deeply" in rows["400"]
    assert "`log_dirs`" in rows["400"] and "comment over 2,000" in rows["400"]
    assert "2147483647" in rows["404"] and "max_upload_bytes" in rows["413"]
    assert "full disk" in rows["503"]
    assert "`nan`, `inf`" in table and "/_dash-update-component" in table
