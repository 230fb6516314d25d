"""`railyard quota replay`: the JSON contract, QUOTAS.json, and bad input naming its line."""

import json

import pytest

from backend.cli import main


def write_lines(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


def req(t=0, user="u", client_id="c", op="create_topics", partitions=1, **extra):
    return {"t": t, "user": user, "client_id": client_id, "op": op, "partitions": partitions,
            **extra}


def run(capsys, *args):
    code = main(["quota", "replay", *map(str, args)])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else None), err


def test_kip_example_through_the_cli(tmp_path, capsys):
    w = write_lines(tmp_path / "w.jsonl", [req(partitions=560), req(partitions=10)])
    code, out, _ = run(capsys, "--requests", w, "--rate", 5, "--samples", 100,
                       "--window-seconds", 1)
    assert code == 0
    assert out["burst"] == 500
    assert out["requests"] == [
        {"index": 0, "admitted": True, "tokens_after": -60.0, "throttle_ms": 0},
        {"index": 1, "admitted": False, "tokens_after": -60.0, "throttle_ms": 12000},
    ]
    assert out["principals"] == [{
        "user": "u", "client_id": "c",
        "quota_entity": "/config/users/<default>/clients/<default>", "rate": 5.0,
        "burst": 500.0, "requests": 2, "admitted": 1, "rejected": 1,
        "partitions_admitted": 560, "max_throttle_ms": 12000}]


def test_defaults_are_kafkas_and_permissive_mode(tmp_path, capsys):
    w = write_lines(tmp_path / "w.jsonl", [req(partitions=60), req(t=0.5, partitions=1)])
    _, out, _ = run(capsys, "--requests", w, "--rate", 5, "--mode", "permissive")
    assert out["burst"] == 55  # 11 samples x 1 s x 5
    assert [r["throttle_ms"] for r in out["requests"]] == [1000, 700]  # -5, then -3.5
    assert all(r["admitted"] for r in out["requests"])


def test_quotas_file_with_kafka_precedence(tmp_path, capsys):
    quotas = tmp_path / "quotas.json"
    quotas.write_text(json.dumps({"quotas": [
        {"user": "alice", "controller_mutation_rate": 1},
        {"user": "<default>", "client_id": "<default>", "controller_mutation_rate": 100},
    ]}))
    w = write_lines(tmp_path / "w.jsonl", [
        req(user="alice", client_id="a1", partitions=11),
        req(user="alice", client_id="a2", partitions=1),
        req(user="bob", client_id="b", partitions=11),
        req(user="bob", client_id="b", partitions=1, validate_only=True)])
    code, out, _ = run(capsys, "--requests", w, "--quotas", quotas)
    assert code == 0 and out["burst"] is None
    assert [r["admitted"] for r in out["requests"]] == [True, True, True, True]
    by_user = {p["user"]: p for p in out["principals"]}
    assert by_user["alice"]["client_id"] == ""  # one bucket for all of alice's clients
    assert by_user["alice"]["quota_entity"] == "/config/users/alice"
    assert by_user["alice"]["partitions_admitted"] == 12
    assert by_user["bob"]["partitions_admitted"] == 11  # validate-only creates nothing


def test_unthrottled_principal_reports_no_tokens(tmp_path, capsys):
    quotas = tmp_path / "quotas.json"
    quotas.write_text(json.dumps({"quotas": [{"client_id": "x", "controller_mutation_rate": 1}]}))
    w = write_lines(tmp_path / "w.jsonl", [req(client_id="other", partitions=10_000)])
    _, out, _ = run(capsys, "--requests", w, "--quotas", quotas)
    assert out["requests"][0]["tokens_after"] is None
    assert out["principals"][0]["rate"] is None
    assert out["unquoted"] == {"principals": 1, "requests": 1, "note": (
        "1 request of 1 principal match no quota entity: Kafka never throttles them")}


