"""/reassignments: plan a reassignment with the planner (a goal and its fields) or upload
one written elsewhere (Cruise Control, kafka-kit, by hand), and preview it before anyone
proposes it: replicas per broker before and after against max.broker.partitions, every
partition's change, the data to move, the ETA at a throttle and KIP-73's safe band, the
headroom left, and what it breaks or leaves undone, in words."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import BadInput, Unavailable
from backend.services import drained, fields, plan_preview
from backend.services.cluster import cluster_snapshot
from backend.services.plan_preview import (
    BALANCE_THRESHOLD,
    GOAL_RANGES,
    GOALS,
    MAX_THROTTLE,
)
from components import banners, charts, tables, urlstate
from components.help import term
from dashboard import auth, drafts, ids, plan_views, runtime
from dashboard.plan_views import kinds
from dashboard.plan_views import preview as preview_blocks

dash.register_page(__name__, path="/reassignments", name="Reassignments",
                   title="Railyard · Reassignments", order=5)

GOAL_HELP = {
    "limits": "every broker at most max.broker.partitions x target utilisation",
    "drain": "move every replica off the named brokers",
    "add": "fill the named new brokers up to the average",
    "balance": "replica and leader counts within avg x (2 - t) .. avg x t",
}

# the longest goal's label, "limits: every broker at most max.broker.partitions x target
# utilisation", is 550 px of 16 px system-ui text, with the box's padding and arrow
GOAL_WIDTH = "39rem"


def layout(cluster: str | None = None, **_query) -> html.Div:
    c = runtime.current().cluster(cluster)
    return html.Div([
        dcc.Store(id=ids.PLAN_TOKEN), dcc.Store(id=ids.RA_UPLOAD_TOKEN),
        html.H1(["Reassignments ", html.Small(f"cluster {c.name}")]),
        html.Div(id=ids.RA_BANNERS),
        html.P(["Generate a plan with Railyard's planner or upload one in Kafka's JSON, "
                "then preview what it does before proposing it. Leave the ",
                term("throttle", "throttle"), " empty for kafka-kit's suggested rate."],
               className="explain"),
        html.Div([
            tables.field("Plan", dcc.RadioItems(
                id=ids.RA_SOURCE, value="generate", inline=True,
                options=[{"label": "generate with the planner", "value": "generate"},
                         {"label": "upload Kafka JSON", "value": "upload"}])),
            html.Div([  # the planner's fields, shown for "generate" (shown_for_source)
                tables.field("Goal", dcc.Dropdown(
                    id=ids.RA_GOAL, value="balance", clearable=False,
                    options=[{"label": f"{g}: {GOAL_HELP[g]}", "value": g} for g in GOALS],
                    # the longest goal whole (at 30rem "balance: ... avg x (2 -..." was cut)
                    style={"width": GOAL_WIDTH, "maxWidth": "100%"})),
                tables.field("Brokers",
                             dcc.Input(id=ids.RA_BROKERS, type="text", placeholder="e.g. 7,8"),
                             "drain and add: broker ids"),
                tables.field("Target utilisation",
                             tables.number_input(ids.RA_UTILIZATION, 1.0),
                             "share of max.broker.partitions, up to 1"),
                tables.field("Balance threshold",
                             tables.number_input(ids.RA_THRESHOLD, BALANCE_THRESHOLD),
                             "1 to 2; 1.1: within 10% of the average"),
            ], id=ids.RA_GOAL_FIELDS, className="field-group"),
            html.Div([  # shown for "upload"
                # no accept filter: the browser drops a file it filters out without a word,
                # and the server says what is wrong with any file ("plan.txt: not a JSON
                # file")
                dcc.Upload(id=ids.RA_UPLOAD, children=html.Button(
                    "Upload reassignment JSON", className="button")),
                html.Span(id=ids.RA_UPLOAD_NAME, className="hint"),
            ], id=ids.RA_UPLOAD_FIELDS, className="field-group", hidden=True),
        # labels in a line at the top: at the foot, Brokers' hint under its box lifted its
        # label above Goal's
        ], className="form-row form-row-top"),
        html.Div([
            tables.field(term("Throttle (MB/s)", "throttle"),
                         tables.number_input(ids.RA_THROTTLE, placeholder="suggested")),
            html.Button("Preview", id=ids.RA_RUN, className="button primary"),
        ], className="form-row"),
        html.Div(id=ids.RA_ERROR, className="inline-error", role="alert"),
        dcc.Loading(html.Div(id=ids.RA_PREVIEW), delay_show=300),
    ])


@dash.callback(Output(ids.RA_GOAL_FIELDS, "hidden"), Output(ids.RA_UPLOAD_FIELDS, "hidden"),
               Input(ids.RA_SOURCE, "value"))
def shown_for_source(source):
    """The planner's fields for "generate", the upload button for "upload"."""
    return source != "generate", source != "upload"


