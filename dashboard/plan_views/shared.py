"""What every page showing plans shares: the refusals a plan action answers in words,
plan markers for the monitoring charts, the Propose row and the audit grid."""

from __future__ import annotations

import json

import pandas as pd
from dash import dcc, html

from backend.errors import BadInput, Conflict, Forbidden, NotFound, Unavailable
from backend.services import plan_actions, plan_events, plan_kinds
from backend.store.workflow import Actor
from components import tables
from dashboard import ids, runtime

REFUSALS = (BadInput, Conflict, Forbidden, NotFound, Unavailable)


def events_in(cluster: str, start: float, end: float) -> list[dict]:
    """Plan events and execution batches to mark on a monitoring chart; none when the
    plan store does not answer (the chart is still worth showing)."""
    try:
        return plan_events.markers(runtime.current().plan_store(), cluster, start, end)
    except Unavailable:
        return []


def propose_row(who: Actor, title: str, kind: str) -> html.Div:
    """Title and Propose for those who may propose; for others, why there is none. The
    options a plan of ``kind`` cannot take (an adaptive throttle without a throttle, a
    start time or the windows for what runs at once) are not offered: the proposal would
    be refused. They stay in the layout, hidden and empty, for the Propose callback."""
    if not plan_actions.can_propose(who):
        return html.P(f"Signed in as {who.name} ({who.role}): only operators and admins "
                      "propose plans.", className="hint")
    k = plan_kinds.kind_of(kind)
    return html.Div([
        html.Div([html.Label([html.Span("Title", className="field-label"),
                              dcc.Input(id=ids.PLAN_TITLE, type="text", value=title,
                                        className="wide")], className="field"),
                  html.Label([html.Span("Not before (optional)", className="field-label"),
                              dcc.Input(id=ids.PLAN_NOT_BEFORE, type="text", value="",
                                        placeholder="2026-12-01T22:00+01:00")],
                             className="field", style=_shown(k.scheduled)),
                  html.Button("Propose", id=ids.PLAN_PROPOSE, className="button primary")],
                 className="form-row"),
        html.Div([dcc.Checklist(id=ids.PLAN_ADAPTIVE, value=[], options=[{
            "label": " Adaptive throttle: the throttle is a ceiling; while it runs each "
                     "broker's rate follows its spare bandwidth, down to a floor of",
            "value": "adaptive"}], className="checklist"),
                  tables.number_input(ids.PLAN_FLOOR, 10, style={"width": "6em"}),
                  html.Span(" MB/s")], className="form-row", style=_shown(k.throttled)),
        html.Div(dcc.Checklist(id=ids.PLAN_OUTSIDE_WINDOWS, value=[], options=[{
            "label": " Run outside the cluster's execution windows (an emergency: it starts "
                     "batches at any time; the approval rules may ask for more approvers)",
            "value": "outside"}], className="checklist"), style=_shown(k.scheduled)),
        html.P("Proposing freezes exactly this plan (its sha256" + (
            ", with its start time if given: no batch starts before it, nor outside the "
            "cluster's execution windows" if k.scheduled else "") + "); someone else with "
            "the approver role approves it before it can run.", className="hint"),
        html.Div(id=ids.PLAN_PROPOSE_ERROR, className="inline-error", role="alert"),
    ], className="panel")


def _shown(shown: bool) -> dict | None:
    """A style that hides an element (the hidden attribute loses to a class's display)."""
    return None if shown else {"display": "none"}


AT_WIDTH = 190  # px: "2024-01-01 00:40:00 UTC" whole, not cut by the sized-to-fit grid


def audit_grid(rows: list[dict], height: int = 420, grid_id: str | None = None):
    """Audit rows as a grid: when, who, what, the state before and after, from where."""
    if not rows:
        return "No entries."
    frame = pd.DataFrame([{"id": r["id"], "at": r["at"].replace("T", " ")[:19] + " UTC",
                           "user": r["user"], "action": r["action"],
                           "plan": r["plan_id"], "before": r["before"] or "",
                           "after": r["after"] or "", "address": r["address"] or "",
                           "detail": "" if r["detail"] is None else json.dumps(r["detail"])}
                          for r in rows])
    table = tables.grid(frame, grid_id, height=height)
    table.columnDefs[1] = {**table.columnDefs[1], "minWidth": AT_WIDTH}
    return table


def plans_table(listed: list, heading: str | None = None) -> html.Div:
    """Plans with their state, each a link to its page (``heading``: what they are; by
    default the newest so many)."""
    if not listed:
        return html.P("No plans yet: preview one on Reassignments or Shrinks and propose "
                      "it.", className="hint")
    head = html.Tr([html.Th(h) for h in ("plan", "kind", "cluster", "title", "author",
                                         "state", "proposed")])
    rows = [html.Tr([html.Td(dcc.Link(f"#{p.id}", href=f"/plans/{p.id}")), html.Td(p.kind),
                     html.Td(p.cluster), html.Td(p.title), html.Td(p.author),
                     html.Td(html.Span(p.state, className=f"state state-{p.state}")),
                     html.Td(p.created_at.strftime("%Y-%m-%d %H:%M UTC"))]) for p in listed]
    return html.Div([html.H3(heading or f"Plans (newest {len(listed)})"),
                     html.Table([html.Thead(head), html.Tbody(rows)], className="plans")],
                    className="panel")
