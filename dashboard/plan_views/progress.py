"""An execution's progress (services.execution.progress): a bar, the figures in words,
and the batches; a shrink's stages or migration steps (its progress's "shrink" part).
Takes its data and ids as arguments."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
from dash import html

from backend.store.executions import ACTIVE
from components import banners, tables
from dashboard import ids
from dashboard.plan_views import preview

SHOWN_BATCHES = 50  # the batch table's rows: the last batches started (a plan may have 1000s)


def _bytes(n: float | None) -> str:
    """A size to one decimal ("2.8 GB"), so that copied and total compare as read; rates
    are written as the preview and the charts write them (preview.rate)."""
    if n is None:
        return "-"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"


def _duration(s: float | None) -> str:
    if s is None:
        return "unknown"
    s = round(s)
    return f"{s // 3600}h {s % 3600 // 60}m" if s >= 3600 else f"{s // 60}m {s % 60}s"


def progress_view(p: dict, bar_id: str) -> html.Div:
    """The bar and figures of one execution."""
    if p.get("shrink"):
        return shrink_view(p, bar_id)
    pct = 100.0 * p["fraction"]
    rate = p["observed_rate"]
    lines = [
        f"{p['status']}: batch {p['batch'] + 1} of {p['batches']}, {copied_text(p)}",
        # KIP-73's rates bound each broker, so a move into several brokers can copy
        # faster in all than the throttle
        (f"observed {preview.rate(rate)} in all" if rate or p["state"] not in ACTIVE
         else "observed: no bytes counted yet (a partition's count when it finishes)") + (
            f" against a throttle of {preview.rate(p['throttle'])} per broker"
            if p["throttle"] else " (no throttle)"),
        *([copying_text(p["copy_rate"])] if p.get("copy_rate") else []),
        _eta_line(p),
    ]
    if p["cause"]:
        lines.append(f"cause: {p['cause']}")
    elif p["error"]:
        lines.append(f"retrying after: {p['error']}")
    started = [b for b in p["per_batch"] if b["state"] != "pending"]
    shown = pd.DataFrame([{
        "batch": b["batch"] + 1, "state": b["state"], "partitions": b["partitions"],
        "done": b["done"], "copied": _bytes(b["bytes_done"]),
        "rate": preview.rate(b["observed_rate"]) if b["observed_rate"] else "-"}
        for b in reversed(started[-SHOWN_BATCHES:])])  # newest first: the running one on top
    held = hold_banner(p)
    return html.Div(([held] if held else []) + [
        html.Progress(value=f"{pct:.1f}", max="100", id=bar_id, title=f"{pct:.1f}%",
                      className="execution-bar"),
        html.Span(f" {pct:.0f}%"),
        html.Ul([html.Li(line) for line in lines]),
        tables.grid(shown, height=180) if len(shown) else None,
        html.P(f"The last {len(shown)} of the {len(started)} batches started, newest "
               "first.",
               className="hint") if len(shown) < len(started) else None,
    ])


def copied_text(p: dict) -> str:
    """The partitions and bytes moved. The executor counts a partition's bytes at its size
    when it finished and producers keep writing while it moves, so the bytes copied can
    reach or pass the plan's figure with partitions still to move: then the partitions
    left say how far it is, never "2.8 GB of about 2.8 GB copied" with work left."""
    copied, total = _bytes(p["bytes_copied"]), _bytes(p["bytes_total"])
    moved, of = p["partitions_done"], p["partitions_total"]
    running = p["state"] in ACTIVE
    left = f"; {of - moved:,} of {of:,} partitions {'left' if running else 'not moved'}" \
        if moved < of else ""
    so_far = " so far" if running else ""
    if p["bytes_copied"] > p["bytes_total"]:
        return (f"{copied} copied{so_far} (the plan counted {total} when it was proposed: "
                f"producers have written to the partitions since)"
                f"{left or f'; all {of:,} partitions moved'}")
    if left and copied == total:
        return f"{copied} copied{so_far}, about as much as the plan counted{left}"
    return f"{moved:,} of {of:,} partitions, {copied} of about {total} copied"


def copying_text(live: dict) -> str:
    """The batch in flight's copy now (services.execution.copy_rate_now), as the receiving
    brokers count it: data moves before any partition finishes."""
    into = live["brokers"]
    where = "" if not into else \
        f" into broker{'s' if len(into) > 1 else ''} {', '.join(into)}"
    said = "Kafka's ReassignmentBytesInPerSec, from Prometheus"
    if live["bytes_per_second"] is None:
        return f"copying now{where}: rate not known ({live['why']})"
    return f"copying now at {preview.rate(live['bytes_per_second'])}{where} ({said})"


def hold_banner(p: dict) -> html.Div | None:
    """Which guard condition paused the plan and its value, or the window it waits for."""
    hold = p.get("hold")
    if not hold:
        return None
    if hold["kind"] == "window":
        when = datetime.fromtimestamp(hold["next_window"], UTC).strftime("%a %Y-%m-%d %H:%M")
        text = (f"Waiting for window: {hold['text']}; the batch in flight finishes and the "
                f"next starts at the next window, {when} UTC.")
    else:
        how = (f"it resumes by itself once clear for {_duration(hold['resume_after'])}"
               if hold.get("auto_resume", True) else "press Resume once it is clear")
        cleared = " Cleared." if hold.get("clear_since") else ""
        text = (f"Paused by a guard: {hold['text']}. No new batch starts (a batch in "
                f"flight finishes at the guard's floor); {how}.{cleared}")
    return html.Div(banners.banner(text, "warning"), id=ids.PV_HOLD)


def _eta_line(p: dict) -> str:
    """Predicted and observed ETAs while it runs; once it ended, how (never '0m 0s')."""
    if p["state"] == "completed":
        return f"completed in {_duration(p['ended_at'] - p['started_at'])}"
    if p["state"] in ("failed", "cancelled"):
        return f"no ETA: {p['state']}, nothing more will move"
    predicted = f"ETA predicted {_duration(p['predicted_eta_seconds'])}"
    if p.get("observed_eta_basis") == "copy rate":
        live = p.get("copy_rate") or {}
        left = (f"the bytes not yet copied: {_bytes(live['copied'])} already in the new "
                "replicas, by their log sizes") if live.get("copied") is not None else (
            "the bytes not yet counted: none has finished" + (
                f"; what the partitions in flight copied is not known "
                f"({live['copied_why']})" if live.get("copied_why") else ""))
        return (f"{predicted}, observed {_duration(p['observed_eta_seconds'])} at the copy "
                f"rate now ({left})")
    if p["observed_eta_seconds"] is None and p.get("observed_eta_why"):
        return f"{predicted}, observed: none yet, {p['observed_eta_why']}"
    return f"{predicted}, observed {_duration(p['observed_eta_seconds'])}"


SHRINK_STAGES = ("requesting", "ReadOnly", "None", "Removed")


def shrink_view(p: dict, bar_id: str) -> html.Div:
    """A shrink's execution: the delete-partitions stage reached, the partitions in each
    state and the time to the next stage; or its migration's steps done."""
    s = p["shrink"]
    if s["mode"] == "migration":
        done = sum(step["done"] for step in s["steps"])
        fraction = done / len(s["steps"])
        lines = [f"{p['state']}: migration to '{s['new_topic']}', {done} of "
                 f"{len(s['steps'])} steps done" + (
                     " (check the next one off below once it is)"
                     if p["state"] in ACTIVE and done < len(s["steps"]) else "")]
    else:
        fraction = SHRINK_STAGES.index(s["stage"]) / (len(SHRINK_STAGES) - 1)
        counts = ", ".join(f"{k} {v}" for k, v in s["counts"].items() if v)
        lines = [f"{p['state']}: stage {s['stage']} of shrinking '{s['topic']}' from "
                 f"{s['from']} to {s['to']} partitions", f"removed partitions: {counts}"]
        if s["next_in_seconds"] is not None:
            lines.append(f"next: {s['next_stage']} in {_duration(s['next_in_seconds'])} at "
                         f"the earliest, {_duration(s['next_latest_in_seconds'])} at the "
                         "latest (the controller checks every "
                         f"{_duration(s['check_interval_ms'] / 1000)})")
        elif s["next_stage"] == "Removed":
            lines.append("next: Removed, as soon as every broker holding one of their "
                         "replicas has deleted it (a broker that is down holds it up)")
    if p["cause"]:
        lines.append(f"cause: {p['cause']}")
    elif p["error"]:
        lines.append(f"retrying after: {p['error']}")
    pct = 100.0 * fraction
    return html.Div([
        html.Progress(value=f"{pct:.1f}", max="100", id=bar_id, title=f"{pct:.1f}%",
                      className="execution-bar"),
        html.Span(f" {pct:.0f}%"),
        html.Ul([html.Li(line) for line in lines]),
    ])
