"""A drain planned and run on the twin while a partition moves under someone else's slow
throttle (issue 26 item 1: a drain that took in-flight partitions stalled for 7 minutes and
failed with "topic-000-2 is not at its target"). The plan leaves the moving partition
alone and runs to completed; the other move ends at its own target."""

from __future__ import annotations

from backend.services import execution, plan_preview
from backend.twin.cluster import TwinCluster, TwinSettings
from backend.twin.gateway import TwinGateway
from backend.twin.scenario import throttled_reassign
from tests.plan_helpers import moves
from tests.unit.test_execution_service import World
from tests.unit.test_executor import MB, small_cluster


def test_a_drain_runs_to_completed_beside_a_move_in_flight(tmp_path):
    world = World(tmp_path)
    world.twin = TwinCluster(small_cluster({("a", 0): 500 * MB}),
                             TwinSettings(traffic_noise=0.0))
    world.gw = TwinGateway(world.twin)
    try:
        throttled_reassign(world.gw, moves(("a", 0, [3, 2])), 1000.0)  # days at 1 kB/s
        before = world.twin.list_reassignments()
        assert before == [{"topic": "a", "partition": 0, "replicas": [3, 2, 1],
                           "adding": [3], "removing": [1]}]
        draft = plan_preview.from_goal(world.gw.assignment(), {"goal": "drain",
                                                               "brokers": [1]})
        assert draft.preview["unresolved"] == [] and not draft.title.startswith("partial")
        entries = {(e["topic"], e["partition"]): e["replicas"]
                   for e in draft.content["partitions"]}
        assert sorted(entries) == [("a", 3), ("b", 0)]  # a-0 is left out
        plan_id = world.executing(draft.content)
        world.until(plan_id, "completed")
        p = execution.progress(world.store, plan_id)
        assert p["partitions_done"] == p["partitions_total"] == 2
        snap = world.twin.snap
        for (topic, part), target in entries.items():
            assert snap.replicas_of(snap.partition_row(topic, part)) == target
        # the other move was never retargeted: it ends where it was going (while the plan
        # ran, the executor's throttle lists for topic a replaced its own, so it finished)
        for _ in range(600):
            if not world.twin.list_reassignments():
                break
            world.twin.advance(1.0)
        assert snap.replicas_of(snap.partition_row("a", 0)) in ([3, 2, 1], [3, 2])
        assert world.twin.snap.replicas_of(world.twin.snap.partition_row("a", 0)) == [3, 2]
    finally:
        world.store.close()
