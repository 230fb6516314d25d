"""The `railyard` command line: one JSON object on stdout per computed answer.

Exit codes: 0 for any computed answer (accepted or rejected), 2 for bad input with one
line on stderr saying what was wrong and where, 3 when a cluster (or another source the
verb needs) does not answer or refuses, with one line naming it and the error; nothing is
written in either case. Each verb lives in its own module ``backend.cli.<module>`` (the
VERBS table) exposing ``register(subparsers)``; only the module of the verb that runs is
imported, so `railyard --help` and light verbs start without pandas, Spark or Dash. The
guard-rail verbs parse arguments and call services (backend.services), nothing lower; the
CLI is also where the house is wired together: `twin`, `prometheus`, `serve`, `worker` and
`demo` start the twin, Prometheus and the dashboard (imported lazily, only by those verbs).
Nothing below the CLI imports it (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any, NoReturn

from backend.errors import BadInput, Unavailable
from backend.model.bounds import MAX_INT, MAX_LONG, MIN_LIMIT, whole_number

# verb -> (module under backend.cli that registers it, the one line `railyard --help` shows)
VERBS: dict[str, tuple[str, str]] = {
    "snapshot": ("snapshot", "generate, describe and import cluster snapshots"),
    "limits": ("limits", "KIP-578 partition limits: what-ifs and checks"),
    "throttle": ("throttle", "KIP-73 replication throttles for a reassignment"),
    "quota": ("quota", "controller mutation quotas (KIP-599)"),
    "shrink": ("shrink", "plan reducing a topic's partition count"),
    "reassign": ("reassign", "plan and check partition reassignments"),
    "whatif": ("whatif", "what-if sweeps on Spark (docs/whatif.md)"),
    "twin": ("twin", "the simulated cluster and its exporters"),
    "kafka": ("kafka", "Apache Kafka brokers on 127.0.0.1 to try Railyard on"),
    "prometheus": ("prometheus", "start or stop Prometheus for the twin"),
    "serve": ("serve", "run the dashboard (config/railyard.example.yaml documents the "
                       "config file)"),
    "worker": ("serve", "run background jobs (sweeps) from Redis for the dashboards of a "
                        "config with cache.type: redis"),
    "demo": ("demo", "run the twin, Prometheus, Spark and the dashboard on 127.0.0.1 "
                     "(--report: a text report instead)"),
    "auth": ("auth", "users for the dashboard and the API"),
    "capacity": ("capacity", "time-to-limit forecasts from Prometheus history"),
    "alerts": ("alerts", "Prometheus alerting rules and a Grafana dashboard"),
    "audit": ("audit", "the plan store's audit log"),
}


class _Once:
    """An option that takes one value refuses to be given twice (argparse keeps the last
    in silence: `--topic a --topic b` ran on b). Appending and counting options repeat."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if option_string is not None:
            given: set[argparse.Action] = parser.__dict__.setdefault("_given", set())
            if self in given:
                raise argparse.ArgumentError(
                    None, f"{_flag(self)} given twice: give it once")  # type: ignore[arg-type]
            given.add(self)  # type: ignore[arg-type]
        super().__call__(parser, namespace, values, option_string)  # type: ignore[misc]


_ONCE_ACTIONS = {name: type(f"Once{cls.__name__}", (_Once, cls), {}) for name, cls in (
    (None, argparse._StoreAction), ("store", argparse._StoreAction),
    ("store_const", argparse._StoreConstAction), ("store_true", argparse._StoreTrueAction),
    ("store_false", argparse._StoreFalseAction))}


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line (no usage block) and exit 2, and
    refuses a single-valued option given twice (every verb's parser is one of these)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, cls in _ONCE_ACTIONS.items():
            self.register("action", name, cls)

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None):
        self._given = set()  # the options seen in this parse (each parser its own)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument -"):  # "--partitions: expected ...", plainly
            message = message.removeprefix("argument ")
        self.exit(2, f"{self.prog}: error: {message}\n")


def verb_parser(sub: argparse._SubParsersAction, verb: str) -> argparse.ArgumentParser:
    """The parser of one verb, with its line from the VERBS table."""
    return sub.add_parser(verb, help=VERBS[verb][1])


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, Mapping):  # backend.model.jsonrows.IndexedRows
        return dict(o)
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


_PLAIN = frozenset((int, str, bool, type(None)))
_SEQUENCES = frozenset((list, tuple))


