"""The CLI imports only the verb that runs: `railyard --help` needs no numpy or pandas,
and every verb still shows its own options."""

from __future__ import annotations

import subprocess
import sys

import pytest

from backend.cli import VERBS, main

HEAVY = ("numpy", "pandas", "pyarrow", "pyspark", "dash", "scipy", "sqlalchemy")


def test_top_level_help_imports_no_heavy_module():
    code = ("import sys\nfrom backend.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.splitlines()[-1] == "[]", p.stdout
    assert all(verb in p.stdout for verb in VERBS)


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_each_verb_help_shows_its_own_parser(verb, capsys):
    with pytest.raises(SystemExit) as e:
        main([verb, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: railyard {verb} ")
    rest = out.replace("--help", "")
    assert "--" in rest or "{" in rest, out  # its own options or actions, not a placeholder


def test_unknown_verb_lists_every_verb(capsys):
    with pytest.raises(SystemExit) as e:
        main(["nope"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(repr(v) in err for v in VERBS)


def _modules_after(argv: list[str], cwd) -> list[str]:
    """The heavy modules a fresh `railyard ARGV` process has imported when it is done."""
    code = ("import sys\nfrom backend.cli import main\n"
            f"code = main({argv!r})\n"
            f"print(code, sorted(m for m in {HEAVY[1:]!r} if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, cwd=cwd)
    return p.stdout.splitlines()[-1]


def test_light_verbs_import_no_pandas(tmp_path):
    """Issue 16: automation's light verbs start without pandas, pyarrow, Spark or Dash
    (numpy they may use): describe and create-topics on a small JSON snapshot, and a
    100-request quota replay."""
    from backend.model.io import save_snapshot
    from backend.twin.generate import generate_snapshot

    save_snapshot(generate_snapshot(6, 3, 20, 1_000, 3, seed=1), str(tmp_path / "s.json"))
    (tmp_path / "r.jsonl").write_text("".join(
        f'{{"t": {i / 10}, "user": "u{i % 3}", "op": "create_topics", "partitions": 5}}\n'
        for i in range(100)))
    for argv in (["snapshot", "describe", "s.json"],
                 ["limits", "create-topics", "--snapshot", "s.json", "--topic", "t:30:3"],
                 ["quota", "replay", "--requests", "r.jsonl", "--rate", "5"]):
        assert _modules_after(argv, tmp_path) == "0 []", argv
