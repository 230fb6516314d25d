"""The README and docs/ link nothing outside the repository: README.md linked
`../shared/reference/FACTS.md`, a file a reader of the repository does not have. They cite
the public source instead (the KIPs on the Apache Kafka wiki)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")  # a Markdown link's target
PATH = re.compile(r"`(\.\./[^`\s]+)`")  # a path written as code


def outside(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    targets = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:|#", t)]
    targets += PATH.findall(text)
    return [t for t in targets
            if not (doc.parent / t.split("#")[0]).resolve().is_relative_to(ROOT)]


def test_no_doc_points_outside_the_repository():
    assert {d.relative_to(ROOT).as_posix(): outside(d) for d in DOCS if outside(d)} == {}
    assert [d.name for d in DOCS if "FACTS.md" in d.read_text(encoding="utf-8")] == []


def test_the_kips_are_cited_where_they_are_public():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "https://cwiki.apache.org/confluence/display/KAFKA/KIP-578%3A" in readme
    assert "https://cwiki.apache.org/confluence/display/KAFKA/KIP-694%3A" in readme
