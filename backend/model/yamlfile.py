"""Every YAML file Railyard reads (the dashboard's config, twin scenarios) goes through
``load_yaml``: PyYAML's safe loader, except that a key given twice in one mapping is an
error instead of the last one silently winning (a second ``max.broker.partitions: 1``
under a cluster made every generated alert fire)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml

MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKey(yaml.YAMLError):
    """A mapping names a key twice; ``line`` is 1-based, where the second one is."""

    def __init__(self, key: Any, line: int) -> None:
        self.key, self.line = key, line
        super().__init__(f"line {line}: {key} given twice")


class UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader refusing duplicate keys; a merge (``<<: *base``) may still be
    overridden by a key of the mapping itself, as YAML means it."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=False)
                if not isinstance(key, Hashable):
                    continue  # the safe loader refuses it below, with its own message
                if key in seen:
                    raise DuplicateKey(key, key_node.start_mark.line + 1)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` refusing a key given twice (DuplicateKey, a yaml.YAMLError)."""
    return yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader subclass: safe
