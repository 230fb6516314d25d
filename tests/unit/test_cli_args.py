"""The command line's arguments as a user types them: numbers in ASCII digits only, Kafka's
int configs within 2^31-1, each single-valued option once, outputs that are not inputs.
Every refusal is the CLI contract's: exit 2, one line on stderr naming the flag and what
was typed, nothing on stdout, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.helpers import run_cli

SNAPSHOT = {"cluster": "t",
            "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}, {"id": 3, "rack": "c"}],
            "topics": [{"name": "orders", "partitions": [
                {"partition": p, "replicas": [1 + p % 3, 1 + (p + 1) % 3], "size_bytes": 1000}
                for p in range(4)]}],
            "limits": {}}
PLAN = {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3]}]}


@pytest.fixture
def files(tmp_path) -> Path:
    (tmp_path / "s.json").write_text(json.dumps(SNAPSHOT))
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    (tmp_path / "requests.jsonl").write_text(
        json.dumps({"t": 0.0, "user": "u", "op": "create_topics", "partitions": 3}) + "\n")
    return tmp_path


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def refused(capsys, root: Path, *argv: str) -> str:
    """Run argv (``{d}`` is ``root``); assert the contract's refusal; the stderr line."""
    before = _tree(root)
    code, out, err = run_cli(capsys, *(a.format(d=root) for a in argv))
    assert code == 2, (code, out[:300], err)
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err
    assert _tree(root) == before, "a refusal wrote something"
    return err


GEN = ["snapshot", "generate", "--topics", "2", "--partitions", "6"]
THROTTLE = ["throttle", "plan", "--snapshot", "{d}/s.json", "--reassignment", "{d}/plan.json"]
SHRINK = ["shrink", "plan", "--snapshot", "{d}/s.json", "--topic", "orders"]
ADD = ["limits", "add-partitions", "--snapshot", "{d}/s.json", "--topic", "orders"]
CREATE = ["limits", "create-topics", "--snapshot", "{d}/s.json"]
REPLAY = ["quota", "replay", "--requests", "{d}/requests.jsonl"]
REASSIGN = ["reassign", "generate", "--snapshot", "{d}/s.json", "--goal", "drain"]


# (argv, what stderr says: the flag and the text as typed)
NOT_ASCII = [
    ([*GEN, "--brokers", "١٢", "--out", "{d}/n.json"],
     "--brokers: expected a positive whole number, got '١٢'"),
    ([*GEN, "--brokers", "1_000", "--out", "{d}/n.json"],
     "--brokers: expected a positive whole number, got '1_000'"),
    ([*GEN, "--brokers", "3", "--seed", "٣", "--out", "{d}/n.json"],
     "--seed: expected a whole number, got '٣'"),
    ([*GEN, "--brokers", "3", "--skew", "٠.٥", "--out", "{d}/n.json"],
     "--skew: expected a number, got '٠.٥'"),
    ([*THROTTLE, "--throttle", "١٠٠٠"],
     "--throttle: expected a positive whole number of bytes/s, got '١٠٠٠'"),
    ([*THROTTLE, "--throttle", "1_000"],
     "--throttle: expected a positive whole number of bytes/s, got '1_000'"),
    ([*THROTTLE, "--throttle", "1000", "--network-capacity", "١٢"],
     "--network-capacity: expected a positive number of bytes/s, got '١٢'"),
    ([*REPLAY, "--rate", "١٢"], "--rate: expected a positive number of partitions/s, got '١٢'"),
    ([*REPLAY, "--rate", "1_2"], "--rate: expected a positive number of partitions/s, got '1_2'"),
    ([*CREATE, "--topic", "x:١٢:3"],
     "--topic: expected NAME:PARTITIONS:RF with whole numbers, e.g. orders:12:3, got 'x:١٢:3'"),
    ([*CREATE, "--topic", "x:12:٣"], "got 'x:12:٣'"),
    ([*ADD, "--total", "١٠٠"], "--total: expected a positive whole number, got '١٠٠'"),
    ([*SHRINK, "--partitions", "١"], "--partitions: expected a positive whole number, got '١'"),
    ([*SHRINK, "--partitions", "2.5"], "--partitions: expected a positive whole number, got '2.5'"),
    ([*REASSIGN, "--brokers", "٣"], "--brokers: expected comma-separated broker ids"),
    ([*REASSIGN, "--brokers", "3,3"], "--brokers: broker 3 is named twice in '3,3'"),
    (["serve", "--config", "{d}/c.yaml", "--port", "٨٠٥٠"],
     "--port: expected a port from 1 to 65535, got '٨٠٥٠'"),
    (["capacity", "forecast", "--config", "{d}/c.yaml", "--topic", "١٠٠:3"],
     "--topic: expected PARTITIONS:RF with whole numbers, e.g. 100:3, got '١٠٠:3'"),
    (["capacity", "forecast", "--config", "{d}/c.yaml", "--window", "٣٠"],
     "--window: expected a positive whole number, got '٣٠'"),
    ([*THROTTLE, "--throttle", "1" * 5000], "--throttle: '111"),  # int() refuses 4,300 digits
    ([*REASSIGN, "--brokers", "1" * 5000], "--brokers: expected comma-separated broker ids"),
]


