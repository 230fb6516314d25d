"""Running an approved clear-throttles plan: delete exactly the configs it names, and
only while each still has the value that was approved (a config changed since is not
Railyard's to delete: the plan fails naming it and nothing is deleted). Deleting is
idempotent, so a run cut short is finished by running it again: a config already gone
counts as cleared."""

from __future__ import annotations

from collections.abc import Callable

from backend.gateways.base import ClusterGateway


def clear_configs(gateway: ClusterGateway, configs: list[dict],
                  audit: Callable[[str, dict], None]) -> list[str]:
    """Delete ``configs`` ([{entity_type, name, key, value}]), one alter per entity, each
    an audit entry ("config_cleared"); the configs whose value changed since approval
    (then nothing is deleted), empty when all went."""
    by_entity: dict[tuple[str, str], dict[str, str]] = {}
    for c in configs:
        by_entity.setdefault((c["entity_type"], c["name"]), {})[c["key"]] = c["value"]
    now = {entity: gateway.describe_configs(*entity)["configs"] for entity in sorted(by_entity)}
    changed = [f"{e} {n} {k} {v} -> {now[(e, n)][k]}"
               for (e, n), wanted in sorted(by_entity.items()) for k, v in sorted(wanted.items())
               if k in now[(e, n)] and now[(e, n)][k] != v]
    if changed:
        return changed
    for (etype, name), wanted in sorted(by_entity.items()):
        keys = sorted(k for k in wanted if k in now[(etype, name)])
        if keys:
            gateway.alter_configs(etype, name, delete=keys)
            audit("config_cleared", {"entity_type": etype, "name": name, "deleted": keys,
                                     "values": {k: wanted[k] for k in keys}})
    return []
