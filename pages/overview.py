"""/ Overview: every guard rail of a cluster at a glance; near or over a limit stands out.

Two callbacks: the limit figures (live: from the cluster's assignment, so they never wait
for Prometheus; over a past window: from that window's metrics at its end, so every
figure on the page is of the same moment), and the health figures and series."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import dash
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import Unavailable
from backend.services import (
    execution,
    limits,
    monitoring,
    plan_actions,
    plan_queue,
    throttle_leftovers,
)
from backend.services.cluster import assignment_note, cluster_snapshot
from backend.services.plan_kinds import CLEAR
from components import banners, charts, monitor, urlstate
from components.help import term
from components.leftovers import config_table
from components.tables import card
from dashboard import auth, ids, plan_views, runtime, shell
from dashboard.monitoring_view import monitored

dash.register_page(__name__, path="/", name="Overview", title="Railyard · Overview", order=0)

GRAPH = {"displayModeBar": False}


def layout(**query) -> html.Div:
    return shell.page_frame("Overview", ids.OV_BANNERS, query, [
        html.P(dcc.Link("This cluster's plans in the queue", id=ids.OV_QUEUE, href="/queue"),
               className="hint"),
        html.Div(id=ids.OV_HEALTH, className="cards"),
        html.Div(id=ids.OV_CARDS, className="cards"),
        html.Div(dcc.Graph(id=ids.OV_BROKER_BARS, config=GRAPH), className="panel"),
        html.Div([html.Div(dcc.Graph(id=ids.OV_HEALTH_SERIES, config=GRAPH), className="panel"),
                  html.Div(dcc.Graph(id=ids.OV_PARTITIONS_SERIES, config=GRAPH),
                           className="panel")], className="grid-2"),
        html.Div([html.H3("Leftover throttles now"),
                  html.Div(id=ids.OV_LEFTOVERS),
                  dcc.Store(id=ids.OV_LEFTOVER_ROWS),
                  dcc.Store(id=ids.OV_LEFTOVER_SHOWN),
                  html.Button("Propose clearing these throttles", id=ids.OV_CLEAR,
                              className="button", hidden=True),
                  html.Div(id=ids.OV_CLEAR_RESULT, className="inline-error", role="alert")],
                 className="panel"),
    ], banner_slots=[html.Div(id=ids.OV_HOLD_BANNERS), html.Div(id=ids.OV_LIMIT_BANNERS),
                     html.Div(id=ids.OV_METRIC_BANNERS)])


@dash.callback(Output(ids.OV_HOLD_BANNERS, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def show_holds(state, _tick):
    """A banner per executing plan a guard-rail stop or an execution window holds: which
    condition and its value, or when the next window opens."""
    try:
        held = execution.held_plans(runtime.current().plan_store(), state["cluster"])
    except Unavailable:
        return []
    out = []
    for h in held:
        when = ("" if h["next_window"] is None else " (next window " + datetime.fromtimestamp(
            h["next_window"], UTC).strftime("%a %Y-%m-%d %H:%M UTC") + ")")
        out.append(html.Div(dcc.Link(f"Plan #{h['plan_id']} ({h['title']}) is {h['status']}: "
                                     f"{h['text']}{when}", href=f"/plans/{h['plan_id']}"),
                            className="banner banner-warning", role="status"))
    return out


@dash.callback(Output(ids.OV_CARDS, "children"), Output(ids.OV_BROKER_BARS, "figure"),
               Output(ids.OV_LIMIT_BANNERS, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def show_assignment(state, _tick):
    w, _ = monitor.window(state)
    return assignment_view(state["cluster"], w)


@dash.callback(Output(ids.OV_QUEUE, "href"), Output(ids.OV_QUEUE, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def queue_link(state, _tick):
    """The link to the cluster's entries in the fleet's queue, with how many are open."""
    cluster = state["cluster"]
    href = "/queue" + urlstate.build({"cluster": cluster})
    try:
        counts = plan_queue.open_counts(runtime.current().plan_store(), cluster)
    except Unavailable:
        return href, f"{cluster}'s plans in the queue"
    open_ = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none open"
    return href, f"{cluster}'s plans in the queue ({open_})"


_live: dict[str, tuple] = {}  # cluster -> (snapshot, note and ratio, what was drawn)


def assignment_view(cluster: str, w):
    """The limit cards, bars and banners. Live, they are drawn once per assignment read
    (a range change or refresh within the cluster-read TTL, or of an unchanged snapshot
    file, redraws nothing: 100 bars of 200k partitions cost a plotly build each time)."""
    source = runtime.current().source(cluster)
    if w.refreshing:
        try:
            snap = cluster_snapshot(source)
        except Unavailable:
            return _assignment_view(source, w)
        drawn_from = (assignment_note(source), source.near_limit_ratio)
        hit = _live.get(cluster)
        if hit is not None and hit[0] is snap and hit[1] == drawn_from:
            return hit[2]
        drawn = _assignment_view(source, w)
        _live[cluster] = (snap, drawn_from, drawn)
        return drawn
    return _assignment_view(source, w)


def _assignment_view(source, w):
    try:
        if w.refreshing:
            g = limits.guard_rails(source)
            where = ("from the snapshot file, as of its last write" if assignment_note(source)
                     or source.gateway is None else "from the cluster, now")
        else:
            g = limits.guard_rails_at(source, w)
            where = f"from Prometheus at {w.end_label}"
    except Unavailable as e:  # live: the cluster is not answering; past: Prometheus
        return [], charts.empty("Partitions per broker", "No partition counts to show"), \
            [banners.banner(str(e), "error" if w.refreshing else "warning")]
    limit = g["limits"]["max.broker.partitions"]
    brokers = g["brokers"]
    fig = charts.limit_bars([str(b["id"]) for b in brokers], [b["replicas"] for b in brokers],
                            limit, f"Partition replicas per broker {where}, against "
                                   "max.broker.partitions", near=g["near_limit_ratio"])
    notes = [banners.banner(n, "warning") for n in [assignment_note(source)] if n]
    if g["over"]:
        notes.append(banners.banner(f"Brokers {', '.join(map(str, g['over']))} are over "
                                    f"max.broker.partitions ({limit:,}): new partitions cannot "
                                    "go there", "error"))
    elif g["near"]:
        notes.append(banners.banner(f"Brokers {', '.join(map(str, g['near']))} are within "
                                    f"{1 - g['near_limit_ratio']:.0%} of max.broker.partitions "
                                    f"({limit:,})", "warning"))
    return _assignment_cards(g), fig, notes


@dash.callback(Output(ids.OV_HEALTH, "children"), Output(ids.OV_HEALTH_SERIES, "figure"),
               Output(ids.OV_PARTITIONS_SERIES, "figure"),
               Output(ids.OV_METRIC_BANNERS, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def show_health(state, _tick):
    return monitored("overview", "/", state, monitoring.health, _health,
                     ("Partition health", "Partitions per broker over time"))


def _health(h: dict, view: monitor.View) -> tuple:
    w = view.window
    limit = view.source.limits.max_broker_partitions
    plans = plan_views.events_in(view.cluster, w.start, w.end)
    return (_health_cards(h["figures"], view),
            view.figure(h["health_series"], f"Partition health, the most in each "
                        f"{w.step_label}", "partitions", events=plans),
            view.figure(h["partitions_series"], "Partition replicas per broker" + (
                f" ({h['partitions_shown']})" if h["partitions_shown"] else ""), "replicas",
                        limit=limit, limit_name="max.broker.partitions", events=plans))


def _health_cards(f: dict, view: monitor.View) -> list:
    w = view.window
    at = "at the end of the window" if not w.refreshing else "now"

    def count(label, key, bad="over", detail_name="brokers", when=at):
        fig = f[key]
        value = fig["value"]
        state = "ok" if not value else bad
        detail = fig["detail"]
        note = view.note(fig) or (
            f"{detail_name} {', '.join(map(str, detail[:8]))}{' ...' if len(detail) > 8 else ''}"
            if detail else when)
        return card(label, fig.get("why") or "-" if value is None else f"{value:,.0f}", state,
                    note)

    throttles = f["throttles"]
    return [
        count(term("Under-replicated", "under-replicated"), "under_replicated"),
        count(term("Under min ISR", "under-min-isr"), "under_min_isr"),
        count(term("Offline", "offline"), "offline"),
        count("Reassigning", "reassigning", bad="near"),
        count("Brokers down", "brokers_down"),
        count(term("Throttles in force (brokers)", "throttle"), "throttles", bad="near",
              detail_name="rates configured on brokers" if throttles.get("basis") == "configured"
              else "throttled traffic on brokers"),
        _throttled_principals(f["throttled_principals"], view, count),
    ]


NO_QUOTA = ("no controller_mutation_rate quota is set on this cluster (KIP-599): Kafka "
            "meters and throttles partition mutations only for principals a quota applies "
            "to (see Quotas)")


def _throttled_principals(fig: dict, view: monitor.View, count) -> html.Div:
    """The throttled-principals card. Unread because the cluster has no mutation quota
    (the Quotas page's answer: monitoring.quotas_set), it says so: Kafka makes no
    mutation sensors without one (ControllerMutationQuotaManager), and "no data yet: the
    brokers do not export it, or Prometheus has not scraped them" sent people to look at
    their exporters."""
    label = term("Throttled principals", "tokens")
    if fig["value"] is None and not view.before and _no_quota_set(view):
        return card(label, "no quota", "ok", NO_QUOTA)
    w = view.window
    return count(label, "throttled_principals", detail_name=f"throttled in {w.label}:",
                 when=f"none in {w.label}")


def _no_quota_set(view: monitor.View) -> bool:
    """Whether the cluster has no controller_mutation_rate quota, as the Quotas page
    tells (monitoring.quotas_set; False when it cannot tell: no gateway, or no answer)."""
    try:
        return monitoring.quotas_set(view.source) == 0
    except Unavailable:
        return False


def _assignment_cards(g: dict) -> list:
    cluster_limit = g["limits"]["max.partitions"]
    used = g["cluster_partitions"]
    headroom = [b["capacity"] for b in g["brokers"] if b["capacity"] is not None]
    return [
        card(term("Cluster replicas", "max.partitions"),
             f"{used:,}" + (f" / {cluster_limit:,}" if cluster_limit else ""),
             charts_state(used, cluster_limit, g["near_limit_ratio"]),
             None if cluster_limit is None else f"{g['cluster_capacity']:,} left"),
        card(term("Brokers near the limit", "max.broker.partitions"), str(len(g["near"])),
             "near" if g["near"] else "ok", ", ".join(map(str, g["near"])) or None),
        card("Brokers over the limit", str(len(g["over"])), "over" if g["over"] else "ok",
             ", ".join(map(str, g["over"])) or None),
        card(term("Least headroom", "headroom"),
             "unlimited" if not headroom else f"{min(headroom):,}",
             note="replicas before the fullest broker is at its limit"),
        card("Topics / partitions", f"{g['topics']:,} / {g['partitions']:,}",
             note=f"{charts.counted(len(g['brokers']), 'broker')} in "
                  f"{charts.counted(len(g['racks']), 'rack')}")
        if g["topics"] is not None else
        card("Partitions", "-" if g["partitions"] is None else f"{g['partitions']:,}",
             note=f"{charts.counted(len(g['brokers']), 'broker')} reporting"),
    ]


def charts_state(value: float, limit: float | None, near: float) -> str:
    colour = charts.state_colour(value, limit, near)
    return {charts.OVER: "over", charts.NEAR: "near"}.get(colour, "ok")


# ---- leftover throttles ----------------------------------------------------------------------
@dash.callback(Output(ids.OV_LEFTOVERS, "children"), Output(ids.OV_LEFTOVER_ROWS, "data"),
               Output(ids.OV_CLEAR, "hidden"), Output(ids.OV_LEFTOVER_SHOWN, "data"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"),
               State(ids.OV_LEFTOVER_SHOWN, "data"))
def show_leftovers(state, _tick, shown):
    """Throttle configs no executing plan holds, now (configs have no history). Redrawn
    only when what it shows changed: a range change or a refresh leaves the list as it is
    (re-laying out its long replica lists held the page's charts back by ~0.4 s)."""
    drawn = _leftovers(state["cluster"])
    digest = hashlib.sha256(f"{state['cluster']}|{drawn!r}".encode()).hexdigest()
    if digest == shown:
        return dash.no_update, dash.no_update, dash.no_update, dash.no_update
    return (*drawn, digest)


# the demo's start: a kafka-reassign-partitions --throttle move in flight, nothing left
# behind ("No replication throttle is left ..." stood over a 68-row table of throttles)
IN_FLIGHT_ONLY = ("No leftover throttle: the {configs} below {verb} to a reassignment in "
                  "flight that Railyard did not start, and kafka-reassign-partitions --verify "
                  "removes them once it is done.")


def _leftovers(cluster: str) -> tuple:
    """(what is shown, the rows the clear button proposes, the button hidden). A throttle
    on a broker or topic a reassignment is moving now (one Railyard did not start, say
    kafka-reassign-partitions --throttle) is that move's, not left behind: it is shown
    apart, and the button does not propose it."""
    rt = runtime.current()
    try:
        got = throttle_leftovers.leftovers(rt.plan_store(), rt.source(cluster))
    except Unavailable as e:
        return html.P(f"Leftover throttles cannot be listed: {e}", className="hint"), None, True
    rows = [r for r in got["leftovers"] if not r["moving"]]
    in_use = [r for r in got["leftovers"] if r["moving"]]
    plans_held = "; ".join(f"#{h['plan_id']} {h['status']}: {h['configs']}"
                           for h in got["holding"])
    held = (f" {got['held']} {'more ' if rows or in_use else ''}are held by executing "
            f"plans ({plans_held}), which put them back themselves." if got["held"] else "")
    if not rows:  # nothing left behind: the first line must not deny the table under it
        if not in_use:
            return [html.P("No replication throttle is left on a broker or topic now." + held,
                           className="hint")], None, True
        return [html.P(IN_FLIGHT_ONLY.format(configs=charts.counted(len(in_use), "throttle config"),
                                             verb="belongs" if len(in_use) == 1 else "belong")
                       + held, className="hint"), config_table(in_use)], None, True
    moving = [html.P(f"{len(in_use)} throttle configs slow a reassignment in flight that "
                     "Railyard did not start: they are that move's, not left behind "
                     "(kafka-reassign-partitions --verify removes them once it is done).",
                     className="hint"),
              config_table(in_use)] if in_use else []
    admin = plan_actions.can_propose(auth.current_actor(), CLEAR)
    return [html.P(f"{len(rows)} replication throttle configs are set that no executing "
                   "plan or reassignment in flight holds: they slow any replica they name "
                   "until someone deletes them." + held + " Kafka does not record when a "
                   "config was set: the time shown is when Railyard first saw it with this "
                   "value.", className="hint"),
            config_table(rows, ids.OV_LEFTOVER_TABLE), *moving], rows, not admin


@dash.callback(Output(ids.URL, "href", allow_duplicate=True),
               Output(ids.OV_CLEAR_RESULT, "children"),
               Input(ids.OV_CLEAR, "n_clicks"), State(ids.OV_LEFTOVER_ROWS, "data"),
               State(ids.VIEW, "data"), prevent_initial_call=True)
def propose_clear(clicks, rows, state):
    """Propose exactly the configs listed, at the values shown (the service refuses a
    user who is not an admin, and a value that changed since)."""
    if not clicks or not rows:
        return no_update, no_update
    rt = runtime.current()
    configs = [{k: r[k] for k in ("entity_type", "name", "key", "value")} for r in rows]
    try:
        plan = throttle_leftovers.propose_clear(rt.plan_store(), auth.current_actor(),
                                                rt.source(state["cluster"]), configs=configs)
    except plan_views.REFUSALS as e:
        return no_update, f"Refused: {e}"
    return f"/plans/{plan.id}", ""
