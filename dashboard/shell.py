"""The frame around every page (title, navigation, cluster picker, the page itself) and
the frame of every monitoring page (title, time control, banners, view state).

The view state (cluster, time range) comes from the URL when a monitoring page is opened
and lives in the page's ``ids.VIEW`` store afterwards: the time control updates the store
and the URL in the browser (a clientside callback), and the page's charts follow the
store, so a range change redraws charts in place instead of re-rendering the page.
"""

from __future__ import annotations

import dash
from dash import ClientsideFunction, Input, Output, State, dcc, html, no_update

from backend.errors import Unavailable
from backend.services import plan_actions, plan_queue
from backend.store.workflow import Actor
from components import timerange, urlstate
from dashboard import account, auth, ids, runtime
from dashboard.config import DashboardConfig

NAV_ITEMS = (("/", "Overview"), ("/brokers", "Brokers"), ("/throttles", "Throttles"),
             ("/quotas", "Quotas"), ("/what-if", "What-if"), ("/reassignments", "Reassignments"),
             ("/shrinks", "Shrinks"), ("/plans", "Plans"), ("/queue", "Queue"),
             ("/audit", "Audit"), ("/capacity", "Capacity"))
# pages of the whole fleet: their nav link keeps no cluster or window (/queue?cluster=
# names a filter there, which the Overview's link sets; the nav shows every cluster)
FLEET_PAGES = ("/queue",)


def layout(config: DashboardConfig) -> html.Div:
    """The frame, built per request (it names who is signed in)."""
    names = [c.name for c in config.clusters]
    picker = dcc.Dropdown(id=ids.CLUSTER_PICKER, options=names, value=names[0],
                          clearable=False, className="cluster-picker",
                          style={} if len(names) > 1 else {"display": "none"})
    return html.Div([
        dcc.Location(id=ids.URL, refresh="callback-nav"),
        html.Header([
            html.Div([html.Span("Railyard", className="brand"),
                      html.Span("Kafka guard rails", className="tagline")]),
            html.Nav([dcc.Link(label, href=path, className="nav-link", id=ids.nav_link(label))
                      for path, label in NAV_ITEMS], id=ids.NAV),
            html.Div([html.Label("Cluster", htmlFor=ids.CLUSTER_PICKER,
                                 hidden=len(names) < 2), picker], className="picker-box"),
            account.badge(),
        ], className="topbar"),
        account.banner(),
        html.Div(id=ids.APP_ERROR, className="banner banner-error", hidden=True),
        html.Main(dash.page_container, className="page"),
    ])


def page_frame(title: str, banner_id: str, query: dict, body: list,
               banner_slots: list | None = None) -> html.Div:
    """A monitoring page: its title and cluster, the time control, banners, then ``body``."""
    rt = runtime.current()
    c = rt.cluster(query.get("cluster"))
    asked = query.get("cluster")
    note = rt.unknown_cluster(asked)
    unknown = [] if note is None else [html.Div(
        f"{note}: showing {c.name}.", className="banner banner-error", role="alert",
        id=ids.UNKNOWN_CLUSTER)]
    key, start, end = query.get("range"), query.get("from"), query.get("to")
    state = {"cluster": c.name, "range": key if key in timerange.LABELS else timerange.DEFAULT,
             "from": start, "to": end}
    return html.Div([
        dcc.Store(id=ids.VIEW, data=state),
        dcc.Store(id=ids.VIEW_POPPED),
        html.H1([title, html.Small(f"cluster {c.name}")]),
        time_control(key, start, end, rt.config.server.refresh_seconds),
        html.A("Incident report of this window", id=ids.INCIDENT_REPORT,
               href=incident_href(state), className="report-link", target="_blank"),
        *unknown,
        html.Div(banner_slots, id=banner_id),
        *body,
    ])



def incident_href(state: dict) -> str:
    """The incident report (HTML) of a view's cluster and window (dashboard.reports)."""
    return "/reports/incident.html" + urlstate.build(
        {k: state.get(k) for k in urlstate.SHARED_KEYS})


def time_control(key: str | None, start: str | None, end: str | None,
                 refresh_seconds: int) -> html.Div:
    """The control as the URL describes it, and the interval that refreshes the page."""
    key = key if key in timerange.LABELS else timerange.DEFAULT
    return html.Div([
        html.Span("Time", className="control-label"),
        dcc.RadioItems(id=ids.RANGE, value=key, inline=True, className="range-radio",
                       options=[{"label": v, "value": k} for k, v in timerange.LABELS.items()]),
        html.Div([
            dcc.Input(id=ids.RANGE_FROM, type="text", value=start or "", debounce=True,
                      placeholder="from 2024-05-01T12:00", className="range-input"),
            dcc.Input(id=ids.RANGE_TO, type="text", value=end or "", debounce=True,
                      placeholder="to 2024-05-01T13:00", className="range-input"),
            html.Button("Show", id=ids.RANGE_APPLY, className="button"),
        ], id=ids.RANGE_ABS, className="range-abs", hidden=key != "abs"),
        html.Span(id=ids.RANGE_ERROR, className="inline-error"),
        dcc.Interval(id=ids.REFRESH, interval=refresh_seconds * 1000,
                     disabled=key == "abs"),
    ], className="time-control")


