"""Progress notifications as a bar on stderr: redrawn in place on a terminal; otherwise (a log, a pipe) a
line for the first update, at most one a second after it, and the last one, so a tool reporting every
item does not flood the log."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

BAR_WIDTH = 30
LINE_INTERVAL = 1.0  # seconds between two progress lines when stderr is not a terminal


class StderrReporter:
    """Draws progress and prints log lines without the two trampling each other."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self._bar_shown = False
        self._clock = clock
        self._last_line: float | None = None  # when the last progress line was written (not a terminal)
        self._pending: str | None = None  # an update not written yet: written when the call ends

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        text = render_bar(progress, total, message)
        if self.interactive:
            self.stream.write("\r\x1b[2K" + text)
            self._bar_shown = True
            self.stream.flush()
            return
        now = self._clock()
        final = bool(total) and progress >= (total or 0)
        if final or self._last_line is None or now - self._last_line >= LINE_INTERVAL:
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last_line, self._pending = now, None
        else:
            self._pending = text

    def line(self, text: str) -> None:
        """Print a whole line (a log message), keeping the bar below it."""
        self.end_bar()
        self.stream.write(text + "\n")
        self.stream.flush()

    def end_bar(self) -> None:
        if self._pending is not None:  # the latest state, which the throttle held back
            self.stream.write(self._pending + "\n")
            self.stream.flush()
            self._pending = None
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
