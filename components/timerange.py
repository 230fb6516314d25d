"""The windows a monitoring page shows: live, last 1 h / 6 h / 24 h / 7 d, or an absolute
range for incident review. The choice lives in the URL (?range=6h, or
?range=abs&from=...&to=...), so a link reproduces the view; the control that sets it is
dashboard.shell.time_control."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from backend.errors import BadInput

RANGES = {"live": 900, "1h": 3600, "6h": 6 * 3600, "24h": 24 * 3600, "7d": 7 * 24 * 3600}
LABELS = {"live": "Live", "1h": "1 h", "6h": "6 h", "24h": "24 h", "7d": "7 d",
          "abs": "Absolute"}
DEFAULT = "live"
POINTS = 240  # samples per range query: enough for a smooth line, cheap to draw
GRID = 15.0  # relative windows end on this grid (seconds): at most this stale
EXAMPLE = "2024-05-01T12:00"  # the typed time every refusal shows
# an absolute window: a minute at least (its label shows minutes, its step is 15 s at the
# finest), a year and a day at most (a 54-year incident report kept Prometheus busy 25 s
# for one point every 82 days)
MIN_SPAN, MAX_SPAN = 60, 366 * 86_400
SPAN_RULE = "from and to: give a window from 1 minute to 366 days long"
LAST_TIME = 253_402_300_799.0  # 9999-12-31T23:59:59Z: the last time a datetime can show
EPOCH = re.compile(r"[0-9]+([.][0-9]+)?", re.ASCII)  # epoch seconds
TIME = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}([.]\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?",
                  re.ASCII)


@dataclass(frozen=True)
class Window:
    """What a chart shows: [start, end] in epoch seconds, sampled every ``step``."""

    key: str
    start: float
    end: float
    step: float
    refreshing: bool  # relative windows move with the clock; absolute ones do not

    @property
    def label(self) -> str:
        if self.key == "abs":
            return f"{_iso(self.start)} to {_iso(self.end)} UTC"
        return "last 15 min, live" if self.key == "live" else f"last {LABELS[self.key]}"

    @property
    def end_label(self) -> str:
        """When the window ends, as its label writes it: what a past view shows "at"."""
        return f"{_iso(self.end)} UTC"

    @property
    def step_label(self) -> str:
        """The step as a chart's title says it: 15 s, 90 s, 6 min, 377 s."""
        s = self.step
        return f"{s / 60:.0f} min" if s >= 120 and s % 60 == 0 else f"{s:.0f} s"

    def as_dict(self) -> dict:
        return {"key": self.key, "start": self.start, "end": self.end, "step": self.step,
                "refreshing": self.refreshing}

    @classmethod
    def from_dict(cls, d: dict) -> Window:
        return cls(d["key"], d["start"], d["end"], d["step"], d["refreshing"])


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


def parse_time(text: str, what: str) -> float:
    """'2024-05-01T12:00' (UTC unless zoned) or epoch seconds -> epoch seconds: the
    grammar of assets/railyard.js parseTime, which checks the time control in the
    browser, so both refuse the same text."""
    text = (text or "").strip()
    if not text:
        raise BadInput(f"{what}: give a date and time, e.g. {EXAMPLE}")
    if EPOCH.fullmatch(text):
        seconds = float(text)
    else:
        try:  # the grammar first: fromisoformat also reads "20240501T1200" and more
            t = datetime.fromisoformat(text.replace("Z", "+00:00")) \
                if TIME.fullmatch(text) else None
        except ValueError:  # a day or an hour that does not exist
            t = None
        if t is None:
            raise BadInput(f"{what}: could not read '{text[:40]}' as a date and time "
                           f"(e.g. {EXAMPLE}, UTC)")
        seconds = (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()
    if not 0 <= seconds <= LAST_TIME:
        raise BadInput(f"{what}: {text[:40]} is not a time between 1970 and 9999 (UTC)")
    return seconds


def window(key: str | None, start: str | None, end: str | None, now: float) -> Window:
    """The window a URL asks for; BadInput (one line) for a bad absolute range."""
    key = key or DEFAULT
    if key == "abs":
        t0, t1 = parse_time(start, "from"), parse_time(end, "to")
        if t1 <= t0:
            raise BadInput("to must be after from")
        if not MIN_SPAN <= t1 - t0 <= MAX_SPAN:
            raise BadInput(SPAN_RULE)
        return Window("abs", t0, t1, _step(t1 - t0), refreshing=False)
    if key not in RANGES:
        raise BadInput(f"range '{key}': expected one of {', '.join(LABELS)}")
    span = RANGES[key]
    end = now // GRID * GRID  # on a 15 s grid: the same view asks the same queries (cached)
    return Window(key, end - span, end, _step(span), refreshing=True)


def viewable(key: str | None, start: str | None, end: str | None, now: float) -> Window:
    """``window``, refused when it starts after ``now``: nothing can be in it, and each
    chart would say "no data yet" as if the brokers exported nothing."""
    w = window(key, start, end, now)
    if w.start >= now:
        raise BadInput(f"from: {(start or '').strip()} UTC has not happened yet")
    return w


def _step(span: float) -> float:
    return max(GRID, round(span / POINTS))
