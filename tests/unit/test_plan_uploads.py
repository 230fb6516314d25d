"""Plans uploaded on /reassignments wait on disk, bounded per user and in total, and only
for users who may propose (issue 27 item 3): fourteen 29 MB uploads once held about 28 MB
of server memory each for an hour, in a cache of up to 2,000 entries, and a viewer could
send them. Through the page's own callbacks, as a browser sends them."""

from __future__ import annotations

import base64
import json

import pytest

from backend.services.uploads import PlanUploads
from backend.store.workflow import Actor
from dashboard import auth, ids
from tests.unit import test_api
from tests.unit.test_api import PASSWORD

env = test_api.env  # the API tests' app on a twin, with a user per role


def data_url(raw: bytes) -> str:
    return "data:application/json;base64," + base64.b64encode(raw).decode()


def _signed_in(env, user: str):
    client = env["app"].server.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    client.post("/login", data={"username": user, "password": PASSWORD.format(user),
                                "csrf_token": token, "next": "/"})
    client.get("/_dash-layout")
    return client, client.get_cookie(auth.csrf_cookie_name(env["rt"].config.server.port)).value


def _callback(env, client, csrf, output_id: str, values: dict, changed: str,
              whole: bool = False) -> dict:
    """POST the callback whose outputs include ``output_id``, its inputs and state taken
    from ``values`` (id.property -> value, None when absent); its answer (``whole``: with
    the side updates an error handler made)."""
    key = next(k for k in env["app"].callback_map if f"{output_id}." in k)
    spec = env["app"].callback_map[key]
    outputs = [{"id": o.split(".")[0], "property": o.split(".")[1]}
               for o in key.strip(".").split("...")]
    body = {"output": key, "outputs": outputs, "changedPropIds": [changed],
            "inputs": [{**i, "value": values.get(f"{i['id']}.{i['property']}")}
                       for i in spec["inputs"]],
            "state": [{**s, "value": values.get(f"{s['id']}.{s['property']}")}
                      for s in spec["state"]]}
    answer = client.post("/_dash-update-component", data=json.dumps(body),
                         content_type="application/json", headers={auth.CSRF_HEADER: csrf})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.get_json() if whole else answer.get_json()["response"]


def _upload(env, client, csrf, raw: bytes, name: str = "plan.json") -> dict:
    return _callback(env, client, csrf, ids.RA_UPLOAD_TOKEN,
                     {f"{ids.RA_UPLOAD}.contents": data_url(raw),
                      f"{ids.RA_UPLOAD}.filename": name}, f"{ids.RA_UPLOAD}.contents")


def _uploads(env) -> PlanUploads:
    from dashboard import drafts

    return drafts._plan_uploads()


def test_an_uploaded_plan_waits_on_disk_and_previews(env):
    client, csrf = _signed_in(env, "operator1")
    cache = env["rt"].cache.cache  # flask-caching's SimpleCache: in this process
    before = len(cache._cache)
    raw = json.dumps(env["body"]["plan"]).encode()
    for _ in range(14):
        answer = _upload(env, client, csrf, raw)
    assert answer[ids.RA_UPLOAD_NAME]["children"] == "uploaded: plan.json"
    token = answer[ids.RA_UPLOAD_TOKEN]["data"]
    assert len(cache._cache) == before  # nothing of the uploads in the server's memory
    operator = Actor("operator1", "operator")
    kept = _uploads(env)
    assert len(raw) * 14 < kept.held(operator) <= kept.user_bytes  # on disk, bounded
    preview = _callback(env, client, csrf, ids.RA_PREVIEW, {
        f"{ids.RA_RUN}.n_clicks": 1, f"{ids.RA_SOURCE}.value": "upload",
        f"{ids.RA_UPLOAD_TOKEN}.data": token, f"{ids.URL}.search": "?cluster=demo"},
        f"{ids.RA_RUN}.n_clicks")
    assert preview[ids.RA_ERROR]["children"] == ""
    assert "plan.json" in json.dumps(preview[ids.RA_PREVIEW]["children"])


