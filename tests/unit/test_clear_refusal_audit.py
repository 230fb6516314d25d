"""A refused clear-throttles proposal is audited as what was tried, "clear_throttles", for
every role (a new user's report): the API asks plans.may_propose before the work, which
refused an approver as "propose" ("needs the operator or admin role", though an operator
may not clear throttles either), while an operator, who may propose, got as far as
throttle_leftovers.propose_clear and was audited as "clear_throttles"."""

from __future__ import annotations

import pytest

from backend.errors import Forbidden
from backend.model.snapshot import Limits
from backend.services import plans, throttle_leftovers
from backend.services.cluster import ClusterSource
from tests.plan_helpers import ADMIN, APPROVER, OPERATOR, VIEWER
from tests.unit import test_api
from tests.unit.test_api import basic
from tests.unit.test_execution_service import World

LEADER_RATE = "leader.replication.throttled.rate"


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    w.source = ClusterSource("small", None, Limits(), gateway=w.gw)
    w.twin.alter_configs("broker", "2", {LEADER_RATE: "1000"})
    yield w
    w.store.close()


def refusals(store) -> list[tuple[str, dict]]:
    return [(e.user, e.detail) for e in plans.audit_entries(store) if e.action == "refused"]


def clear_refusal(actor) -> tuple[str, dict]:
    return actor.name, {"attempted": "clear_throttles", "reason": f"the {actor.role} role "
                        "may not clear_throttles: it needs the admin role"}


def test_asking_before_a_clear_plan_audits_the_clear_attempt_for_every_role(world):
    for actor in (APPROVER, OPERATOR, VIEWER):
        with pytest.raises(Forbidden, match="may not clear_throttles"):
            plans.may_propose(world.store, actor, plans.CLEAR)
    assert refusals(world.store) == [clear_refusal(a) for a in (APPROVER, OPERATOR, VIEWER)]
    plans.may_propose(world.store, ADMIN, plans.CLEAR)  # an admin may: no row
    assert len(refusals(world.store)) == 3


def test_the_question_reads_as_the_proposal_itself(world):
    """may_propose(kind=CLEAR) refuses and audits as propose_clear does, one row each."""
    for actor in (APPROVER, OPERATOR):
        with pytest.raises(Forbidden) as asked:
            plans.may_propose(world.store, actor, plans.CLEAR)
        with pytest.raises(Forbidden) as proposed:
            throttle_leftovers.propose_clear(world.store, actor, world.source)
        assert str(asked.value) == str(proposed.value)
    rows = refusals(world.store)
    assert rows == [clear_refusal(APPROVER)] * 2 + [clear_refusal(OPERATOR)] * 2


def test_other_kinds_are_still_asked_and_audited_as_propose(world):
    with pytest.raises(Forbidden, match="approver role may not propose"):
        plans.may_propose(world.store, APPROVER)
    with pytest.raises(Forbidden, match="approver role may not propose"):
        plans.may_propose(world.store, APPROVER, "reassignment")
    assert [d["attempted"] for _, d in refusals(world.store)] == ["propose", "propose"]
    plans.may_propose(world.store, OPERATOR, "reassignment")
    assert len(refusals(world.store)) == 2


env = test_api.env  # the API tests' app on a twin, with a user per role


def test_the_api_audits_every_roles_refused_clear_plan_as_clear_throttles(env):
    client = env["client"]
    for user in ("approver1", "operator1"):
        answer = client.post("/api/v1/plans", headers=basic(user),
                             json={"cluster": "demo", "kind": "clear_throttles"})
        assert answer.status_code == 403
    rows = client.get("/api/v1/audit?order=newest", headers=basic("viewer1")).get_json()
    refused = [(e["user"], e["detail"]["attempted"]) for e in rows["entries"]
               if e["action"] == "refused"][:2]
    assert refused == [("operator1", "clear_throttles"), ("approver1", "clear_throttles")]