def _check_finite(o: Any) -> None:
    """Refuse a NaN or an infinity anywhere in an answer (orjson would write null). Values
    are checked a level at a time by type in C, so a million-row assignment costs little."""
    t = type(o)
    if t is float:
        if not math.isfinite(o):
            raise ValueError(f"not JSON compliant: {o} in a CLI answer")
    elif t is dict:
        _check_all(list(o.values()))
    elif t in _SEQUENCES:
        _check_all(o)
    elif "numpy" in sys.modules:  # numpy arrays and scalars, when the verb uses numpy
        import numpy as np

        if isinstance(o, np.ndarray | np.floating) and np.asarray(o).dtype.kind in "fc" \
                and not np.isfinite(o).all():
            raise ValueError("not JSON compliant: NaN or infinity in a CLI answer")


def _check_all(items: Sequence[Any]) -> None:
    kinds = set(map(type, items))
    if kinds <= _PLAIN:
        return
    if kinds <= _SEQUENCES | _PLAIN:
        _check_all(list(chain.from_iterable(x for x in items if type(x) in _SEQUENCES)))
        return
    for item in items:
        _check_finite(item)


def emit(result: dict) -> None:
    """Print a result as one JSON object (NaN is a bug here, never silently emitted).
    orjson writes numpy arrays directly, and mappings that write their own JSON (a
    ``json_bytes`` method, e.g. a 1M-partition assignment) as it; json is the fallback
    for what orjson refuses (integers past 64 bits)."""
    import orjson

    def default(o: Any) -> Any:
        if hasattr(o, "json_bytes"):
            return orjson.Fragment(o.json_bytes())
        return _json_default(o)

    _check_finite(result)
    try:
        text = orjson.dumps(result, default=default, option=orjson.OPT_SERIALIZE_NUMPY
                            | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE).decode()
    except orjson.JSONEncodeError:
        text = json.dumps(result, default=_json_default, allow_nan=False) + "\n"
    sys.stdout.write(text)


_LARGEST = {MAX_LONG: "Kafka's largest value (2^63-1)", MAX_INT: "Kafka's largest int (2^31-1)"}


def _shown(text: str) -> str:
    """``text`` quoted for a one-line message, cut if long."""
    return repr(text if len(text) <= 40 else f"{text[:37]}...")


def _past(text: str, limit: int) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{_shown(text)} is past {_LARGEST[limit]}")