def test_a_user_keeps_only_their_newest_previews(env):
    """A draft is as large as its plan and each Preview click made one for an hour."""
    from dashboard import drafts

    client, csrf = _signed_in(env, "admin1")
    tokens = [_callback(env, client, csrf, ids.RA_PREVIEW, {
        f"{ids.RA_RUN}.n_clicks": n, f"{ids.RA_SOURCE}.value": "generate",
        f"{ids.RA_GOAL}.value": "drain", f"{ids.RA_BROKERS}.value": "1",
        f"{ids.URL}.search": "?cluster=demo"}, f"{ids.RA_RUN}.n_clicks")[ids.PLAN_TOKEN]["data"]
        for n in range(1, 6)]
    kept = [t for t in tokens if env["rt"].cache.get(f"draft:{t}") is not None]
    assert kept == tokens[-drafts.DRAFTS_PER_USER:]


def test_a_viewer_may_not_upload_a_plan(env):
    client, csrf = _signed_in(env, "viewer1")
    answer = _upload(env, client, csrf, json.dumps(env["body"]["plan"]).encode())
    assert answer[ids.RA_UPLOAD_TOKEN]["data"] is None
    assert answer[ids.RA_ERROR]["children"].startswith(
        "upload: the viewer role may not propose: it needs the operator or admin role")
    assert _uploads(env).held(Actor("viewer1", "viewer")) == 0


def test_a_file_that_is_not_json_is_named_at_upload(env):
    client, csrf = _signed_in(env, "operator2")
    answer = _upload(env, client, csrf, b"[" * 1000 + b"]" * 1000, "deep.json")
    assert answer[ids.RA_ERROR]["children"].startswith("deep.json: nested too deeply")
    answer = _upload(env, client, csrf, b"{", "broken.json")
    assert answer[ids.RA_ERROR]["children"] == "broken.json: not a JSON file"


OPERATOR, OTHER = Actor("olga", "operator"), Actor("otto", "admin")


def test_one_user_holds_at_most_two_uploads_worth(tmp_path):
    store = PlanUploads(tmp_path, max_bytes=1000)
    tokens = [store.keep(OPERATOR, data_url(b"[%d]" % i + b" " * 890), f"p{i}.json")
              for i in range(3)]
    other = store.keep(OTHER, data_url(b"[9]"), "o.json")
    assert store.read(OPERATOR, tokens[0]) == (None, "upload")  # the oldest made room
    assert store.read(OPERATOR, tokens[1]) == ([1], "p1.json")
    assert store.read(OPERATOR, tokens[2]) == ([2], "p2.json")
    assert store.read(OTHER, other) == ([9], "o.json")
    assert store.held(OPERATOR) <= store.user_bytes


def test_all_users_together_hold_at_most_eight_uploads_worth(tmp_path):
    store = PlanUploads(tmp_path, max_bytes=1000)
    users = [Actor(f"op{i}", "operator") for i in range(12)]
    tokens = [store.keep(u, data_url(b"[1]" + b" " * 990), "p.json") for u in users]
    assert store.held() <= store.total_bytes
    assert store.read(users[0], tokens[0]) == (None, "upload")  # the oldest went first
    assert store.read(users[-1], tokens[-1]) == ([1], "p.json")


@pytest.mark.parametrize("token", ["../../etc/passwd", "0" * 31, None, ""])
def test_tokens_name_only_the_users_own_uploads(tmp_path, token):
    store = PlanUploads(tmp_path, max_bytes=1000)
    mine = store.keep(OPERATOR, data_url(b"[1]"), "p.json")
    assert store.read(OTHER, mine) == (None, "upload")  # another user's token reads nothing
    assert store.read(OPERATOR, token) == (None, "upload")
