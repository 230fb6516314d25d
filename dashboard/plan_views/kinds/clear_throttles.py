"""A clear-throttles plan's page block: the configs it deletes, at the values approved."""

from __future__ import annotations

from dash import html

from backend.services import plan_preview
from components.banners import banner
from components.leftovers import config_table
from dashboard import ids


def block(draft: plan_preview.Draft, head: list | None = None) -> list:
    content = draft.content
    n = len(content["configs"])
    in_flight = draft.preview.get("in_flight") or []
    warning = [banner(
        f"{len(in_flight)} of these configs slowed a reassignment in flight when the plan "
        f"was proposed (on {_where(in_flight)}): deleting them lets that move copy "
        "unthrottled, as fast as the brokers' network allows. Approve only if that move "
        "should go faster now.", "warning")] if in_flight else []
    return [*(head or []), html.Div([
        html.H3(f"Deletes {n} replication throttle config{'s' * (n != 1)}"), *warning,
        html.P("Executing deletes exactly these configs through the cluster's gateway, each "
               "only while it still has the value shown: a config changed since is not "
               "deleted, and the plan fails naming it.", className="hint"),
        config_table(content["configs"], ids.PV_CLEAR_CONFIGS)], className="panel")]


def _where(configs: list[dict]) -> str:
    """"brokers 3, 9; topic orders": where the configs are."""
    out = []
    for etype in ("broker", "topic"):
        names = sorted({c["name"] for c in configs if c["entity_type"] == etype},
                       key=lambda n: (not n.isdigit(), int(n) if n.isdigit() else 0, n))
        if names:
            out.append(f"{etype}{'s' * (len(names) > 1)} {', '.join(names)}")
    return "; ".join(out)
