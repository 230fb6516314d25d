"""`railyard whatif sweep`: many limit, throttle, quota or fleet scenarios at once, on Spark."""

from __future__ import annotations

import argparse
import sys

from backend.cli import verb_parser
from backend.errors import Unavailable
from backend.services import whatif
from backend.spark.session import SparkUnreachable, settings_from


def register(sub: argparse._SubParsersAction) -> None:
    p = verb_parser(sub, "whatif")
    actions = p.add_subparsers(dest="action", required=True)
    s = actions.add_parser("sweep", help="run every scenario of a sweep spec")
    s.add_argument("--spec", required=True, metavar="SPEC.json", help="see docs/whatif.md")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--spark-master", metavar="URL",
                       help="local[N] or spark://host:port (default: local[*], or "
                            "$RAILYARD_SPARK_MASTER)")
    where.add_argument("--spark-remote", metavar="URL",
                       help="Spark Connect, sc://host:port (or $RAILYARD_SPARK_REMOTE)")
    s.add_argument("--out", metavar="FILE", help=".parquet or .json; without it the rows "
                   "are printed in the JSON answer")
    s.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    s.set_defaults(func=_sweep)


def _sweep(a: argparse.Namespace) -> dict:
    """A Spark master or Connect server that does not answer is exit 3 (unavailable), as
    any other source a verb needs; bad input stays exit 2."""
    try:
        return _run_sweep(a)
    except SparkUnreachable as e:
        raise Unavailable(f"Spark at {e.where}", f"unreachable ({e.why})") from None


def _run_sweep(a: argparse.Namespace) -> dict:
    settings = settings_from(a.spark_master, a.spark_remote)
    if a.no_progress or not sys.stderr.isatty():
        return whatif.sweep(a.spec, settings, a.out)
    from tqdm import tqdm

    with tqdm(desc="sweep", unit="task", file=sys.stderr, leave=False) as bar:
        def progress(done: int, total: int) -> None:
            if total and bar.total != total:
                bar.total = total
            bar.n = done
            bar.refresh()

        return whatif.sweep(a.spec, settings, a.out, progress)
