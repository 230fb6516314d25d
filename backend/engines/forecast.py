"""Time-to-limit forecasts: when partition counts reach KIP-578's limits, and what helps.

Pure numpy, vectorised over series (one per broker, or one per cluster): the Spark fleet
job maps it over clusters and the /capacity page over a cluster's brokers.

How a growth is fitted, and why:
- Daily maxima: a limit is hit at a day's peak, and a day is the grain growth is planned in.
- One-off steps are taken out before the fit: a big topic created or a broker added (whose
  rebalance drops every old broker) moves a count once, and would bend any line through
  the history. A day-to-day change is a step when it is far outside the usual day's change
  (more than ``STEP_SIGMAS`` robust standard deviations, 3 x the median day and 1 replica)
  and such jumps are rare (at most ``MAX_STEP_FRACTION`` of the days: when lumps are
  frequent they are how the count grows, not steps). A step is replaced by a usual day;
  the level it moved to stays (the big topic is still there).
- Theil-Sen (median of pairwise slopes, Sen 1968) on what is left: exact, with Sen's
  confidence interval of the slope (the same figures as scipy.stats.theilslopes, computed
  for every series at once). The level today is the fitted line's, not the last noisy day.

Time to a limit is (limit - level) / slope with its interval from the slope's; brokers
to add by a date are the planner's under-provisioned pre-check on the projected count.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from backend.engines.placement import kafka_assign, validate_request
from backend.engines.planner import broker_ceiling, under_provisioned
from backend.errors import BadInput
from backend.model.snapshot import Limits

DAY = 86_400.0
DAYS_PER_MONTH = 30.4375
STEP_SIGMAS = 5.0
STEP_MEDIANS = 3.0
MIN_STEP = 1.0
MAX_STEP_FRACTION = 0.1
CONFIDENCE = 0.95
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Growth:
    """Per series: replicas/day (with its interval), today's fitted level, the steps taken out."""

    slope: np.ndarray
    slope_low: np.ndarray
    slope_high: np.ndarray
    level: np.ndarray  # the fitted line today, steps included
    level_low: np.ndarray  # its interval (the median intercept's standard error)
    level_high: np.ndarray
    last: np.ndarray  # today's observed daily maximum
    steps: np.ndarray  # one-off steps found (count)
    days: int  # days of history fitted


@dataclass(frozen=True)
class Scenario:
    """The capacity meeting's knobs; the defaults are "as things are"."""

    growth_pct_month: float = 0.0  # extra growth: this % of today's count each month
    add_brokers: int = 0  # brokers added and filled to the average (the planner's add goal)
    max_broker_partitions: int | None = None  # raise (or set) the limits to these
    max_partitions: int | None = None
    topic_partitions: int = 0  # a planned topic of P partitions x RF, created today
    topic_rf: int = 1

    def limits(self, current: Limits) -> Limits:
        return current.merged(self.max_broker_partitions, self.max_partitions)

    def validate(self) -> None:
        if self.add_brokers < 0:
            raise BadInput(f"add brokers must be >= 0, got {self.add_brokers}")
        if self.topic_partitions < 0:
            raise BadInput(f"planned topic partitions must be >= 0, got {self.topic_partitions}")
        if self.topic_partitions and self.topic_rf < 1:
            raise BadInput(f"planned topic RF must be >= 1, got {self.topic_rf}")
        for name, v in (("max.broker.partitions", self.max_broker_partitions),
                        ("max.partitions", self.max_partitions)):
            if v is not None and v < 0:
                raise BadInput(f"{name} must be >= 0, got {v}")


AS_IS = Scenario()