@pytest.mark.parametrize(("argv", "message"), NOT_ASCII, ids=[m for _, m in NOT_ASCII])
def test_numbers_are_ascii_digits_said_with_flag_and_text(files, capsys, argv, message):
    """int() and float() also take '١٢' (Arabic-Indic digits) and '1_000': `--brokers ١٢`
    made 12 brokers. Now every numeric argument takes ASCII digits only, and the refusal
    names the flag and the text, never argparse's type name ('invalid positive_int')."""
    err = refused(capsys, files, *argv)
    assert message in err
    assert "invalid" not in err and "argument " not in err


def test_ascii_numbers_still_read(files, capsys):
    code, _, err = run_cli(capsys, *(a.format(d=files) for a in THROTTLE), "--throttle",
                             "+1000", "--network-capacity", "1.25e8")
    assert code == 0, err
    code, _, err = run_cli(capsys, *(a.format(d=files) for a in REASSIGN), "--brokers",
                             "3, 2")
    assert code == 0, err


INT = "2147483648"  # 2^31: one past a Java int
PAST_INT = [
    [*GEN, "--brokers", "3", "--out", "{d}/n.json", "--max-broker-partitions", INT],
    [*GEN, "--brokers", "3", "--out", "{d}/n.json", "--max-partitions", INT],
    [*CREATE, "--topic", "n:1:1", "--max-broker-partitions", INT],
    [*ADD, "--total", "6", "--max-partitions", INT],
    ["limits", "check-reassignment", "--snapshot", "{d}/s.json", "--reassignment",
     "{d}/plan.json", "--max-broker-partitions", INT],
    [*REASSIGN[:-1], "balance", "--max-broker-partitions", INT],
    [*REASSIGN[:-1], "balance", "--max-partitions", INT],
    [*SHRINK, "--partitions", "2", "--max-broker-partitions", INT],
    [*SHRINK, "--partitions", "2", "--max-partitions", INT],
    ["capacity", "forecast", "--config", "{d}/c.yaml", "--max-broker-partitions", INT],
    [*THROTTLE, "--throttle", "1000", "--fetch-response-max-bytes", INT],
    [*THROTTLE, "--throttle", "1000", "--window-num", INT],
    [*REPLAY, "--rate", "5", "--samples", INT],
    [*THROTTLE, "--throttle", "1000", "--window-seconds", INT],
    [*REPLAY, "--rate", "5", "--window-seconds", INT],
]


@pytest.mark.parametrize("argv", PAST_INT, ids=lambda a: f"{a[0]}-{a[1]}-{a[-2]}")
def test_kafka_int_configs_stop_at_2_31_minus_1(files, capsys, argv):
    """max.broker.partitions, max.partitions, replica.fetch.response.max.bytes and the quota
    windows' counts and sizes are Java ints in Kafka: 2147483648 was taken (Kafka refuses it). Now
    it is refused naming the flag and the bound."""
    err = refused(capsys, files, *argv)
    assert f"{argv[-2]}: '{INT}' is past Kafka's largest int (2^31-1)" in err


def test_kafka_int_configs_take_2_31_minus_1_and_longs_stay_longs(files, capsys):
    code, _, err = run_cli(capsys, *(a.format(d=files) for a in THROTTLE), "--throttle",
                           str(2**63 - 1), "--fetch-response-max-bytes", str(2**31 - 1),
                           "--window-num", str(2**31 - 1))
    assert code == 0, err
    code, _, err = run_cli(capsys, *(a.format(d=files) for a in ADD), "--total", "6",
                           "--max-broker-partitions", str(2**31 - 1))
    assert code == 0, err


