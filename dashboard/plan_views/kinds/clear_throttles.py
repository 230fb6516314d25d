"""A clear-throttles plan's page block: the configs it deletes, at the values approved."""

from __future__ import annotations

from dash import html

from backend.services import plan_preview
from components.leftovers import config_table
from dashboard import ids


def block(draft: plan_preview.Draft, head: list | None = None) -> list:
    content = draft.content
    n = len(content["configs"])
    return [*(head or []), html.Div([
        html.H3(f"Deletes {n} replication throttle config{'s' * (n != 1)}"),
        html.P("Executing deletes exactly these configs through the cluster's gateway, each "
               "only while it still has the value shown: a config changed since is not "
               "deleted, and the plan fails naming it.", className="hint"),
        config_table(content["configs"], ids.PV_CLEAR_CONFIGS)], className="panel")]
