"""Command-line options of python -m servers.weather."""

from __future__ import annotations

import pytest

from servers.weather.__main__ import parse_args
from servers.weather.live_provider import LiveProvider
from servers.weather.providers import WeatherProvider, make_provider
from servers.weather.sample_provider import SampleProvider


def test_defaults_are_live_provider_and_five_minute_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEATHER_PROVIDER", raising=False)
    monkeypatch.delenv("WEATHER_POLL_INTERVAL", raising=False)
    args = parse_args([])
    assert (args.provider, args.poll_interval, args.transport) == ("live", 300.0, "stdio")


def test_environment_sets_provider_and_poll_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEATHER_PROVIDER", "sample")
    monkeypatch.setenv("WEATHER_POLL_INTERVAL", "2.5")
    args = parse_args([])
    assert (args.provider, args.poll_interval) == ("sample", 2.5)
    assert parse_args(["--provider", "live", "--poll-interval", "0.2"]).poll_interval == 0.2


def test_invalid_values_are_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--poll-interval", "0"])
    with pytest.raises(SystemExit):
        parse_args(["--provider", "cloud"])
    assert "must be a positive number of seconds" in capsys.readouterr().err


@pytest.mark.anyio
async def test_make_provider_builds_both_kinds() -> None:
    sample, live = make_provider("sample"), make_provider("live")
    assert isinstance(sample, SampleProvider) and isinstance(live, LiveProvider)
    assert isinstance(sample, WeatherProvider) and isinstance(live, WeatherProvider)
    await live.aclose()
    with pytest.raises(ValueError, match="unknown provider"):
        make_provider("cloud")