BELOW_ONE = [
    [*GEN, "--brokers", "3", "--out", "{d}/n.json", "--max-broker-partitions"],
    [*GEN, "--brokers", "3", "--out", "{d}/n.json", "--max-partitions"],
    [*CREATE, "--topic", "n:1:1", "--max-broker-partitions"],
    [*CREATE, "--topic", "n:1:1", "--max-partitions"],
    [*ADD, "--total", "6", "--max-broker-partitions"],
    [*ADD, "--total", "6", "--max-partitions"],
    ["limits", "check-reassignment", "--snapshot", "{d}/s.json", "--reassignment",
     "{d}/plan.json", "--max-broker-partitions"],
    ["limits", "check-reassignment", "--snapshot", "{d}/s.json", "--reassignment",
     "{d}/plan.json", "--max-partitions"],
    [*REASSIGN[:-1], "balance", "--max-broker-partitions"],
    [*SHRINK, "--partitions", "2", "--max-partitions"],
    [*SHRINK, "--partitions", "2", "--max-broker-partitions"],
    ["capacity", "forecast", "--config", "{d}/c.yaml", "--max-broker-partitions"],
    ["capacity", "forecast", "--config", "{d}/c.yaml", "--max-partitions"],
]


@pytest.mark.parametrize("typed", ["0", "-1"])
@pytest.mark.parametrize("argv", BELOW_ONE, ids=lambda a: f"{a[0]}-{a[1]}-{a[-1]}")
def test_kip_578_limits_are_at_least_1_on_every_verb(files, capsys, argv, typed):
    """`railyard limits ... --max-broker-partitions 0` was taken (a cluster where no
    partition fits) while the capacity page refused a limit below 1: KIP-578 has no
    "0: unlimited" (backend/model/bounds.py, MIN_LIMIT). One rule now, on every verb."""
    err = refused(capsys, files, *argv, typed)
    assert f"{argv[-1]}: expected a positive whole number, got '{typed}'" in err


def test_kip_examples_limits_still_read(files, capsys):
    """The KIP's own limits, and the smallest one, are taken."""
    for limit in ("1", "10", "40"):
        code, _, err = run_cli(capsys, *(a.format(d=files) for a in CREATE), "--topic",
                               "n:1:1", "--max-broker-partitions", limit,
                               "--max-partitions", limit)
        assert code == 0, err


TWICE = [
    ([*ADD, "--topic", "orders", "--total", "6"], "--topic"),
    ([*THROTTLE, "--throttle", "1", "--throttle", "2"], "--throttle"),
    ([*ADD, "--total", "6", "--total", "7"], "--total"),
    ([*REASSIGN[:-1], "balance", "--goal", "limits"], "--goal"),
    ([*GEN, "--brokers", "3", "--out", "{d}/a.json", "--out={d}/b.json"], "--out"),
    ([*SHRINK, "--partitions", "2", "--snapshot", "{d}/s.json"], "--snapshot"),
    ([*REPLAY, "--rate", "5", "--rate", "5"], "--rate"),
    (["audit", "verify", "--demo", "{d}", "--demo", "{d}"], "--demo"),
]


@pytest.mark.parametrize(("argv", "flag"), TWICE, ids=[f for _, f in TWICE])
def test_a_single_valued_option_given_twice_is_refused(files, capsys, argv, flag):
    """`limits add-partitions --topic topic-001 --topic topic-002` ran on topic-002 and
    `--throttle 1 --throttle 2` on 2: argparse keeps the last in silence. Now the second
    is refused, even with the same value."""
    err = refused(capsys, files, *argv)
    assert f"error: {flag} given twice: give it once\n" in err


def test_every_verb_refuses_a_repeated_single_valued_option():
    """Every option of every verb either repeats by design (append, count) or is refused
    when given twice: the parsers are all OneLineParser, whatever a module adds later."""
    import argparse

    from backend.cli import _Once, build_parser

    repeatable = (argparse._AppendAction, argparse._CountAction, argparse._HelpAction,
                  argparse._SubParsersAction)
    seen, parsers = 0, [build_parser()]
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += action.choices.values()
            elif action.option_strings and not isinstance(action, repeatable):
                assert isinstance(action, _Once), (parser.prog, action.option_strings)
                seen += 1
    assert seen > 100


def test_repeatable_options_still_repeat(files, capsys):
    code, out, err = run_cli(capsys, *(a.format(d=files) for a in CREATE), "--topic", "a:1:1",
                             "--topic", "b:1:1")
    assert code == 0, err
    assert [t["name"] for t in json.loads(out)["topics"]] == ["a", "b"]


