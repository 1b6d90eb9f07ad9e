"""Weather errors: what went wrong, said in a way a model can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import Place


class WeatherError(Exception):
    """Base class; str(error) is the message shown to the model."""


class PlaceNotFound(WeatherError):
    """No place matches the query; carries close matches when there are any."""

    def __init__(self, query: str, suggestions: list[Place] | None = None) -> None:
        self.query = query
        self.suggestions = list(suggestions or [])
        message = f"No place '{query}'."
        if self.suggestions:
            names = [_describe(p) for p in self.suggestions]
            listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
            message += f" Did you mean {listed}?"
        else:
            message += " Check the spelling, or use search_location to find the place."
        super().__init__(message)


def _describe(place: Place) -> str:
    """'Paris (France)'; US places also name their state: 'Paris (Texas, United States)'."""
    where = f"{place.region}, {place.country}" if place.region and place.country_code == "US" else place.country
    return f"{place.name} ({where})"


class SourceError(WeatherError):
    """The upstream weather source failed; `retryable` says whether trying again may help."""

    retryable = False

    def __init__(self, message: str, *, retryable: bool | None = None, hint: str = "") -> None:
        if retryable is not None:
            self.retryable = retryable
        advice = "Retrying in a minute may help." if self.retryable else "Retrying the same request will not help."
        super().__init__(f"{message} {advice}" + (f" {hint}" if hint else ""))


class SourceTimeout(SourceError):
    """The source did not answer in time."""

    retryable = True


class SourceUnavailable(SourceError):
    """The source could not be reached or answered with a server error."""

    retryable = True


class SourceRejected(SourceError):
    """The source refused the request (HTTP 4xx); the reason it gave is in the message."""

    retryable = False


class InvalidRequest(WeatherError):
    """The caller asked for something outside what the source offers (e.g. a date out of range)."""
