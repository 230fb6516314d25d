"""Byte rates in words, one way for the services' one-line refusals and the pages' charts
and cards (components.charts hands this rate_text on)."""

from __future__ import annotations


def rate_text(bytes_per_second: float) -> str:
    """A byte rate as people read it: 950 B/s, 12.3 kB/s, 1 MB/s, 2.5 GB/s, 2 TB/s, never
    with an exponent: 2,000,000 MB/s typed into a MB/s field read "2e+03 GB/s", and
    999,600 B/s "1e+03 kB/s" (rounded to 3 digits first, so it reads 1 MB/s)."""
    rounded = float(f"{bytes_per_second:.3g}")
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(rounded) >= scale:
            shown = rounded / scale  # past 999 only in TB/s: 2,000 TB/s
            return f"{shown:,.0f} {prefix}B/s" if abs(shown) >= 1000 else \
                f"{shown:,.3g} {prefix}B/s"
    return f"{bytes_per_second:,.0f} B/s"
