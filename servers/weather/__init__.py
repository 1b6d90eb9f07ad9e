"""Weather reference server: current conditions, forecasts, alerts and place search for any city."""
