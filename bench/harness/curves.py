"""What a scaling curve is: its x values, the figures taken at each, its targets, and how it is charted.

A curve's `measure(impl, settings, stderr)` takes one repetition for one implementation and returns
flat figures named `<figure>@<x>` (for example `first_page_ms@5000`). `bench/scaling.py` interleaves
the implementations within each repetition and keeps the median over repetitions. Nothing here
measures; the curve modules (`curve_*.py`) do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from .implementations import Implementation

Summary = dict[str, dict[str, dict[str, float]]]  # impl -> "figure@x" -> {"median", "min", "max", "n"}


def key(figure: str, x: float | str) -> str:
    """The sample name of `figure` at `x`."""
    return f"{figure}@{x:g}" if isinstance(x, (int, float)) else f"{figure}@{x}"


@dataclass(frozen=True)
class Figure:
    """One figure taken at every x of a curve (a group of table rows, one panel of the chart)."""

    name: str
    label: str
    unit: str
    lower_is_better: bool
    wire: str | None = None  # figure holding the bytes per reply of the timed requests
    exact: bool = True  # refuse the row when those bytes differ between implementations
    chart: bool = True  # drawn as a panel of the curve's chart
    log_y: bool = False
    unsupported: dict[str, str] = field(default_factory=dict)  # framework -> why it has no such figure
    x_label: str | None = None  # the chart's x axis when it differs from the curve's


@dataclass(frozen=True)
class Target:
    """A target of the issue, judged on the medians of one run: `measured(value) -> number`, `passes(number)`."""

    figure: str
    x: float | str | None  # None: the curve's last x (quick runs stop earlier than full ones)
    requirement: str
    measured: Callable[[Callable[[str, str, float | str], float], str, float | str], float]
    passes: Callable[[float], bool]
    shown: Callable[[float], str]
    needs: tuple[str, ...] = ()  # peers the target compares against (their figures must be present)
    line: float | None = None  # a bound on the figure itself, drawn on the chart


@dataclass
class Curve:
    """One scaling curve."""

    name: str
    title: str
    x_label: str
    xs: Callable[[dict[str, Any]], list[float | str]]
    figures: list[Figure]
    settings: dict[str, dict[str, Any]]  # mode -> settings
    measure: Callable[[Implementation, dict[str, Any], IO[bytes]], dict[str, float]]
    command: str
    unsupported: dict[str, str] = field(default_factory=dict)  # framework -> why it has no figures here
    targets: list[Target] = field(default_factory=list)
    log_x: bool = True
    notes: list[str] = field(default_factory=list)
    transports: tuple[str, ...] = ("stdio",)

    def supports(self, impl: Implementation) -> bool:
        """Whether `impl` is measured on this curve."""
        return impl.base not in self.unsupported and all(t in impl.transports for t in self.transports)


def median_of(summary: Summary, impl: str, name: str) -> float:
    """The median of sample `name` for `impl`, NaN when absent."""
    return summary.get(impl, {}).get(name, {}).get("median", math.nan)


# ------------------------------------------------------------------ target builders


def _number(value: float) -> str:
    """Three significant figures without an exponent (1,234 rather than 1.23e+03)."""
    if math.isnan(value):
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _fmt(value: float, unit: str) -> str:
    return "-" if math.isnan(value) else f"{_number(value)} {unit}".strip()


def at_most(figure: str, x: float | str | None, bound: float, unit: str) -> Target:
    """The baseline's figure at x is at most `bound`."""
    return Target(
        figure,
        x,
        f"<= {bound:g} {unit}".strip(),
        lambda get, base, at: get(base, figure, at),
        lambda value: value <= bound,
        lambda value: _fmt(value, unit),
        line=bound,
    )


def ratio_to_peer(figure: str, x: float | str | None, peer: str, factor: float, higher: bool) -> Target:
    """baseline / peer at x is at least `factor` (`higher`) or at most `factor`."""
    requirement = f">= {factor:g}x {peer}" if higher else f"<= {factor:g}x {peer}"
    return Target(
        figure,
        x,
        requirement,
        lambda get, base, at: get(base, figure, at) / get(peer, figure, at),
        (lambda value: value >= factor) if higher else (lambda value: value <= factor),
        lambda value: f"{_number(value)}x {peer}" if not math.isnan(value) else "-",
        needs=(peer,),
    )


def peer_plus(figure: str, x: float | str | None, peer: str, offset: float, unit: str) -> Target:
    """The baseline's figure at x is at most the peer's plus `offset`."""
    return Target(
        figure,
        x,
        f"<= {peer} + {offset:g} {unit}",
        lambda get, base, at: get(base, figure, at) - get(peer, figure, at),
        lambda value: value <= offset,
        lambda value: f"{peer} {'+' if value >= 0 else ''}{_number(value)} {unit}" if not math.isnan(value) else "-",
        needs=(peer,),
    )


def against_own(figure: str, x: float | str, x0: float | str, factor: float) -> Target:
    """The baseline's figure at x is at most `factor` times its figure at x0."""
    return Target(
        figure,
        x,
        f"<= {factor:g}x its value at {x0}",
        lambda get, base, at: get(base, figure, at) / get(base, figure, x0),
        lambda value: value <= factor,
        lambda value: f"{_number(value)}x" if not math.isnan(value) else "-",
    )
