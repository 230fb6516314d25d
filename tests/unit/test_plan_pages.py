"""The plan pages' callbacks: a preview shows the service's numbers, keeps the draft on the
server under a token, pages the diff grid from it, exports Kafka's JSON, and answers bad
input with one line."""

from __future__ import annotations

import base64
import json

import pytest

from backend.errors import BadInput
from backend.model.io import save_snapshot
from backend.model.snapshot import Limits
from backend.services import plan_preview
from backend.twin.examples import demo_snapshot
from dashboard import drafts
from dashboard.config import parse_config
from tests.unit.test_plan_view import text_of


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("plans")
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    return create_app(parse_config({
        "clusters": [{"name": "demo", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
                      "snapshot": str(tmp / "demo.parquet")}],
        "cache": {"background_dir": str(tmp / "cache")}}))


@pytest.fixture(autouse=True)
def request_context(app):
    """Callbacks run inside a request (they ask who is signed in: auth none -> local admin)."""
    with app.server.test_request_context("/"):
        yield


def page(path: str):
    """The page module as Dash imported it (importing it again would register it twice)."""
    import sys

    import dash

    return sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path"] == path)]


def upload(obj) -> str:
    return "data:application/json;base64," + base64.b64encode(json.dumps(obj).encode()).decode()


def test_generated_preview_shows_the_services_numbers(app):
    from dashboard import plan_views
    from dashboard.plan_views import preview as plans

    ra = page("/reassignments")
    block, token, error, notes = ra.preview(1, "generate", "drain", "9", 1.0, 1.1, None, 20,
                                            "?cluster=demo")
    assert error == "" and notes == []
    expected = plan_preview.from_goal(demo_snapshot(), {"goal": "drain", "brokers": [9]},
                                      throttle=20e6)
    draft = drafts.load(token)
    assert draft.content == expected.content and draft.preview == expected.preview
    shown = text_of(block)
    assert f"{expected.preview['replica_moves']:,}" in shown
    assert plans.size(expected.preview["bytes_to_move"]) in shown
    assert "--throttle 20000000" in shown
    # the grid pages through the draft on the server, sorted there
    answer = plan_views.grid_rows({"startRow": 0, "endRow": 50,
                              "sortModel": [{"colId": "bytes", "sort": "desc"}]}, token, None)
    assert answer["rowCount"] == expected.preview["partitions"] and len(answer["rowData"]) == 50
    sizes = [r["bytes"] for r in answer["rowData"]]
    assert sizes == sorted(sizes, reverse=True) and all("9" in r["before"]
                                                        for r in answer["rowData"])
    only = plan_views.grid_rows({"startRow": 0, "endRow": 50}, token, "topic-001-")
    assert only["rowCount"] > 0
    assert all(r["partition"].startswith("topic-001-") for r in only["rowData"])
    sent = plan_views.download(1, token)
    assert json.loads(sent["content"]) == expected.content and sent["filename"] == "plan.json"


def test_uploaded_plan_errors_are_one_line(app):
    ra = page("/reassignments")
    bad = {"version": 1, "partitions": [{"topic": "topic-000", "partition": 0,
                                         "replicas": [1, 2, 42]}]}
    token, name, source, error = ra.uploaded(upload(bad), "cc.json")
    assert (name, source, error) == ("uploaded: cc.json", "upload", "")
    out = ra.preview(1, "upload", "balance", None, 1, 1.1, token, None, "")
    assert out[2] == "cc.json: partition topic-000-0: broker 42 is not in cluster 'demo'"
    assert ra.uploaded("data:application/json;base64,bm90IGpzb24=", "x.json")[3] == \
        "x.json: not a JSON file"
    out = ra.preview(1, "upload", "balance", None, 1, 1.1, None, None, "")
    assert out[2] == "upload: choose a reassignment JSON file first"
    out = ra.preview(1, "generate", "drain", "7, x", 1, 1.1, None, None, "")
    assert out[2] == ("brokers: 'x' is not a broker id (give ids separated by commas, "
                      "e.g. 7,8)")
    out = ra.preview(1, "generate", "balance", None, 1, 1.1, None, -3, "")
    assert out[2] == ("throttle: give a number larger than 0 MB/s, or leave it empty for the "
                      "suggested rate, got -3")