def plans_link(rt: runtime.Runtime, user: Actor) -> str:
    """The nav's Plans link: "Plans (1 for you, 1 stale)" while plans wait for ``user``'s
    approval, those whose cluster changed under their basis counted apart (Approve would
    refuse them: re-propose). Judged on each cluster's cached snapshot, read at most
    once per CLUSTER_TTL_SECONDS and only for clusters with plans waiting, as it runs at
    each page change; Approve itself still checks the live cluster."""
    ready, stale = plan_actions.waiting_seen(
        rt.plan_store(), user, plan_queue.cached_snapshots(rt.known_source))
    said = [f"{len(ready)} for you"] * bool(ready) + [f"{len(stale)} stale"] * bool(stale)
    return f"Plans ({', '.join(said)})" if said else "Plans"


def register(app: dash.Dash) -> None:
    """Shell callbacks: the URL names the cluster; the time control writes the view state
    and the URL in the browser (no server round trip); nav links keep the view."""
    navs = [Output(ids.nav_link(label), "href", allow_duplicate=True)
            for _, label in NAV_ITEMS]

    @app.callback(Output(ids.CLUSTER_PICKER, "value"), Input(ids.URL, "search"))
    def picker_follows_url(search: str):
        named = urlstate.parse(search).get("cluster")
        known = {c.name for c in runtime.current().config.clusters}
        return named if named in known else no_update

    @app.callback(Output(ids.nav_link("Plans"), "children"), Input(ids.URL, "pathname"))
    def plans_waiting(_path: str):
        """'Plans (2 for you)' on every page while plans wait for the signed-in user's
        approval, counted again at each page change (an approver sees new ones)."""
        try:
            return plans_link(runtime.current(), auth.current_actor())
        except (PermissionError, Unavailable):  # signed out meanwhile; store down
            return "Plans"

    @app.callback([Output(ids.nav_link(label), "href") for _, label in NAV_ITEMS],
                  Input(ids.URL, "search"))
    def nav_keeps_view(search: str):
        kept = urlstate.shared(search)
        return [path + ("" if path in FLEET_PAGES else kept) for path, _ in NAV_ITEMS]

    app.clientside_callback(
        """
        function(view) {
            const params = new URLSearchParams();
            for (const k of ["cluster", "range", "from", "to"]) {
                if (view && view[k]) { params.set(k, view[k]); }
            }
            const q = params.toString();
            return "/reports/incident.html" + (q ? "?" + q : "");
        }""",
        Output(ids.INCIDENT_REPORT, "href"), Input(ids.VIEW, "data"),
        prevent_initial_call=True)

    app.clientside_callback(
        ClientsideFunction("railyard", "pickCluster"),
        Output(ids.URL, "search", allow_duplicate=True), Input(ids.CLUSTER_PICKER, "value"),
        prevent_initial_call=True)

    app.clientside_callback(  # assets/railyard.js
        ClientsideFunction("railyard", "applyRange"),
        Output(ids.VIEW, "data"), Output(ids.RANGE_ERROR, "children"),
        Output(ids.RANGE_FROM, "value"), Output(ids.RANGE_TO, "value"),
        Output(ids.RANGE_ABS, "hidden"), Output(ids.REFRESH, "disabled"), *navs,
        Input(ids.RANGE, "value"), Input(ids.RANGE_APPLY, "n_clicks"),
        State(ids.RANGE_FROM, "value"), State(ids.RANGE_TO, "value"), State(ids.VIEW, "data"),
        *[State(ids.nav_link(label), "href") for _, label in NAV_ITEMS],
        prevent_initial_call=True)

    # Back or Forward to a window the time control wrote: the view, the control and the nav
    # links follow the URL (assets/railyard.js followUrl; the page itself stays)
    app.clientside_callback(
        ClientsideFunction("railyard", "followUrl"),
        Output(ids.VIEW, "data", allow_duplicate=True), Output(ids.RANGE, "value"),
        Output(ids.RANGE_FROM, "value", allow_duplicate=True),
        Output(ids.RANGE_TO, "value", allow_duplicate=True),
        Output(ids.RANGE_ABS, "hidden", allow_duplicate=True),
        Output(ids.RANGE_ERROR, "children", allow_duplicate=True),
        Output(ids.REFRESH, "disabled", allow_duplicate=True), *navs,
        Input(ids.VIEW_POPPED, "data"), State(ids.VIEW, "data"), State(ids.RANGE, "options"),
        *[State(ids.nav_link(label), "href") for _, label in NAV_ITEMS],
        prevent_initial_call=True)

