"""Small statistics helpers: percentiles of samples and median/min/max across repetitions."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Percentile by linear interpolation between closest ranks (`fraction` in 0..1)."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    position = fraction * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    weight = position - lower
    return ordered[lower] * (1 - weight) + ordered[upper] * weight


def summary(values: Sequence[float]) -> dict[str, float]:
    """Median, min and max of per-repetition values (NaNs dropped)."""
    clean = [v for v in values if not math.isnan(v)]
    if not clean:
        return {
            "median": float("nan"),
            "min": float("nan"),
            "max": float("nan"),
            "n": 0,
        }
    return {
        "median": statistics.median(clean),
        "min": min(clean),
        "max": max(clean),
        "n": len(clean),
    }
