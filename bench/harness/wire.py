"""Equal work on the wire: bytes per reply of each implementation, compared case by case.

Each measured case (an echo of "hello", a 1 MiB echo, resources/read, ...) records the mean bytes
per JSON-RPC response, the response ids not counted (they are the same requests' ids, but numbers
of different lengths). A row timed on a case may only be reported when every implementation sent the
same bytes; otherwise it is refused with the bytes of each. HTTP framing (headers, session ids,
SSE event ids and priming events, chunked encoding) is each transport's own and is recorded apart
(`wire_http_bytes`), not compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TOLERANCE_BYTES = 0.5  # bytes per reply are means of whole numbers: equal cases agree exactly


@dataclass(frozen=True)
class WireCheck:
    """Bytes per reply of each implementation for one case, and whether they agree."""

    case: str
    bytes_by_impl: dict[str, float]

    @property
    def measured(self) -> dict[str, float]:
        """The implementations that have a figure for this case."""
        return {name: value for name, value in self.bytes_by_impl.items() if not math.isnan(value)}

    @property
    def equal(self) -> bool:
        """True when every measured implementation sent the same bytes per reply."""
        values = list(self.measured.values())
        return not values or max(values) - min(values) <= TOLERANCE_BYTES

    def cell(self) -> str:
        """`94` when all agree, else each implementation's figure in column order: `94/133/174/94`."""
        values = self.measured
        if not values:
            return "-"
        if self.equal:
            return f"{next(iter(values.values())):.0f}"
        return "/".join(f"{value:.0f}" for value in values.values())

    def named(self) -> str:
        """`mcp_kit 94, sdk 133, ...`."""
        return ", ".join(f"{name} {value:.0f}" for name, value in self.measured.items())

    def refusal(self, label: str) -> str:
        """The message for a row that is not reported."""
        return f"REFUSED {label}: bytes per reply differ ({self.named()}); the implementations did unequal work"


def check(case: str, summary: dict[str, dict[str, dict[str, float]]], order: list[str]) -> WireCheck:
    """Compare the medians of `case` across `order`."""
    return WireCheck(
        case,
        {name: summary.get(name, {}).get(case, {}).get("median", math.nan) for name in order},
    )