def test_uploaded_plan_previews(app):
    ra = page("/reassignments")
    snap = demo_snapshot()
    row = snap.partition_row("topic-000", 0)
    now = snap.replicas_of(row)
    spare = next(b for b in snap.broker_ids.tolist() if b not in now)
    plan = {"version": 1, "partitions": [{"topic": "topic-000", "partition": 0,
                                          "replicas": [*now[:-1], spare]}]}
    block, token, error, _ = ra.preview(1, "upload", "balance", None, 1, 1.1,
                                        ra.uploaded(upload(plan), "mine.json")[0], 50, "")
    assert error == ""
    assert drafts.load(token).preview["replica_moves"] == 1
    assert "uploaded plan: 1 partitions on demo" in text_of(block)


def test_shrink_preview_and_errors(app):
    sh = page("/shrinks")
    block, token, error, _ = sh.preview(1, "topic-001", 4, 24, "")
    assert error == ""
    draft = drafts.load(token)
    assert draft.kind == "shrink" and draft.content["delay_ms"] == 24 * 3_600_000
    shown = text_of(block)
    assert "shrink topic-001 11 -> 4 partitions" in shown and "ReadOnly" in shown
    assert f"{draft.preview['replicas_reclaimed']:,} replicas" in shown
    assert sh.preview(1, "nope", 4, None, "")[2] == "topic 'nope' is not in cluster 'demo'"
    assert sh.preview(1, "topic-001", None, None, "")[2] == (
        "partitions after: give the number of partitions to keep")
    assert sh.preview(1, "topic-001", 20, None, "")[2].startswith(
        "topic 'topic-001' has 11 partitions; a shrink needs 1 <= partitions after < 11")


def shown_ids(component, hidden: bool = False) -> dict[str, bool]:
    """id -> whether it shows: no element styled display: none holds it."""
    if component is None or isinstance(component, str | int | float):
        return {}
    if isinstance(component, list | tuple):
        return {k: v for c in component for k, v in shown_ids(c, hidden).items()}
    hidden = hidden or (getattr(component, "style", None) or {}).get("display") == "none"
    found = {component.id: not hidden} if getattr(component, "id", None) else {}
    return found | shown_ids(getattr(component, "children", None), hidden)


def test_the_propose_row_offers_only_what_a_kind_can_take(app):
    """A shrink's Propose row offered an adaptive throttle, a start time and running
    outside the windows; each was refused once proposed (a shrink has no throttle and
    runs at once). They show only for a reassignment; for others they stay in the layout
    (the Propose callback reads them), hidden and empty, and the service still refuses
    them."""
    from backend.errors import BadInput
    from backend.services import plans as plan_service
    from backend.store.workflow import Actor
    from dashboard import ids
    from dashboard.plan_views.shared import propose_row

    olga = Actor("olga", "operator", "127.0.0.1")
    options = (ids.PLAN_ADAPTIVE, ids.PLAN_FLOOR, ids.PLAN_NOT_BEFORE, ids.PLAN_OUTSIDE_WINDOWS)
    moving = shown_ids(propose_row(olga, "reassign 3 partitions", "reassignment"))
    assert all(moving[i] for i in (*options, ids.PLAN_TITLE, ids.PLAN_PROPOSE)), moving
    assert "with its start time if given" in text_of(propose_row(olga, "t", "reassignment"))
    shrink = shown_ids(propose_row(olga, "shrink orders 6 -> 3 partitions", "shrink"))
    assert not any(shrink[i] for i in options), shrink
    assert shrink[ids.PLAN_TITLE] and shrink[ids.PLAN_PROPOSE]
    assert "start time" not in text_of(propose_row(olga, "t", "shrink"))
    for option, refused in (({"not_before": "2026-12-01T22:00+01:00"},
                             "only a reassignment waits for a start time"),
                            ({"outside_windows": True}, "only a reassignment waits for a window"),
                            ({"throttle_mode": {"mode": "adaptive", "floor": 1}},
                             "this kind of plan has no throttle to adapt")):
        with pytest.raises(BadInput, match=refused):
            plan_service.propose(None, olga, cluster="demo", kind="shrink", content={},
                                 preview={}, snapshot=None, **option)


