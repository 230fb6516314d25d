"""Run every benchmark module (or those named on the command line) and print a table.

Each benchmarks/bench_<area>.py exposes ``run() -> list[Figure]``; a figure carries the
measured value, the target and whether it meets it. Exit code 0 always: benchmarks
report, tests decide.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks
from benchmarks.common import Figure


def main(names: list[str]) -> int:
    modules = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                     if m.name.startswith("bench_"))
    if names:
        modules = [m for m in modules if any(n in m for n in names)]
    figures: list[Figure] = []
    for name in modules:
        t0 = time.perf_counter()
        print(f"== {name}", flush=True)
        for fig in importlib.import_module(f"benchmarks.{name}").run():
            print("   " + fig.line(), flush=True)
            figures.append(fig)
        print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)
    met = sum(f.meets for f in figures)
    print(f"\nbenchmarks: {met} of {len(figures)} figures meet their targets")
    for f in figures:
        if not f.meets:
            print("   MISSED " + f.line())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
