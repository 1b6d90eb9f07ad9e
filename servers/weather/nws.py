"""US National Weather Service (api.weather.gov) alerts: request and response parsing."""

from __future__ import annotations

from typing import Any

from .models import Alert, Place

ALERTS_URL = "https://api.weather.gov/alerts/active"
DEFAULT_USER_AGENT = "mcp-kit-weather/0.1 (reference MCP server; set WEATHER_USER_AGENT to add contact details)"


def point_params(place: Place) -> dict[str, str]:
    """Query for alerts covering a point."""
    return {"point": f"{place.latitude:.4f},{place.longitude:.4f}"}


def area_params(state_code: str) -> dict[str, str]:
    """Query for alerts in a state or territory (postal code, e.g. 'FL')."""
    return {"area": state_code}


def parse_alerts(body: dict[str, Any]) -> list[Alert]:
    """The features of an alerts FeatureCollection as Alert records (old and new NWS schemas)."""
    alerts = []
    for feature in body.get("features") or []:
        props = feature.get("properties") or {}
        alerts.append(
            Alert(
                event=props.get("event") or "Unknown event",
                severity=props.get("severity"),
                urgency=props.get("urgency"),
                certainty=props.get("certainty"),
                headline=props.get("headline"),
                description=props.get("description"),
                instruction=props.get("instruction"),
                area=props.get("areaDesc"),
                effective=props.get("effective"),
                onset=props.get("onset"),
                expires=props.get("expires"),
                ends=props.get("ends"),
                sender=props.get("senderName"),
            )
        )
    return alerts
