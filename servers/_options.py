"""Command-line value types shared by the reference servers."""

from __future__ import annotations

import argparse


def positive_seconds(text: str) -> float:
    """argparse type: a number of seconds greater than zero."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value