def test_a_request_without_client_id_is_not_under_the_rate_and_the_answer_says_why(
        tmp_path, capsys):
    """docs/quota.md's example had no client_id: all 40 requests were admitted with no
    word why. Kafka tags such a request (user, "") and looks up users/<user> and
    users/<default> only (DefaultQuotaCallback.quotaLimit), never --rate's
    users/<default>/clients/<default>; with the client_id, 8 of 40 are admitted."""
    rows = [req(user="tenant-a", client_id="", partitions=3) for _ in range(40)]
    _, out, _ = run(capsys, "--requests", write_lines(tmp_path / "w.jsonl", rows),
                    "--rate", 2)
    assert sum(r["admitted"] for r in out["requests"]) == 40
    assert out["unquoted"]["requests"] == 40 and "give the requests' client_id" in \
        out["unquoted"]["note"]
    rows = [req(user="tenant-a", client_id="terraform", partitions=3) for _ in range(40)]
    _, out, _ = run(capsys, "--requests", write_lines(tmp_path / "w.jsonl", rows),
                    "--rate", 2)
    assert sum(r["admitted"] for r in out["requests"]) == 8 and "unquoted" not in out
    assert out["principals"][0]["max_throttle_ms"] == 1000


def test_blank_lines_and_missing_optional_fields(tmp_path, capsys):
    w = write_lines(tmp_path / "w.jsonl", [
        "", {"t": 0, "user": "u", "op": "delete_topics", "partitions": 3}, "  "])
    code, out, _ = run(capsys, "--requests", w, "--rate", 1)
    assert code == 0
    assert out["principals"][0]["client_id"] == ""


BAD = [
    ([req(), req(t=-1)], "line 2: 't' is earlier"),
    ([req(), req(op="alter_configs")], "line 2: unknown 'op'"),
    ([req(), req(), req(partitions=-3)], "line 3: 'partitions' must be >= 0"),
    ([req(), "{not json"], "line 2: invalid JSON"),
    ([req(), '["a list"]'], "line 2: expected a JSON object"),
    ([req(), req(partitions="5")], "line 2: 'partitions' has the wrong type"),
    ([req(), req(partitions=1.5)], "line 2: 'partitions' has the wrong type"),
    (["", req(), {"t": 1, "user": "u", "op": "create_topics"}], "line 3: missing or null "
                                                                 "'partitions'"),
    ([req(), req(user="")], "line 2: 'user' must not be empty"),
]


@pytest.mark.parametrize(("rows", "message"), BAD)
def test_bad_workload_names_the_line(tmp_path, capsys, rows, message):
    w = write_lines(tmp_path / "w.jsonl", rows)
    code, out, err = run(capsys, "--requests", w, "--rate", 5)
    assert code == 2 and out is None
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(("doc", "message"), [
    ({"quota": []}, 'expected {"quotas": [...]}'),
    ({"quotas": [{"controller_mutation_rate": 5}]}, "needs a 'user', a 'client_id' or both"),
    ({"quotas": [{"user": "a", "controller_mutation_rate": 0}]}, "must be a positive number"),
    ({"quotas": [{"user": "a", "rate": 5}]}, "unknown key(s) ['rate']"),
    ({"quotas": [{"user": "a", "controller_mutation_rate": 1},
                 {"user": "a", "controller_mutation_rate": 2}]}, "/config/users/a is set twice"),
    ({"quotas": [{"user": "<default>", "client_id": "<default>",
                  "controller_mutation_rate": 2}]}, "keep one"),
])
def test_bad_quotas_file(tmp_path, capsys, doc, message):
    quotas = tmp_path / "quotas.json"
    quotas.write_text(json.dumps(doc))
    w = write_lines(tmp_path / "w.jsonl", [req()])
    code, _, err = run(capsys, "--requests", w, "--rate", 5, "--quotas", quotas)
    assert code == 2 and message in err


