"""Small builders shared by unit tests."""

from __future__ import annotations

import numpy as np

from backend.cli import main
from backend.model.snapshot import Limits, Snapshot


def filled_snapshot(counts: dict[int, int], racks: dict[int, str] | None = None,
                    limits: Limits | None = None, extra_topics: dict | None = None) -> Snapshot:
    """Brokers holding ``counts[b]`` single-replica partitions of topic 'fill'."""
    ids = sorted(counts)
    owners = [b for b in ids for _ in range(counts[b])]
    topics = ["fill"]
    part_topic = [0] * len(owners)
    flat = [ids.index(b) for b in owners]
    rf = [1] * len(owners)
    for name, assignment in (extra_topics or {}).items():
        topics.append(name)
        for reps in assignment:
            part_topic.append(len(topics) - 1)
            flat += [ids.index(b) for b in reps]
            rf.append(len(reps))
    return Snapshot.build(
        "test", ids, [None if racks is None else racks[b] for b in ids], topics,
        np.array(part_topic, dtype=np.int32), np.concatenate(([0], np.cumsum(rf))),
        np.array(flat, dtype=np.int32), limits=limits)


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """Run `railyard ARGS` in-process: (exit code, stdout, stderr)."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:  # argparse's own errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def login_token(client) -> str:
    """The CSRF token the sign-in page puts in its form (a Flask test client)."""
    page = client.get("/login").get_data(as_text=True)
    return page.split('name="csrf_token" value="')[1].split('"')[0]
