"""`railyard alerts generate|grafana --out DIR`: a place that is no folder to write in is
one line and exit 2, before anything is written."""

from __future__ import annotations

import pytest

from tests.unit.helpers import run_cli

CONFIG = ("clusters:\n  - name: demo\n    gateway: {type: twin, url: 'http://127.0.0.1:9'}\n"
          "    limits: {max.broker.partitions: 12500}\n")


@pytest.mark.parametrize("verb", ["generate", "grafana"])
@pytest.mark.parametrize("out,message", [
    ("c.yaml", "c.yaml: exists and is not a folder"),
    ("c.yaml/sub", "c.yaml is a file, not a folder"),
    ("/proc/railyard-x", "cannot write in /proc"),
])
def test_an_out_that_is_no_folder_is_one_line(tmp_path, capsys, monkeypatch, verb, out, message):
    """A file where the folder goes was NotADirectoryError / FileExistsError, /proc/x a
    FileNotFoundError: tracebacks."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(CONFIG)
    (tmp_path / "c.yaml").write_text("keep me\n")
    code, stdout, err = run_cli(capsys, "alerts", verb, "--config", "s.yaml", "--out", out)
    assert code == 2 and stdout == "" and err.count("\n") == 1, err
    assert f"--out {out}: " in err and message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "s.yaml"]
    assert (tmp_path / "c.yaml").read_text() == "keep me\n"


def test_a_new_folder_is_still_made(tmp_path, capsys):
    (tmp_path / "s.yaml").write_text(CONFIG)
    code, _, err = run_cli(capsys, "alerts", "grafana", "--config", tmp_path / "s.yaml",
                           "--out", tmp_path / "a" / "b")
    assert code == 0 and err == "" and (tmp_path / "a" / "b" / "demo.grafana.json").exists()
