"""Plans of every cluster in one list: what waits for your approval first, then every
plan, filtered by state with a shareable URL (/plans?state=proposed). Each row links to
the plan's page, where it is approved, executed and followed."""

from __future__ import annotations

import dash
from dash import Input, Output, dcc, html

from backend.errors import Unavailable
from backend.services import plan_actions, plan_queue
from backend.services import plans as plan_service
from components import banners, urlstate
from dashboard import auth, ids, runtime
from dashboard.plan_views.shared import plans_table

dash.register_page(__name__, path="/plans", name="Plans", title="Railyard · Plans", order=7)

LISTED = 500  # the newest plans the list holds


def layout(state: str | None = None, **_query) -> html.Div:
    unknown = urlstate.unknown("state", state, plan_actions.PLAN_STATES, "every state")
    state = state if state in plan_actions.PLAN_STATES else None
    try:
        listed = plan_service.list_plans(runtime.current().plan_store(), state=state,
                                         limit=LISTED)
    except Unavailable as e:
        return html.Div([html.H1("Plans"), banners.banner(str(e), "error")])
    return html.Div([
        html.H1("Plans"),
        html.P("Plans are previewed on Reassignments and Shrinks, or proposed through the "
               "API; each needs the approval of someone other than its author before it "
               "can be executed.", className="hint"),
        *([banners.banner(unknown, "info")] if unknown else []),
        html.Div(id=ids.PL_WAITING),
        _filters(state),
        plans_table(listed, f"{state.capitalize() if state else 'All'} plans (newest "
                            f"{len(listed)})") if listed
        else html.P(f"No {state or ''} plans.".replace("  ", " "), className="hint"),
    ])


@dash.callback(Output(ids.PL_WAITING, "children"), Input(ids.PL_WAITING, "id"))
def waiting(_shown):
    """The plans that wait for the signed-in user's approval, when the page shows; those
    whose cluster changed under their basis (judged on its cached snapshot, as the nav
    counts them: plan_actions.waiting_seen) apart, as Approve would refuse them."""
    rt = runtime.current()
    try:
        ready, stale = plan_actions.waiting_seen(rt.plan_store(), auth.current_actor(),
                                                 plan_queue.cached_snapshots(rt.known_source))
    except Unavailable as e:
        return banners.banner(str(e), "error")
    shown = [plans_table(ready, f"Waiting for your approval ({len(ready)})") if ready
             else html.P("No plan waits for your approval.", className="hint")]
    if stale:
        shown.append(plans_table(stale, f"Stale: their cluster changed since they were "
                                        f"proposed, Approve would refuse them; their authors "
                                        f"re-propose ({len(stale)})"))
    return html.Div(shown)


def _filters(state: str | None) -> html.Div:
    """One link per state (and All): the filter is the URL, so a list can be shared."""
    links = [(None, "All"), *((s, s) for s in plan_actions.PLAN_STATES)]
    return html.Div([html.Span("Show: ", className="hint")] + [
        dcc.Link(label, href="/plans" + (f"?state={s}" if s else ""),
                 className="filter-link" + (" filter-active" if s == state else ""))
        for s, label in links], className="form-row", id=ids.PL_FILTERS)
