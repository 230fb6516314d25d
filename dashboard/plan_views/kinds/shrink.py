"""A shrink's page block: cards, words, the delete-partitions stages, before/after bars,
the room reclaimed per broker, and the migration that works on any cluster today (first,
on a cluster that cannot delete partitions, where it is what runs); and the sentence on
what executing it does on this cluster."""

from __future__ import annotations

import pandas as pd
from dash import html

from backend.services import plan_preview, shrink_execution
from components import banners, tables
from components.tables import duration
from dashboard import ids, runtime
from dashboard.plan_views import preview


def block(draft: plan_preview.Draft, head: list | None = None) -> list:
    """The block of a shrink draft or stored shrink plan; ``head`` (Propose, or a stored
    plan's facts and actions) goes first, instead of the title."""
    p, c = draft.preview, draft.content
    reclaimed = pd.DataFrame([{"broker": b["id"], "replicas before": b["before"],
                               "replicas after": b["after"],
                               "replicas reclaimed": b["replicas_reclaimed"],
                               "log bytes reclaimed": b["bytes_reclaimed"]}
                              for b in p["brokers"]])
    runs_migration = shrink_execution.runs_as_migration(
        runtime.current().gateways.get(draft.cluster))
    kip = html.Div([html.H3("Stages under the delete-partitions KIP"
                            + (": not on this cluster" if runs_migration else "")),
                    stages(c["stages"])], className="panel")
    room = [html.Div(preview.bars(p, "Replicas per broker before and after the shrink",
                                  ids.PLAN_BARS), className="panel"),
            html.Div([html.H3("Room reclaimed per broker"),
                      # sizes as the cards write them (24.8 MB), not 24,793,471
                      tables.grid(reclaimed, height=260,
                                  formats={"log bytes reclaimed": tables.BYTES})],
                     className="panel")]
    plan = [migration(c["migration"], runs_migration), *room, kip] if runs_migration \
        else [kip, *room, migration(c["migration"], runs_migration)]
    return [
        *(head or [html.H2(draft.title, className="plan-title")]),
        html.Div(preview.shrink_cards(p, c), id=ids.PLAN_CARDS, className="cards"),
        html.Div(preview.words(p), id=ids.PLAN_WORDS),
        *plan,
    ]


def execution_hint(cluster: str) -> str:
    """What executing a shrink does on ``cluster``."""
    return shrink_execution.what_happens(runtime.current().gateways.get(cluster))


def stages(rows: list[dict]) -> html.Ol:
    return html.Ol([html.Li([html.Strong(s["mode"]), f" at {_when(s)}: {s['effect']}"])
                    for s in rows], className="stages")


def _when(stage: dict) -> str:
    at, latest = stage["at_ms"] / 1000, stage["latest_at_ms"] / 1000
    if at == 0 and latest == 0:
        return "once approved and started"
    if at == latest:
        return f"+{duration(at)}"
    return f"+{duration(at)} (at the latest +{duration(latest)})"


def migration(m: dict, runs_here: bool = False) -> html.Div:
    """The shrink any cluster can run today: a new topic, switch, drain, delete."""
    return html.Div([
        html.H3(f"The migration this cluster runs: to '{m['new_topic']}'" if runs_here else
                f"The migration that works on any cluster today: to '{m['new_topic']}'"),
        banners.banner(m["error"], "error") if not m["ok"] else None,
        html.Ol([html.Li(step) for step in m["steps"]]),
        html.P(f"Peak partition replicas in the cluster while both topics exist: "
               f"{m['peak_cluster_partitions']:,}", className="hint"),
        tables.placement(m["assignment"]),
    ], className="panel")