@dash.callback(Output(ids.RA_UPLOAD_TOKEN, "data"), Output(ids.RA_UPLOAD_NAME, "children"),
               Output(ids.RA_SOURCE, "value"), Output(ids.RA_ERROR, "children",
                                                      allow_duplicate=True),
               Input(ids.RA_UPLOAD, "contents"), State(ids.RA_UPLOAD, "filename"),
               prevent_initial_call=True)
def uploaded(contents, filename):
    """An upload is checked once, kept on the server's disk, and becomes the plan to
    preview (the file, megabytes for a large plan, does not travel again with every
    preview)."""
    if not contents:
        return no_update, no_update, no_update, no_update
    try:
        token = drafts.save_upload(contents, filename)
    except BadInput as e:  # still the plan to preview: Preview says none was uploaded
        return None, "", "upload", str(e)
    return token, f"uploaded: {filename}", "upload", ""


@dash.callback(Output(ids.RA_PREVIEW, "children"), Output(ids.PLAN_TOKEN, "data"),
               Output(ids.RA_ERROR, "children"), Output(ids.RA_BANNERS, "children"),
               Input(ids.RA_RUN, "n_clicks"),
               State(ids.RA_SOURCE, "value"), State(ids.RA_GOAL, "value"),
               State(ids.RA_BROKERS, "value"), State(ids.RA_UTILIZATION, "value"),
               State(ids.RA_THRESHOLD, "value"), State(ids.RA_UPLOAD_TOKEN, "data"),
               State(ids.RA_THROTTLE, "value"), State(ids.URL, "search"),
               prevent_initial_call=True)
def preview(_clicks, source, goal, brokers, utilization, threshold, upload_token,
            throttle_mb, search):
    cluster = _cluster(search)
    rt = runtime.current()
    try:
        snap = cluster_snapshot(rt.source(cluster))
        throttle = fields.number(throttle_mb, "throttle", above=0, limit=MAX_THROTTLE / 1e6,
                                 unit="MB/s", empty="the suggested rate")
        # the safe band and the suggested throttle (which Propose freezes) for the brokers'
        # network as configured, which the adaptive throttle uses too
        capacity = rt.cluster(cluster).adaptive_throttle.network_capacity
        if throttle is not None:
            plan_preview.refuse_past_network(throttle, capacity)
        # whole bytes/s (a LONG config, KIP-73), the figure Propose freezes: 12.3456789
        # MB/s previewed "--throttle 12345678" and froze 12345679, and 0.0000001 MB/s
        # previewed but was refused at Propose (0 B/s)
        throttle = None if throttle is None else min(max(round(throttle * 1e6), 1),
                                                     MAX_THROTTLE)
        memory = drained.remembered(rt.plan_store(), snap)  # brokers completed plans emptied
        if source == "upload":
            obj, filename = drafts.upload(upload_token)
            if obj is None:
                raise BadInput("upload: choose a reassignment JSON file first")
            draft = plan_preview.from_kafka_json(snap, obj, throttle=throttle,
                                                 network_capacity=capacity, source=filename,
                                                 drained=memory)
        else:
            draft = plan_preview.from_goal(snap, {
                "goal": goal, "brokers": fields.broker_ids(brokers, "brokers"),
                "target_utilization": fields.number(utilization, "target utilisation",
                                                    default=1.0, **GOAL_RANGES[
                                                        "target_utilization"]),
                "threshold": fields.number(threshold, "balance threshold",
                                           default=BALANCE_THRESHOLD,
                                           **GOAL_RANGES["threshold"])},
                throttle=throttle, network_capacity=capacity, where="", drained=memory)
    except BadInput as e:  # the last preview goes, with its Propose: it was not this input's
        return None, None, str(e), []
    except Unavailable as e:
        return None, None, "", [banners.banner(str(e), "error")]
    return reassignment_preview(draft), drafts.save(draft), "", []


def reassignment_preview(draft: plan_preview.Draft) -> list:
    """The preview block of a reassignment draft, or why there is nothing to show."""
    if draft.empty and draft.preview["unresolved"]:  # nothing the planner can do now
        return [html.H2(draft.title, className="plan-title"), *preview_blocks.words(draft.preview)]
    if draft.empty:
        return [banners.banner(f"Nothing to move: {draft.title}. The cluster already meets "
                               "the goal.", "info"), *preview_blocks.left_out(draft.preview)]
    return kinds.block(draft.kind, draft, [
        html.H2(draft.title, className="plan-title"), _network_line(draft.preview),
        plan_views.propose_row(auth.current_actor(), draft.title, draft.kind)])


def _network_line(p: dict) -> html.P:
    """Which network capacity the safe band and the suggested throttle assume, and where
    the figure came from (preview passed the cluster's configured one): a reader of 1
    GbE's figures on a cluster of 10 GbE brokers would not know why."""
    return html.P([term("Network capacity", "network capacity"),
                   f" {charts.rate_text(p['network_capacity'])} per broker each way, from "
                   "this cluster's config (adaptive_throttle.network_capacity, 1 GbE unless "
                   "set): the safe band's top and the suggested throttle assume it."],
                  className="hint")


def _cluster(search: str | None) -> str | None:
    return urlstate.parse(search).get("cluster")
