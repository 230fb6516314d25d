"""`railyard whatif sweep` in a subprocess, as a user runs it: a bad --out is refused before
Spark starts, and once Spark has started its banner stays off stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas")]
RAILYARD = [sys.executable, "-c", "import sys; from backend.cli import main; sys.exit(main())"]
ROOT = Path(__file__).resolve().parents[2]


def railyard(tmp_path: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path),
           "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.run([*RAILYARD, *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)


def test_unwritable_out_is_refused_before_spark_starts(tmp_path, sweep_spec):
    started = time.monotonic()
    done = railyard(tmp_path, "whatif", "sweep", "--spec", sweep_spec, "--spark-master", "local[1]",
                    "--out", "/proc/nope/o.parquet")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "/proc/nope/o.parquet" in done.stderr
    assert time.monotonic() - started < 30  # no JVM: Spark alone takes longer here
    assert not list(tmp_path.glob("railyard-spark-jvm-*.log"))  # the JVM never started


def test_spark_banner_stays_off_stderr(tmp_path, sweep_spec):
    (tmp_path / "out").mkdir()  # --out's folder must exist (a missing one is refused)
    done = railyard(tmp_path, "whatif", "sweep", "--spec", sweep_spec, "--spark-master", "local[1]",
                    "--out", tmp_path / "out" / "rows.json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
    assert json.loads(done.stdout)["row_count"] == 2
    assert len(json.loads((tmp_path / "out" / "rows.json").read_text())) == 2
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["rows.json"]  # no temp file
    log = next(tmp_path.glob("railyard-spark-jvm-*.log")).read_text()
    assert "Setting default log level" in log  # the banner went here instead