def test_the_pages_refuse_what_a_number_field_sent_as_empty(app):
    """Each value below reached the server as None from a number field with min/max/step
    (throttle -5: the suggested rate; delay -5: retention.ms; partitions 2.5: a crash)."""
    ra, sh, wi = page("/reassignments"), page("/shrinks"), page("/what-if")
    out = ra.preview(1, "generate", "balance", None, "1", "1.1", None, "-5", "")
    assert out[2] == ("throttle: give a number larger than 0 MB/s, or leave it empty for the "
                      "suggested rate, got -5")
    out = ra.preview(1, "generate", "drain", " ", "1", "1.1", None, None, "")
    assert out[2] == "brokers: the drain goal needs the ids of the brokers to drain, e.g. 7,8"
    out = ra.preview(1, "generate", "balance", None, "1", "1e18", None, None, "")
    assert out[2] == "balance threshold: give a number from 1 to 2, got 1e18"
    out = ra.preview(1, "generate", "limits", None, "0", "1.1", None, None, "")
    assert out[2] == "target utilisation: give a number larger than 0 and at most 1, got 0"
    out = sh.preview(1, "topic-001", "2", "-5", "")
    assert out[2] == ("delay: give a number of at least 0 hours, or leave it empty for "
                      "retention.ms, got -5")
    assert sh.preview(1, "topic-001", "2.5", None, "")[2] == (
        "partitions after: give a whole number of at least 1, got 2.5")
    state = {"cluster": "demo"}
    out = wi.preview_limits(1, "create", "new-topic", "2.5", "3", None, None, state)
    assert out[3] == "partitions: give a whole number of at least 1, got 2.5"
    out = wi.preview_limits(1, "create", "new-topic", "4", "2.5", None, None, state)
    assert out[3] == "replication factor: give a whole number of at least 1, got 2.5"
    out = wi.preview_limits(1, "create", "new-topic", "4", "3", "-5", None, state)
    assert out[3] == ("max.broker.partitions: give a whole number of at least 1, or leave it "
                      "empty for the cluster's current limit, got -5")
    out = wi.replay_quota(1, None, None, "5", "2.5", "1")
    assert out[3] == "samples: give a whole number of at least 1, got 2.5"
    out = wi.replay_quota(1, None, None, "5", "1e18", "1")
    assert out[3] == "samples: 1e18 is past the largest value, 2,147,483,647"
    out = wi.replay_quota(1, None, None, "1e300", "2147483647", "2147483647")
    assert out[3] == ("rate: 1e+300 partitions/s x 2147483647 samples x 2147483647 s is a "
                      "burst past the largest number")


def test_a_refused_what_if_input_empties_the_last_answer(app):
    """Rate 'nan' on the quota form showed its error above the last replay's chart, as if
    it were this input's: every what-if form now empties its answer with the error (as
    a failed sweep did), the chart saying 'No result'."""
    wi = page("/what-if")

    def no_result(figure) -> bool:
        return [a.text for a in figure.layout.annotations] == ["No result"] \
            and not figure.data

    state = {"cluster": "demo"}
    good = wi.preview_limits(1, "create", "new-topic", "4", "3", None, None, state)
    assert good[3] == "" and good[1].data
    bad = wi.preview_limits(1, "create", "new-topic", "4", "3", "-5", None, state)
    assert bad[3].startswith("max.broker.partitions: ")
    assert (bad[0], no_result(bad[1]), bad[2]) == (None, True, None)

    good = wi.plan_throttle("50", None, None, None, state)
    assert good[4] == "" and good[1].data and good[2].data
    bad = wi.plan_throttle("nan", None, None, None, state)
    assert bad[4].startswith("throttle: ")
    assert (bad[0], no_result(bad[1]), no_result(bad[2])) == (None, True, True)

    good = wi.replay_quota(1, None, None, "5", "11", "1")
    assert good[3] == "" and good[0].data
    bad = wi.replay_quota(1, None, None, "nan", "11", "1")
    assert bad[3].startswith("rate: ")
    assert (no_result(bad[0]), bad[1]) == (True, None)


def test_a_refused_preview_takes_the_last_one_and_its_propose_away(app):
    """On the Apache Kafka demo an operator previewed "drain 3", then asked for "add 4",
    which was refused ("broker 4 is not in cluster"), and Propose under the old preview
    proposed the drain, titled as the add. A refusal now empties the preview and its
    draft; a refused upload leaves the upload chosen, so Preview says none was taken."""
    ra, sh = page("/reassignments"), page("/shrinks")
    block, token, error, _ = ra.preview(1, "generate", "drain", "9", 1.0, 1.1, None, 20, "")
    assert error == "" and block and drafts.load(token) is not None
    assert ra.preview(1, "generate", "add", "42", 1.0, 1.1, None, 20, "")[:3] == (
        None, None, "brokers: broker 42 is not in cluster 'demo'")
    block, token, error, _ = sh.preview(1, "topic-001", 4, 24, "")
    assert error == "" and block and token
    assert sh.preview(1, "topic-001", 400, 24, "")[:2] == (None, None)
    token, name, source, error = ra.uploaded("data:application/json;base64,bm90IGpzb24=",
                                             "x.json")
    assert (token, name, source, error) == (None, "", "upload", "x.json: not a JSON file")


