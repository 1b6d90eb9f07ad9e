"""Parameter types shared by the weather server's tools, resource templates and prompts.

One definition of each parameter's constraints: mcp_kit validates a resource template's URI
variables exactly like tool arguments, so `weather://current/{city}` refuses what `get_weather`
refuses (over 120 characters, `/`, backslashes, `..`, control characters, percent signs) before
any call to the geocoder or the forecast source.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

CITY_MAX_LENGTH = 120
# Any characters (Chinese names included) but / \\ % and control characters; dots only between other
# characters or at the end ('St. Louis', 'Washington D.C.'), never '..' or a leading dot.
CITY_PATTERN = r"^[^./\\%\x00-\x1f\x7f]+(?:\.[^./\\%\x00-\x1f\x7f]+)*\.?$"

CityName = Annotated[str, Field(min_length=1, max_length=CITY_MAX_LENGTH, pattern=CITY_PATTERN)]
"""A place name's constraints alone (for arguments that describe themselves)."""

City = Annotated[CityName, Field(
    description=(
        "City name in English or Chinese, optionally followed by a comma and a country code, country "
        "or US state: 'Paris', 'Paris, FR', 'Paris, Texas', '北京', 'San Francisco, CA'."
    ),
)]
"""A city argument or template variable."""

ForecastDate = Annotated[str, Field(
    max_length=10,
    pattern=r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|today|tomorrow)$",
    description="A local date, YYYY-MM-DD, or 'today' or 'tomorrow' (up to 15 days ahead).",
)]
"""The day of a forecast."""
