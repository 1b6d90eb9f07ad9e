"""The weather provider interface and its two implementations (sample and live)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .models import Alert, CurrentWeather, Forecast, Place, Resolution, Unit
from .sample_provider import SampleProvider

if TYPE_CHECKING:
    from .live_provider import LiveProvider

__all__ = ["WeatherProvider", "SampleProvider", "LiveProvider", "make_provider"]


@runtime_checkable
class WeatherProvider(Protocol):
    """What the server needs from a weather source. Errors are WeatherError subclasses."""

    source: str          # stated in results: "sample" or "open-meteo"
    alerts_source: str   # "sample" or "nws"

    async def search(self, query: str, limit: int = 5) -> list[Place]: ...

    async def resolve(self, query: str) -> Resolution: ...

    async def current(self, place: Place, unit: Unit) -> CurrentWeather: ...

    async def forecast(self, place: Place, days: int, unit: Unit, hours: int = 0) -> Forecast: ...

    async def alerts(self, *, place: Place | None = None, state_code: str | None = None) -> list[Alert]: ...

    def now(self) -> datetime: ...

    async def aclose(self) -> None: ...


def make_provider(name: str) -> WeatherProvider:
    """'sample' or 'live' -> a provider instance."""
    if name == "sample":
        return SampleProvider()
    if name == "live":
        from .live_provider import LiveProvider

        return LiveProvider()
    raise ValueError(f"unknown provider {name!r}; expected 'live' or 'sample'")


def __getattr__(name: str) -> Any:
    if name == "LiveProvider":  # imported when first asked for: it brings httpx, which the sample provider never needs
        from .live_provider import LiveProvider

        return LiveProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
