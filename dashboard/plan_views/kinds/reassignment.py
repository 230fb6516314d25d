"""A reassignment's page block: cards, words, before/after bars, the diff grid paged from
the server, and the exports (Kafka's JSON file, the kafka-reassign-partitions command)."""

from __future__ import annotations

from dash import html

from backend.services import plan_preview
from backend.store.store import Plan
from dashboard import ids
from dashboard.plan_views import preview
from dashboard.plan_views.grids import keep_plan_grid, plan_grid, stored_table

JSON_ENTRIES = 1000  # partitions shown inline; the file has them all


def block(draft: plan_preview.Draft, head: list | None = None) -> list:
    """``head`` (Propose, or a stored plan's state and decisions) goes first."""
    p = draft.preview
    return [
        *(head or [html.H2(draft.title, className="plan-title")]),
        html.Div(preview.reassignment_cards(p), id=ids.PLAN_CARDS, className="cards"),
        html.Div(preview.words(p), id=ids.PLAN_WORDS),
        html.Div(preview.bars(p, "Replicas per broker before and after the plan",
                              ids.PLAN_BARS), className="panel"),
        preview.diff_grid(len(draft.table) if draft.table is not None else p["partitions"],
                          ids.PLAN_FILTER, ids.PLAN_GRID_BOX, ids.PLAN_GRID,
                          # no grid yet: a stored plan painted before its content is
                          # read, whose grid is built on the cluster now
                          sizes_now=draft.table is None or draft.table.sizes_now),
        preview.exports(p["throttle"], "plan.json", ids.PLAN_JSON_BUTTON,
                        ids.PLAN_JSON_DOWNLOAD, ids.PLAN_COMMAND),
    ]


def stored_draft(plan: Plan) -> plan_preview.Draft:
    """A stored plan as its page shows it: with its grid once its content is read (kept
    by plan, so the next views page it without decoding the plan again)."""
    draft = plan_preview.Draft(plan.kind, plan.cluster, plan.title, plan.preview,
                               frozen=plan.content)
    draft.table = plan_grid(plan.id)  # kept: the draft's own (Propose) or built before
    if draft.table is None and plan.content is not None:
        draft.table = stored_table(plan)
        keep_plan_grid(plan.id, draft.table)
    return draft


def json_summary(plan: Plan) -> str:
    """What the exact-JSON panel says it holds: the first JSON_ENTRIES partitions when
    longer (the download has every one)."""
    count = plan.preview.get("partitions")
    if count is not None and count > JSON_ENTRIES:
        return (f" (the first {JSON_ENTRIES:,} of {count:,} partitions: Download plan JSON "
                "has all of them)")
    return ""


def json_text(content: dict) -> str:
    entries = content["partitions"]
    if len(entries) <= JSON_ENTRIES:
        return plan_preview.kafka_json_text(content)
    return plan_preview.kafka_json_text({**content, "partitions": entries[:JSON_ENTRIES]})
