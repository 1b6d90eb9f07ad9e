"""Progress notifications as a bar on stderr (redrawn in place on a terminal, one line each otherwise)."""

from __future__ import annotations

import sys
from typing import TextIO

BAR_WIDTH = 30


class StderrReporter:
    """Draws progress and prints log lines without the two trampling each other."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self._bar_shown = False

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        text = render_bar(progress, total, message)
        if self.interactive:
            self.stream.write("\r\x1b[2K" + text)
            self._bar_shown = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def line(self, text: str) -> None:
        """Print a whole line (a log message), keeping the bar below it."""
        self.end_bar()
        self.stream.write(text + "\n")
        self.stream.flush()

    def end_bar(self) -> None:
        if self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
            self._bar_shown = False


def render_bar(progress: float, total: float | None, message: str | None) -> str:
    """`[#######.......]  50% message`, or `progress 3 message` when the total is unknown."""
    suffix = f" {message}" if message else ""
    if not total or total <= 0:
        return f"progress {progress:g}{suffix}"
    fraction = min(max(progress / total, 0.0), 1.0)
    filled = round(fraction * BAR_WIDTH)
    return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {fraction * 100:3.0f}%{suffix}"