def test_an_adaptive_floor_above_the_throttle_is_refused_in_the_forms_unit(app):
    """99999 typed as the floor (MB/s, as the form asks) under a 112 MB/s throttle was
    refused as "expected a positive integer (bytes/s) at most the throttle 112379246, got
    99999000000"."""
    from dashboard.plan_views.callbacks import throttle_mode

    with pytest.raises(BadInput) as refused:
        throttle_mode(["adaptive"], "99999", 112_379_246.0)
    assert str(refused.value) == ("adaptive throttle's floor: give a number larger than 0 "
                                  "and at most 112.379 MB/s, got 99999")
    assert throttle_mode(["adaptive"], "50", 112_379_246.0) == {"mode": "adaptive",
                                                                "floor": 50_000_000}
    assert throttle_mode(["adaptive"], "500", None) == {"mode": "adaptive",
                                                        "floor": 500_000_000}


def test_the_planners_refusals_name_the_pages_fields_not_the_clis_flags():
    snap = demo_snapshot()
    every = [int(b) for b in snap.broker_ids]
    with pytest.raises(BadInput) as e:
        plan_preview.from_goal(snap, {"goal": "drain", "brokers": every}, where="")
    assert str(e.value) == "brokers: names every broker; drain needs others to take replicas"
    with pytest.raises(BadInput) as e:
        plan_preview.from_goal(snap, {"goal": "add", "brokers": every})
    assert str(e.value).startswith("generate.brokers: names every broker")
    with pytest.raises(BadInput) as e:
        plan_preview.from_goal(snap.with_limits(Limits()), {"goal": "limits"}, where="")
    assert str(e.value) == (f"the limits goal needs max.broker.partitions and cluster "
                            f"'{snap.cluster}' has none: set max.broker.partitions on its "
                            "brokers (KIP-578), or choose another goal")
    assert "--" not in str(e.value)


def test_a_shrink_preview_leads_with_what_runs_on_its_cluster(app):
    """On a cluster that cannot delete partitions (Apache Kafka has no DeletePartitions)
    the migration is what runs: it comes first, and the KIP's stages say they are not
    for this cluster; where the KIP runs, its stages come first."""
    from backend.twin.cluster import TwinCluster, TwinSettings
    from backend.twin.gateway import TwinGateway
    from dashboard import runtime

    sh = page("/shrinks")
    gateways = runtime.current().gateways
    kept = gateways.get("demo")
    try:
        for enabled, first, second in (
                (False, "The migration this cluster runs: to 'topic-001.p4'",
                 "Stages under the delete-partitions KIP: not on this cluster"),
                (True, "Stages under the delete-partitions KIP",
                 "The migration that works on any cluster today")):
            gateways["demo"] = TwinGateway(TwinCluster(
                demo_snapshot(), TwinSettings(delete_partition_enable=enabled)))
            shown = text_of(sh.preview(1, "topic-001", 4, 24, "")[0])
            assert first in shown and second in shown
            assert shown.index(first) < shown.index(second)
            # the risk that the cluster cannot delete partitions, where it cannot (it was
            # named on the twin too, which implements the KIP)
            assert ("Execute is refused and 'Run the migration' on the plan's page runs "
                    "the migration instead" in shown) is not enabled  # it never ran it
            assert ("Apache Kafka cannot delete partitions" in shown) is not enabled
    finally:
        gateways["demo"] = kept


def test_preferred_leader_changes_say_when_they_take_effect(app):
    """A reassignment reorders replicas; Kafka's leaders move only when its controller
    balances leaders (a balance with 0 replica moves read as if it moved leaders)."""
    from dashboard.plan_views import preview

    shown = text_of(preview.words({"violations": [], "unresolved": [], "leader_moves": 2}))
    assert ("2 preferred-leader changes: the new leaders lead once Kafka's controller next "
            "balances leaders") in shown
    assert "Railyard's executor elects no leader itself" in shown
    assert "preferred-leader" not in text_of(
        preview.words({"violations": [], "unresolved": [], "leader_moves": 0}))