def daily_maxima(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(day offsets ending at 0 = the day of the last sample, maxima (series, days)).

    ``times`` ascending epoch seconds shared by all series; ``values`` (series, samples),
    NaN where a series has no sample. Days are the 24 h spans counted back from the last
    sample; a day no series has a sample in is absent (not a zero)."""
    times = np.asarray(times, np.float64)
    values = np.atleast_2d(np.asarray(values, np.float64))
    if times.ndim != 1 or values.shape[1] != len(times) or len(times) == 0:
        raise BadInput("history: need matching sample times and values")
    back = np.floor((times[-1] - times) / DAY).astype(np.int64)  # 0 = last day
    starts = np.flatnonzero(np.r_[True, back[1:] != back[:-1]])
    with np.errstate(invalid="ignore"):
        maxima = np.fmax.reduceat(values, starts, axis=1)
    return -back[starts].astype(np.float64), maxima


def theil_sen(x: np.ndarray, y: np.ndarray, confidence: float = CONFIDENCE
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Slope, its low and high bound, intercept (median of y - slope x) for every row of y.

    Exactly scipy.stats.theilslopes(y, x, confidence, method="joint") per row (x has no
    ties); NaN values are left out of the row they are in."""
    y = np.atleast_2d(y)
    n_series, n = y.shape
    i, j = np.triu_indices(n, 1)
    with np.errstate(invalid="ignore"):
        slopes = np.sort((y[:, j] - y[:, i]) / (x[j] - x[i]), axis=1)  # NaN sort last
    nt = (~np.isnan(slopes)).sum(axis=1)
    rows = np.arange(n_series)
    ok = nt > 0
    safe = np.maximum(nt, 1)
    median = np.where(ok, (slopes[rows, (safe - 1) // 2] + slopes[rows, safe // 2]) / 2, np.nan)
    ny = (~np.isnan(y)).sum(axis=1)
    sigsq = (ny * (ny - 1) * (2 * ny + 5) - _tie_sums(y)) / 18.0
    z = _normal_quantile((1 - confidence) / 2 if confidence > 0.5 else confidence / 2)
    sigma = np.sqrt(np.maximum(sigsq, 0))
    upper = np.minimum(np.round((nt - z * sigma) / 2).astype(np.int64), safe - 1)
    lower = np.maximum(np.round((nt + z * sigma) / 2).astype(np.int64) - 1, 0)
    low = np.where(ok, slopes[rows, np.minimum(lower, safe - 1)], np.nan)
    high = np.where(ok, slopes[rows, upper], np.nan)
    with np.errstate(invalid="ignore"):
        intercept = np.nanmedian(y - median[:, None] * x, axis=1) if n_series else median
    return median, low, high, intercept


def _tie_sums(y: np.ndarray) -> np.ndarray:
    """Per row, the sum over groups of equal values of k (k-1) (2k+5) (Sen's tie term)."""
    n_series, n = y.shape
    s = np.sort(y, axis=1)
    flat = s.ravel()
    new_row = np.zeros_like(flat, bool)
    new_row[::n] = True
    change = new_row | np.r_[True, flat[1:] != flat[:-1]]
    starts = np.flatnonzero(change)
    k = np.diff(np.r_[starts, flat.size]).astype(np.float64)
    k[np.isnan(flat[starts])] = 1  # missing values are no tie
    return np.bincount(starts // n, k * (k - 1) * (2 * k + 5), minlength=n_series)


def remove_steps(daily: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The daily maxima with one-off steps replaced by a usual day, and the step count.

    The result ends where the series ends (its level today) and every step's level
    change is taken out of the days before it instead."""
    with warnings.catch_warnings():  # all-NaN rows (a broker without history) are expected
        warnings.simplefilter("ignore", RuntimeWarning)
        d = np.diff(daily, axis=1)
        med = np.nanmedian(d, axis=1, keepdims=True)
        mad = np.nanmedian(np.abs(d - med), axis=1, keepdims=True)
        threshold = np.fmax(np.fmax(STEP_SIGMAS * MAD_TO_SIGMA * mad, STEP_MEDIANS * np.abs(med)),
                            MIN_STEP)
        jump = np.abs(d - med) > threshold
    usable = (~np.isnan(d)).sum(axis=1, keepdims=True)
    rare = jump.sum(axis=1, keepdims=True) <= np.maximum(1, MAX_STEP_FRACTION * usable)
    step = np.where(jump & rare, d - np.nan_to_num(med), 0.0)
    after = np.cumsum(step[:, ::-1], axis=1)[:, ::-1]  # the steps still ahead of each day
    shift = np.concatenate([after, np.zeros((daily.shape[0], 1))], axis=1)
    return daily + shift, (step != 0).sum(axis=1)


def fit_growth(times: np.ndarray, values: np.ndarray, confidence: float = CONFIDENCE) -> Growth:
    """The growth of every series (rows of ``values``) from its samples at ``times``."""
    x, daily = daily_maxima(times, values)
    if len(x) < 2:
        raise BadInput("history: need at least two days of samples to fit a growth")
    adjusted, steps = remove_steps(daily)
    slope, low, high, intercept = theil_sen(x, adjusted, confidence)
    spread = _level_error(x, adjusted, slope, intercept) * _normal_quantile(0.5 + confidence / 2)
    return Growth(slope, low, high, intercept, intercept - spread, intercept + spread,
                  _last_observed(daily), steps, len(x))


def _normal_quantile(p: float) -> float:
    """The standard normal distribution's quantile, scipy's (as theilslopes computes it).
    scipy.stats is imported on the first forecast, not with this module: it takes every
    process that imports the dashboard 0.6 s to load."""
    from scipy.stats import norm
    return float(norm.ppf(p))


def _level_error(x: np.ndarray, y: np.ndarray, slope: np.ndarray, intercept: np.ndarray
                 ) -> np.ndarray:
    """Standard error of the median intercept: robust residual sigma x 1.2533 / sqrt(n)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = y - (intercept[:, None] + slope[:, None] * x)
        sigma = MAD_TO_SIGMA * np.nanmedian(np.abs(r - np.nanmedian(r, axis=1, keepdims=True)),
                                            axis=1)
    n = np.maximum((~np.isnan(y)).sum(axis=1), 1)
    return np.sqrt(np.pi / 2) * sigma / np.sqrt(n)


def _last_observed(daily: np.ndarray) -> np.ndarray:
    seen = ~np.isnan(daily)
    idx = daily.shape[1] - 1 - np.argmax(seen[:, ::-1], axis=1)
    return np.where(seen.any(axis=1), daily[np.arange(len(daily)), idx], np.nan)


def days_to_limit(level: np.ndarray, slope: np.ndarray, limit: float | np.ndarray | None
                  ) -> np.ndarray:
    """Days until ``level`` growing by ``slope`` a day reaches ``limit``: 0 at or over it,
    inf when not growing, NaN without a limit or a level."""
    level = np.asarray(level, np.float64)
    if limit is None:
        return np.full(level.shape, np.nan)
    room = np.asarray(limit, np.float64) - level
    with np.errstate(divide="ignore", invalid="ignore"):
        days = np.where(room <= 0, 0.0, np.where(slope > 0, room / slope, np.inf))
    return np.where(np.isnan(level) | np.isnan(slope) & (room > 0), np.nan, days)


def planned_topic_per_broker(n_brokers: int, scenario: Scenario) -> np.ndarray:
    """Replicas the planned topic puts on each broker, as Kafka's placement spreads them."""
    if not scenario.topic_partitions:
        return np.zeros(n_brokers, np.int64)
    validate_request(n_brokers, scenario.topic_partitions, scenario.topic_rf)
    placed = kafka_assign(n_brokers, scenario.topic_partitions, scenario.topic_rf, 0, shift=0)
    return np.bincount(placed.ravel(), minlength=n_brokers)


@dataclass(frozen=True)
class Lines:
    """Projected lines of some series from today (day 0): likely, and the interval's edges."""

    level: np.ndarray
    level_low: np.ndarray
    level_high: np.ndarray
    slope: np.ndarray
    slope_low: np.ndarray
    slope_high: np.ndarray

    def at(self, days: np.ndarray | float) -> dict[str, np.ndarray]:
        """Likely, low and high values ``days`` from today (rows: series)."""
        h = np.asarray(days, np.float64)
        return {"mid": self.level[:, None] + self.slope[:, None] * h,
                "low": self.level_low[:, None] + self.slope_low[:, None] * h,
                "high": self.level_high[:, None] + self.slope_high[:, None] * h}

    def days_to(self, limit: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Days to ``limit``: likely, earliest (high line), latest (low line)."""
        return (days_to_limit(self.level, self.slope, limit),
                days_to_limit(self.level_high, self.slope_high, limit),
                days_to_limit(self.level_low, self.slope_low, limit))


def lines(g: Growth) -> Lines:
    return Lines(g.level, g.level_low, g.level_high, g.slope, g.slope_low, g.slope_high)


@dataclass(frozen=True)
class Outlook:
    """Brokers' and the cluster's lines under a scenario, with the limits it plans against."""

    brokers: Lines
    cluster: Lines  # one row
    limits: Limits
    n_brokers: int  # brokers once the scenario's are added


def outlook(brokers: Growth, cluster: Growth, limits: Limits, scenario: Scenario,
            topic_per_broker: np.ndarray | None = None) -> Outlook:
    """The fitted growth with the scenario's knobs applied.

    ``topic_per_broker``: the planned topic's replicas per broker when the limits engine
    placed it on the real assignment (default: Kafka's placement over the brokers)."""
    scenario.validate()
    n = len(brokers.level)
    topic = planned_topic_per_broker(n, scenario) if topic_per_broker is None \
        else np.asarray(topic_per_broker, np.float64)
    extra = scenario.growth_pct_month / 100.0 / DAYS_PER_MONTH

    def applied(g: Growth, added: np.ndarray) -> Lines:
        grow = extra * g.level  # extra growth: a share of today's count each month
        return Lines(g.level + added, g.level_low + added, g.level_high + added,
                     g.slope + grow, g.slope_low + grow, g.slope_high + grow)
    b = applied(brokers, topic)
    c = applied(cluster, np.array([topic.sum()], np.float64))
    total = n + scenario.add_brokers
    if scenario.add_brokers:  # the planner's add goal fills every broker to the average
        def spread(v: np.ndarray, cap: np.ndarray | None = None) -> np.ndarray:
            even = np.full(n, v[0] / total)
            return even if cap is None else np.minimum(cap, even)
        b = Lines(spread(c.level, b.level), spread(c.level_low, b.level_low),
                  spread(c.level_high, b.level_high), spread(c.slope), spread(c.slope_low),
                  spread(c.slope_high))
    return Outlook(b, c, scenario.limits(limits), total)


def time_to_limits(o: Outlook, broker_ids: list[str]) -> list[dict]:
    """Rows of the time-to-limit table, the most urgent first.

    One row per broker against max.broker.partitions, one for the cluster against
    max.partitions, and one for the cluster spread evenly over its brokers (the date even
    a perfect rebalance runs out of room: the planner's under-provisioned line)."""
    rows = []
    mbp, mp = o.limits.max_broker_partitions, o.limits.max_partitions
    c = o.cluster
    if mbp is not None:
        b = o.brokers
        rows += [_row(f"broker {k}", "max.broker.partitions", mbp, b.level[i], b.slope[i],
                      *(d[i] for d in b.days_to(mbp))) for i, k in enumerate(broker_ids)]
        balanced = mbp * o.n_brokers
        # named with its brokers counted ("max.broker.partitions x 9"): "x brokers" was
        # cut to "max.broker.partitions x brok..." in the page's column
        rows.append(_row(f"cluster over {o.n_brokers} brokers",
                         f"max.broker.partitions x {o.n_brokers}",
                         balanced, c.level[0], c.slope[0], *(d[0] for d in c.days_to(balanced))))
    if mp is not None:
        rows.append(_row("cluster", "max.partitions", mp, c.level[0], c.slope[0],
                         *(d[0] for d in c.days_to(mp))))
    return sorted(rows, key=lambda r: (_urgency(r["days"]), r["scope"]))


def _urgency(days: float | None) -> float:
    return float("inf") if days is None else days


def _row(scope: str, limit_name: str, limit: float, level: float, slope: float, days: float,
         earliest: float, latest: float) -> dict:
    def clean(v: float) -> float | None:
        v = float(v)
        return None if np.isnan(v) or np.isinf(v) else round(v, 1)
    return {"scope": scope, "limit_name": limit_name, "limit": int(limit),
            "now": clean(level),
            "growth_per_day": None if np.isnan(slope) else round(float(slope), 2),
            "days": clean(days), "earliest_days": clean(earliest), "latest_days": clean(latest)}


def brokers_to_add(o: Outlook, days_ahead: float, target_utilization: float = 1.0) -> dict:
    """Brokers to add by ``days_ahead`` so the projected replicas fit under the limit,
    answered by the planner's under-provisioned pre-check (likely and cautious growth)."""
    if days_ahead < 0:
        raise BadInput(f"the date to plan for must not be in the past ({days_ahead:g} days)")
    ceiling = broker_ceiling(o.limits, target_utilization)
    at = o.cluster.at(max(days_ahead, 0.0))
    out = {"days_ahead": days_ahead, "broker_ceiling": ceiling, "brokers_now": o.n_brokers}
    for name, key in (("likely", "mid"), ("cautious", "high")):
        total = int(np.ceil(max(float(at[key][0, 0]), float(o.cluster.level[0]))))
        shortage = under_provisioned(total, ceiling, o.n_brokers)
        out[name] = {"replicas": total,
                     "brokers_to_add": 0 if shortage is None else shortage["brokers_to_add"],
                     "message": None if shortage is None else shortage["message"]}
    return out


def forecast(times: np.ndarray, broker_ids: list[str], broker_values: np.ndarray,
             cluster_values: np.ndarray, limits: Limits, scenario: Scenario = AS_IS,
             by_days: float = 90.0, topic_per_broker: np.ndarray | None = None,
             horizon_days: float | None = None) -> dict:
    """One cluster's forecast from its history: growth, time-to-limit table (most urgent
    first), brokers to add by ``by_days`` from today, and the projected lines."""
    brokers = fit_growth(times, broker_values)
    cluster = fit_growth(times, np.atleast_2d(cluster_values))
    o = outlook(brokers, cluster, limits, scenario, topic_per_broker)
    horizon = np.linspace(0.0, max(horizon_days or by_days, 1.0), 32)
    return {
        "days_fitted": cluster.days,
        "limits": {"max.broker.partitions": o.limits.max_broker_partitions,
                   "max.partitions": o.limits.max_partitions},
        "steps": {"brokers": {b: int(s) for b, s in zip(broker_ids, brokers.steps, strict=True)
                              if s}, "cluster": int(cluster.steps[0])},
        "table": time_to_limits(o, broker_ids),
        "brokers_to_add": brokers_to_add(o, by_days),
        "projection": {"days": horizon, "brokers": o.brokers.at(horizon),
                       "cluster": o.cluster.at(horizon)},
    }
