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
