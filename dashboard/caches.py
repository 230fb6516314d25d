"""The dashboard's caches: configured once from the dashboard config (flask-caching,
in process or in Redis) and used by page callbacks."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio

from components.timerange import Window
from dashboard import runtime


def drawn(page: str, state: dict, w: Window, draw):
    """A page's drawn answer for one window, kept for the cache TTL (dashboard config):
    flipping back to a range, or a refresh within the same step, redraws nothing."""
    rt = runtime.current()
    key = f"{page}|{state['cluster']}|{w.key}|{w.start}|{w.end}|{w.step}"
    hit = rt.cache.get(key)
    if hit is not None:
        return hit
    answer = tuple(_plain(part) for part in draw())
    rt.cache.set(key, answer, timeout=rt.config.cache.default_timeout)
    return answer


def _plain(part):
    """Figures as the JSON they are sent as: a cache hit then unpickles plain lists (under
    a millisecond) instead of rebuilding and re-validating a plotly Figure (tens of ms)."""
    if isinstance(part, go.Figure):
        return json.loads(pio.to_json(part, validate=False))
    return part
