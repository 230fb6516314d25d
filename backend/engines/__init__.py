"""Guard-rail engines: pure functions from a snapshot (and parameters) to results.

No I/O, no clocks, no Dash, no Spark: time and data come in as arguments.
"""
