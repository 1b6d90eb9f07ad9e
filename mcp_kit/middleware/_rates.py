"""Rates: how a rate limit is written (`10/s`, `5/m`, `100/15m`, with an optional burst `10/s:20`) and read.

A rate of N per window is a token bucket refilled at N / window tokens per second, holding at
most `burst` tokens (N unless given): a caller idle for a window can make `burst` requests at once.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)?\s*([smhd])\s*(?::\s*(\d+(?:\.\d+)?))?\s*$")


@dataclass(frozen=True)
class Rate:
    """`count` requests per `window` seconds, in bursts of at most `burst`."""

    count: float
    window: float
    burst: float

    def __post_init__(self) -> None:
        if self.count <= 0 or self.window <= 0 or self.burst < 1:
            raise ValueError(f"a rate needs a count and a window above 0 and a burst of at least 1, not {self}")

    @property
    def per_second(self) -> float:
        return self.count / self.window

    def __str__(self) -> str:
        window = next((f"{_number(self.window / seconds)}{unit}" if self.window != seconds else unit
                       for unit, seconds in reversed(UNITS.items()) if self.window % seconds == 0),
                      f"{_number(self.window)}s")
        burst = f":{_number(self.burst)}" if self.burst != self.count else ""
        return f"{_number(self.count)}/{window}{burst}"


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def parse_rate(text: str, burst: float | None = None) -> Rate:
    """`10/s`, `5/m`, `100/15m`, `2.5/s`, `10/s:20` (burst 20); `burst` applies when the text has none.

    ValueError saying what is wrong for anything else.
    """
    match = _RATE.match(text)
    if match is None:
        raise ValueError(f"invalid rate {text!r}: write COUNT/WINDOW[:BURST], e.g. 10/s, 5/m, 100/15m, 10/s:20 "
                         "(windows in s, m, h or d)")
    count, multiple, unit, given_burst = match.groups()
    window = float(multiple or 1) * UNITS[unit]
    chosen = float(given_burst) if given_burst is not None else burst if burst is not None else float(count)
    return Rate(float(count), window, max(1.0, chosen) if given_burst is None and burst is None else chosen)


def parse_limit(text: str, burst: float | None = None) -> tuple[str | None, Rate]:
    """`[TARGET=]RATE`: the target (a tool name, or a method such as `resources/read`), None for the default."""
    target, equals, rate = text.rpartition("=")
    if equals and not target.strip():
        raise ValueError(f"invalid rate limit {text!r}: name a tool or method before '=', e.g. search=5/m")
    return (target.strip() or None), parse_rate(rate, burst)