SAME = [
    (["reassign", "generate", "--snapshot", "{d}/s.json", "--goal", "balance", "--plan-out",
      "{d}/s.json"], "--plan-out {d}/s.json is the --snapshot file"),
    (["reassign", "generate", "--snapshot", "s.json", "--goal", "balance", "--plan-out",
      "{d}/../{d.name}/s.json"], "is the --snapshot file"),
    (["reassign", "generate", "--snapshot", "{d}/link.json", "--goal", "balance",
      "--plan-out", "{d}/s.json"], "is the --snapshot file"),
    (["snapshot", "import-assignment", "--assignment", "{d}/plan.json", "--out",
      "{d}/plan.json"], "--out {d}/plan.json is the --assignment file"),
    (["snapshot", "import-assignment", "--assignment", "{d}/plan.json", "--snapshot",
      "{d}/s.json", "--out", "{d}/s.json"], "--out {d}/s.json is the --snapshot file"),
    (["whatif", "sweep", "--spec", "{d}/plan.json", "--out", "{d}/plan.json",
      "--no-progress"], "--out {d}/plan.json is the --spec file"),
    (["twin", "serve", "--snapshot", "{d}/s.json", "--targets-file", "{d}/s.json", "--for",
      "1"], "--targets-file {d}/s.json is the --snapshot file"),
    (["alerts", "grafana", "--config", "{d}/s.json", "--out", "{d}/s.json"],
     "--out {d}/s.json is the --config file"),
]


@pytest.mark.parametrize(("argv", "message"), SAME, ids=[f"{a[0]}-{a[1]}-{i}" for i, (a, _)
                                                         in enumerate(SAME)])
def test_an_output_that_is_an_input_is_refused_before_any_work(files, capsys, monkeypatch,
                                                                argv, message):
    """`reassign generate --snapshot s2.json --plan-out s2.json` replaced the snapshot with
    the plan (exit 0); import-assignment and whatif sweep did the same to their inputs.
    Now the verb refuses before it starts, naming both flags, and the input is intact."""
    (files / "link.json").symlink_to(files / "s.json")
    monkeypatch.chdir(files)
    err = refused(capsys, files, *argv)
    assert message.format(d=files) in err
    assert "writing it would replace the input" in err
    assert json.loads((files / "s.json").read_text()) == SNAPSHOT
    assert json.loads((files / "plan.json").read_text()) == PLAN


def test_an_output_beside_its_input_is_written(files, capsys):
    code, _, err = run_cli(capsys, "reassign", "generate", "--snapshot", files / "s.json",
                           "--goal", "drain", "--brokers", "3", "--plan-out", files / "p.json")
    assert code == 0, err
    assert json.loads((files / "p.json").read_text())["version"] == 1


OUT_PATHS = [
    (["reassign", "generate", "--snapshot", "{d}/s.json", "--goal", "drain", "--brokers", "3",
      "--plan-out"], "--plan-out"),
    ([*GEN, "--brokers", "3", "--out"], "--out"),
    (["snapshot", "import-assignment", "--assignment", "{d}/plan.json", "--out"], "--out"),
    (["whatif", "sweep", "--spec", "{d}/plan.json", "--no-progress", "--out"], "--out"),
]


@pytest.mark.parametrize(("argv", "flag"), OUT_PATHS, ids=[a[1] for a, _ in OUT_PATHS])
def test_an_empty_output_path_asks_for_a_file_name(files, capsys, argv, flag):
    """`--plan-out ""` said 'is a directory' (the empty path is the current folder)."""
    err = refused(capsys, files, *argv, "")
    assert err.endswith(f"error: {flag}: give a file name\n"), err


@pytest.mark.parametrize(("argv", "flag"), OUT_PATHS, ids=[a[1] for a, _ in OUT_PATHS])
def test_an_output_in_a_missing_folder_is_refused_not_made(files, capsys, argv, flag):
    """`--out /nonexist/x.json` made /nonexist (as root) and wrote there: a typo in a
    folder name became a new folder. Now the missing folder is named and nothing is made."""
    err = refused(capsys, files, *argv, "{d}/nonexist/deeper/x.json")
    assert f"{flag} {files}/nonexist/deeper/x.json: no folder {files}/nonexist/deeper\n" in err
    assert not (files / "nonexist").exists()
