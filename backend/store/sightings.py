"""When Railyard first saw each throttle config with its current value (Kafka keeps no
such time). Written only when something changed, so reading the Overview every few
seconds takes no write lock."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, insert, select

from backend.store.schema import throttle_sightings as ts
from backend.store.store import Store

Config = tuple[str, str, str]  # (entity_type, name, key)


def sightings(store: Store, cluster: str, seen: dict[Config, str], keep: set[Config],
              now: float) -> dict[Config, float]:
    """First-seen times of the configs in ``seen`` (their values now): a config new to
    Railyard, or with another value than last time, is first seen ``now``. Rows of
    configs that are gone are dropped, except those in ``keep`` (configs an executing
    plan holds: the value under them comes back when it ends, and was seen before)."""
    with store.read() as conn:
        rows = {(r.entity_type, r.name, r.key): (r.value, r.first_seen)
                for r in conn.execute(select(ts).where(ts.c.cluster == cluster))}
    fresh = {k: v for k, v in seen.items() if k not in rows or rows[k][0] != v}
    gone = [k for k in rows if k not in seen and k not in keep]
    if fresh or gone:
        with store.write() as conn:
            conn.execute(delete(ts).where(
                ts.c.cluster == cluster, ts.c.entity_type == bindparam("e"),
                ts.c.name == bindparam("n"), ts.c.key == bindparam("k")),
                [{"e": e, "n": n, "k": key} for e, n, key in [*fresh, *gone]])
            if fresh:
                conn.execute(insert(ts), [{"cluster": cluster, "entity_type": e, "name": n,
                                           "key": key, "value": v, "first_seen": now}
                                          for (e, n, key), v in fresh.items()])
    return {k: now if k in fresh else rows[k][1] for k in seen}
