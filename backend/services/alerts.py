"""Alerting rules and Grafana dashboards written for the clusters of a config: one rule
file per cluster and naming dialect, each checked by `promtool check rules` before it is
reported written (a file promtool refuses is removed, and the answer says why)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import yaml

from backend.errors import BadInput, Unavailable
from backend.metrics import grafana
from backend.metrics.dialects import DIALECTS
from backend.metrics.rules import AlertTarget, rule_file
from backend.metrics.server import PROMTOOL
from backend.model.io import probe_folder


def promtool_check(path: Path, promtool: str = PROMTOOL) -> str | None:
    """None when `promtool check rules` accepts the file, else its complaint."""
    if shutil.which(promtool) is None:
        raise Unavailable("promtool", f"{promtool} not found: install Debian's prometheus "
                          "package (make install does)")
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True,
                          text=True, timeout=60)
    return None if done.returncode == 0 else (done.stderr or done.stdout).strip()


def check_out_dir(out_dir: str | Path, flag: str = "--out") -> None:
    """Refuse a folder that cannot be made or written in, before anything is written: a
    file where the folder goes, or a place like /proc. Creates nothing (the nearest
    existing folder is probed with a temporary file removed at once)."""
    where = f"{flag} {out_dir}"
    folder = Path(out_dir).absolute()
    try:
        if folder.exists() and not folder.is_dir():
            raise BadInput(f"{where}: exists and is not a folder (give a folder to write in)")
        while not folder.exists():
            folder = folder.parent
    except OSError as e:
        raise BadInput(f"{where}: cannot be checked ({e.strerror or e})") from None
    if not folder.is_dir():
        raise BadInput(f"{where}: {folder} is a file, not a folder")
    probe_folder(folder, where)


@contextmanager
def _writing(out_dir: str | Path, flag: str = "--out") -> Iterator[None]:
    """An OSError while writing (a disk full, a folder made read-only meanwhile) as one
    line naming the flag."""
    try:
        yield
    except OSError as e:
        raise BadInput(f"{flag} {out_dir}: cannot write ({e.strerror or e})") from None


def write_rules(targets: list[AlertTarget], out_dir: str | Path,
                dialects: tuple[str, ...] = tuple(DIALECTS)) -> dict:
    """OUT/<dialect>/<cluster>.rules.yml for every cluster and dialect, each checked."""
    unknown = [d for d in dialects if d not in DIALECTS]
    if unknown:
        raise BadInput(f"--dialect: unknown '{unknown[0]}' (known: {', '.join(DIALECTS)})")
    check_out_dir(out_dir)
    written = []
    for dialect in dialects:
        for t in targets:
            path = Path(out_dir) / dialect / f"{t.cluster}.rules.yml"
            doc = rule_file(replace(t, dialect=dialect))
            with _writing(out_dir):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(yaml.safe_dump(doc, sort_keys=False, width=100))
            problem = promtool_check(path)
            if problem:
                path.unlink()
                raise RuntimeError(f"promtool refused the rules for {t.cluster} ({dialect}): "
                                   f"{problem}")
            written.append({"cluster": t.cluster, "dialect": dialect, "path": str(path),
                            "alerts": len(doc["groups"][0]["rules"])})
    return {"written": written, "checked_with": "promtool check rules"}


def write_grafana(targets: list[AlertTarget], out_dir: str | Path) -> dict:
    """OUT/<cluster>.grafana.json in each cluster's own dialect."""
    check_out_dir(out_dir)
    with _writing(out_dir):
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    written = []
    for t in targets:
        path = Path(out_dir) / f"{t.cluster}.grafana.json"
        doc = grafana.dashboard(t)
        with _writing(out_dir):
            path.write_text(json.dumps(doc, indent=1))
        written.append({"cluster": t.cluster, "dialect": t.dialect, "path": str(path),
                        "panels": len(doc["panels"])})
    return {"written": written}
