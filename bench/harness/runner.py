"""Running measurements: one server's failure recorded (with its stderr tail) instead of stopping the run,
samples collected per implementation, implementations interleaved, and what goes into every results file.
"""

from __future__ import annotations

import logging
import math
import os
import platform
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import codec, implementations

logger = logging.getLogger("bench")


class Run:
    """Collects samples and errors of one benchmark run."""

    def __init__(
        self, impls: list[implementations.Implementation], log_dir: Path
    ) -> None:
        self.impls = impls
        self.log_dir = log_dir
        self.samples: dict[str, dict[str, list[float]]] = {
            impl.name: {} for impl in impls
        }
        self.extra: dict[str, dict[str, list[Any]]] = {impl.name: {} for impl in impls}
        self.errors: list[dict[str, Any]] = []
        self.phase_seconds: list[dict[str, Any]] = []

    def record(self, impl: str, prefix: str, figures: dict[str, Any]) -> None:
        """Store one repetition's figures under `prefix.key`."""
        for key, value in figures.items():
            target = self.samples if isinstance(value, (int, float)) else self.extra
            target[impl].setdefault(f"{prefix}.{key}", []).append(value)

    def attempt(
        self,
        impl: implementations.Implementation,
        phase: str,
        rep: int,
        action: Callable[[Any], Any],
    ) -> Any:
        """Run one measurement with its server's stderr in a log file; record (not raise) failures."""
        log_path = self.log_dir / f"{impl.name}-{phase}-r{rep}.log"
        started = time.monotonic()
        try:
            with open(log_path, "wb") as stderr:
                result = action(stderr)
        except Exception as exc:  # noqa: BLE001 - a failing server must not stop the run
            tail = (
                log_path.read_text(errors="replace").strip().splitlines()[-5:]
                if log_path.exists()
                else []
            )
            self.errors.append(
                {
                    "impl": impl.name,
                    "phase": phase,
                    "rep": rep,
                    "error": f"{type(exc).__name__}: {exc}",
                    "stderr_tail": tail,
                }
            )
            logger.error(
                "%s %s rep %d failed: %s: %s",
                impl.name,
                phase,
                rep,
                type(exc).__name__,
                exc,
            )
            for line in tail:
                logger.error("    %s", line)
            logger.debug("%s", traceback.format_exc())
            return None
        seconds = time.monotonic() - started
        self.phase_seconds.append(
            {
                "impl": impl.name,
                "phase": phase,
                "rep": rep,
                "seconds": round(seconds, 3),
            }
        )
        logger.info("  %-8s %-10s rep %d  %.1f s", impl.name, phase, rep, seconds)
        return result


def rotated(items: list[Any], shift: int) -> list[Any]:
    """`items` rotated left by `shift` (varies who runs first in each repetition)."""
    if not items:
        return items
    shift %= len(items)
    return items[shift:] + items[:shift]


def without_nan(value: Any) -> Any:
    """Copy of `value` with NaN/inf floats replaced by None (strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: without_nan(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_nan(item) for item in value]
    return value


def git_commit() -> str:
    """The repository's HEAD commit, with `+changes` when mcp_kit/ or bench/ have uncommitted edits ('' if unknown)."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(implementations.REPO_DIR), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(implementations.REPO_DIR), "status", "--porcelain", "--",
                                "mcp_kit", "bench"], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+changes" if dirty.strip() else "")


def machine_info() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "commit": git_commit(),
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "client_json_codec": codec.CODEC_NAME,
    }


