"""What every page showing a plan preview shares: the preview blocks with this
dashboard's ids, and the callbacks that page the diff grid from the server and send
Kafka's JSON file. Registered once, when the first page imports this module; they find
the plan by the token the page holds (dashboard.drafts)."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html, no_update

from backend.services import plan_preview
from components import plans
from dashboard import drafts, ids


def reassignment_block(draft: plan_preview.Draft) -> list:
    """Cards, words, before/after bars, the diff grid and the exports of a reassignment."""
    p = draft.preview
    return [
        html.H2(draft.title, className="plan-title"),
        html.Div(plans.reassignment_cards(p), id=ids.PLAN_CARDS, className="cards"),
        html.Div(plans.words(p), id=ids.PLAN_WORDS),
        html.Div(plans.bars(p, "Replicas per broker before and after the plan", ids.PLAN_BARS),
                 className="panel"),
        plans.diff_grid(len(draft.table), ids.PLAN_FILTER, ids.PLAN_GRID_BOX, ids.PLAN_GRID),
        plans.exports(p["throttle"], "plan.json", ids.PLAN_JSON_BUTTON, ids.PLAN_JSON_DOWNLOAD,
                      ids.PLAN_COMMAND),
    ]


@dash.callback(Output(ids.PLAN_GRID, "getRowsResponse"), Input(ids.PLAN_GRID, "getRowsRequest"),
               State(ids.PLAN_TOKEN, "data"), State(ids.PLAN_FILTER, "value"),
               prevent_initial_call=True)
def grid_rows(request, token, contains):
    """One block of rows, sorted and filtered on the server."""
    table = drafts.grid(token)
    if not request or table is None:
        return {"rowData": [], "rowCount": 0}
    rows, count = table.page(request["startRow"], request["endRow"],
                             request.get("sortModel"), contains)
    return {"rowData": rows, "rowCount": count}


@dash.callback(Output(ids.PLAN_GRID_BOX, "children"), Input(ids.PLAN_FILTER, "value"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def refilter(_contains, token):
    """A new grid asks for its first block again, now through the filter."""
    return plans.grid(ids.PLAN_GRID) if token else no_update


@dash.callback(Output(ids.PLAN_JSON_DOWNLOAD, "data"), Input(ids.PLAN_JSON_BUTTON, "n_clicks"),
               State(ids.PLAN_TOKEN, "data"), prevent_initial_call=True)
def download(_clicks, token):
    draft = drafts.load(token)
    if draft is None:
        return no_update
    return dcc.send_string(plan_preview.kafka_json_text(draft.content), "plan.json")