def whole(low: int = 1, limit: int = MAX_LONG, unit: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number typed in ASCII digits (int() also takes '١٢' and
    '1_000'), at least ``low`` (0 or 1) and at most ``limit`` (Kafka's long or int);
    ``unit`` is said in the refusal ("bytes/s")."""
    of = f" of {unit}" if unit else ""

    def parse(text: str) -> int:
        value = whole_number(text)
        if value is None or (low > 0 and value < low):
            kind = "a positive whole number" if low > 0 else "a whole number"
            raise argparse.ArgumentTypeError(f"expected {kind}{of}, got {_shown(text)}")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {_shown(text)}")
        if value > limit:
            raise _past(text, limit)
        return value

    parse.__name__ = "whole number"
    return parse


positive_int = whole(1)
non_negative_int = whole(0)
# Kafka's INT configs (replica.fetch.response.max.bytes, the quota window counts; the
# partition limits below): Kafka refuses a value past 2^31-1
positive_kafka_int = whole(1, MAX_INT)
# --max-broker-partitions and --max-partitions of every verb: KIP-578's limits, a Kafka INT
# of at least MIN_LIMIT (0 is no "unlimited": backend/model/bounds.py), as the pages take
partition_limit = whole(MIN_LIMIT, MAX_INT)


def _port(text: str, low: int) -> int:
    value = whole_number(text)
    if value is None or not low <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from {low} to 65535, got "
                                         f"{_shown(text)}")
    return value


def port_or_zero(text: str) -> int:
    """A TCP port, or 0 for any free port."""
    return _port(text, 0)


def port_number(text: str) -> int:
    """A TCP port a browser is pointed at (0 would leave the address unknown)."""
    return _port(text, 1)


def counts_spec(form: str, example: str) -> Callable[[str], str]:
    """An argparse type for a spec such as NAME:PARTITIONS:RF whose counts (the fields
    after the name) must be whole numbers typed in ASCII; returned as typed, for the verb
    to read (and refuse a 0 or a missing name)."""
    counts = len([f for f in form.split(":") if f != "NAME"])

    def parse(text: str) -> str:
        fields = text.rsplit(":", counts)
        if len(fields) < counts or any(whole_number(f) is None for f in fields[-counts:]):
            raise argparse.ArgumentTypeError(f"expected {form} with whole numbers, e.g. "
                                             f"{example}, got {_shown(text)}")
        return text

    parse.__name__ = form
    return parse


def _ascii_float(text: str) -> float:
    """``text`` as a float if typed as a number in ASCII, else NaN: float() also takes
    '١٢', '1_000', 'nan' and 'inf' (the dashboard's rule, backend/services/fields.NUMBER)."""
    from backend.services.fields import NUMBER

    return float(text) if NUMBER.fullmatch(text) else math.nan


def number(text: str) -> float:
    """An argparse type: a finite number, typed in ASCII."""
    value = _ascii_float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a number, got {_shown(text)}")
    return value


def positive(unit: str = "") -> Callable[[str], float]:
    """An argparse type: a number larger than 0 and at most Kafka's long, typed in ASCII;
    ``unit`` is said in the refusal."""
    of = f" of {unit}" if unit else ""

    def parse(text: str) -> float:
        value = _ascii_float(text)
        if value > MAX_LONG:  # 1e400 is inf
            raise _past(text, MAX_LONG)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number{of}, got "
                                             f"{_shown(text)}")
        return value

    parse.__name__ = "number"
    return parse


positive_float = positive()


def _verb_of(argv: Sequence[str]) -> str | None:
    """The verb a command line names: its first word (the top level takes only -h)."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser; only the verb ``argv`` names (every verb when ``argv`` is
    None) gets its full parser, the others a one-line placeholder for --help."""
    parser = OneLineParser(prog="railyard", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True, parser_class=OneLineParser)
    verb = None if argv is None else _verb_of(argv)
    wanted = {m for v, (m, _) in VERBS.items() if argv is None or v == verb}
    for name, (module, _) in VERBS.items():
        if name in sub.choices:
            continue
        if module in wanted:  # a module may register several verbs (serve and worker)
            importlib.import_module(f"backend.cli.{module}").register(sub)
        else:
            verb_parser(sub, name)
    return parser


# the arguments naming a file a verb writes (dest names); twin serve writes its
# --targets-file, which prometheus up reads
OUTPUTS = ("out", "plan_out")
OUTPUTS_OF_VERB = {"twin": ("targets_file",)}


def _flag(action: argparse.Action) -> str:
    return max(action.option_strings, key=len) if action.option_strings else \
        str(action.metavar or action.dest)


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):  # a NUL in a path: the verb says so
        return False


def check_outputs_are_not_inputs(parser: argparse.ArgumentParser,
                                 args: argparse.Namespace) -> None:
    """Refuse, before any work, an output (--out, --plan-out, ...) naming the same file as
    an input of the verb: `--snapshot s.json --plan-out s.json` replaced the snapshot."""
    actions: list[argparse.Action] = []
    while parser is not None:  # the verb's parser, then its action's (snapshot generate)
        sub = next((a for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction)), None)
        actions += [a for a in parser._actions if a is not sub]
        parser = sub.choices.get(getattr(args, sub.dest, None)) if sub else None
    written = OUTPUTS + OUTPUTS_OF_VERB.get(args.verb, ())
    outputs = [a for a in actions if a.dest in written]
    inputs = [a for a in actions if a.dest not in written and a.type is None and not a.choices]
    for out in outputs:
        target = getattr(args, out.dest, None)
        if not isinstance(target, str) or not target:
            continue
        for given in inputs:
            value = getattr(args, given.dest, None)
            for path in value if isinstance(value, list) else [value]:
                if isinstance(path, str) and path and _same_file(target, path):
                    raise BadInput(f"{_flag(out)} {target} is the {_flag(given)} file: "
                                   "writing it would replace the input")


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # Answers allocate millions of small acyclic rows (a 1M-partition assignment): collect
    # cycles every 100k allocations, not every 700, which halves the time to build them.
    gc.set_threshold(100_000, 10, 10)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], dict | None] = args.func
    try:
        check_outputs_are_not_inputs(parser, args)
        result = func(args)
    except BadInput as e:
        sys.stderr.write(f"railyard {args.verb}: error: {e}\n")
        return 2
    except Unavailable as e:
        sys.stderr.write(f"railyard {args.verb}: unavailable: {e}\n")
        return 3
    except KeyboardInterrupt:
        sys.stderr.write("railyard: interrupted\n")
        return 130
    except BrokenPipeError:  # `railyard ... | head`: the reader left, nothing to report
        return 0
    if result is not None:
        emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