def test_missing_file_and_missing_rate(tmp_path, capsys):
    code, _, err = run(capsys, "--requests", tmp_path / "nope.jsonl", "--rate", 5)
    assert code == 2 and "no such requests file" in err
    w = write_lines(tmp_path / "w.jsonl", [req()])
    code, _, err = run(capsys, "--requests", w)
    assert code == 2 and "--rate" in err


# Workloads both readers take; line-level problems both refuse with the same message.
G = req(t=1)
SAME_EITHER_WAY = {
    "mixed": [req(t=i / 20, user=f"u{i % 4}", client_id=["", "a", "b"][i % 3], partitions=i % 7,
                  validate_only=i % 5 == 0) for i in range(300)],
    "optional-null": [{**G, "client_id": None, "validate_only": None}],
    "blank-lines": ["", G, "   ", G],
    "t-int-and-huge": [{**G, "t": 3}, {**G, "t": 10**23}],
    "t-nan": ['{"t": NaN, "user": "u", "op": "create_topics", "partitions": 1}'],
    "null-line": [G, "null"],  # pyarrow: a request of nulls
    "empty-object": ["{}"],
    "unknown-keys": [{**G, "x": {"y": [1]}}],
    "partitions-min-long": [{**G, "partitions": -2**63}],
    "partitions-past-long": [{**G, "partitions": 2**63}],
    "t-true": [{**G, "t": True}],
    "partitions-float": [{**G, "partitions": 1.0}],
    "validate-only-int": [{**G, "validate_only": 1}],
    "user-object": [{**G, "user": {"a": 1}}],
    "key-twice": ['{"t": 1, "user": "u", "user": "v", "op": "create_topics", "partitions": 1}'],
    "t-past-double": ['{"t": 1e400, "user": "u", "op": "create_topics", "partitions": 1}'],
    "not-json": [G, "{oops"],
    "not-object": [G, "[1]"],
    "trailing-comma": ['{"t": 1, "user": "u", "op": "create_topics", "partitions": 1,}'],
}


@pytest.mark.parametrize("name", sorted(SAME_EITHER_WAY))
def test_python_and_pyarrow_readers_agree(tmp_path, name):
    """Small files are read line by line in Python (no pyarrow, no pandas), large ones by
    pyarrow: the same columns, or the same one-line refusal."""
    path = write_lines(tmp_path / "w.jsonl", SAME_EITHER_WAY[name])
    python, arrow = _both_readers(path)
    assert python == arrow


def test_readers_agree_on_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_bytes(b'{"t": 1, "user": "\xff", "op": "create_topics", "partitions": 1}\n')
    assert _both_readers(path) == [f"{path}: not a UTF-8 text file"] * 2


def _both_readers(path) -> list:
    from backend.errors import BadInput
    from backend.services import quota

    answers = []
    for small_file_bytes in (1 << 30, -1):  # Python, then pyarrow
        try:
            answers.append({k: v.tolist() for k, v in
                            quota.load_columns(path, small_file_bytes).items()})
        except BadInput as e:
            answers.append(str(e))
    return answers


def test_a_first_line_of_null_is_a_bad_line_not_a_crash(tmp_path, capsys):
    """pyarrow's reader takes the process down on such a file; it never gets it."""
    w = write_lines(tmp_path / "w.jsonl", ["null"] + [req(t=1)] * 20_000)
    code, _, err = run(capsys, "--requests", w, "--rate", 5)
    assert code == 2 and "line 1: missing or null 't'" in err


def test_principal_without_a_quota_is_reported_as_null(tmp_path, capsys):
    """An empty client id gets no bucket from the default entity (Kafka's metric tags)."""
    w = write_lines(tmp_path / "w.jsonl", [req(client_id=""), req(client_id="a")])
    code, out, _ = run(capsys, "--requests", w, "--rate", 5)
    assert code == 0
    assert [(p["client_id"], p["quota_entity"], p["rate"]) for p in out["principals"]] == [
        ("", None, None), ("a", "/config/users/<default>/clients/<default>", 5.0)]
