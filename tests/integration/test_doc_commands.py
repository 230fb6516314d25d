"""Every ```sh block in README.md and docs/*.md runs as written, in order, as a new user
pastes it: each file's blocks in one fresh folder, `railyard` on PATH, exit 0 for every
line (bash -e). Synopses with placeholders are ```text blocks and are not run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.S | re.M)
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def sh_blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text())


@pytest.mark.parametrize("doc", [d for d in DOCS if sh_blocks(d)],
                         ids=lambda d: d.relative_to(ROOT).as_posix())
def test_command_lines_run_as_written(doc: Path, tmp_path: Path):
    # the docs name shipped files relative to the checkout, e.g. the twin's scenarios
    (tmp_path / "backend" / "twin").mkdir(parents=True)
    (tmp_path / "backend" / "twin" / "scenarios").symlink_to(ROOT / "backend/twin/scenarios")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    for block in sh_blocks(doc):
        run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"{doc.name}:\n{block}\nstderr: {run.stderr[-2000:]}"
        assert "Traceback" not in run.stderr, run.stderr[-2000:]
