"""Read a process's CPU time and memory from /proc (Linux only)."""

from __future__ import annotations

import os
import time

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (all threads) in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        raw = handle.read()
    fields = raw[raw.rindex(b")") + 2 :].split()
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS) of `pid` in KiB, from /proc/PID/status."""
    result: dict[str, int] = {}
    with open(f"/proc/{pid}/status", "rb") as handle:
        for line in handle:
            if line.startswith((b"VmRSS:", b"VmHWM:")):
                key, value = line.split(b":", 1)
                result[key.decode()] = int(value.split()[0])
    return result


def rss_mib(pid: int) -> float:
    """Current resident set size in MiB."""
    return memory_kib(pid).get("VmRSS", 0) / 1024


def peak_rss_mib(pid: int) -> float:
    """Peak resident set size (VmHWM) in MiB."""
    return memory_kib(pid).get("VmHWM", 0) / 1024


NATIVE_MARKERS = {"uvloop": "/uvloop/loop.", "httptools": "/httptools/parser/"}


def native_modules(pid: int) -> dict[str, bool]:
    """Which of uvloop and httptools `pid` has mapped (their extension modules in /proc/PID/maps)."""
    with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as handle:
        maps = handle.read()
    return {name: marker in maps for name, marker in NATIVE_MARKERS.items()}


def check_native(pid: int, expected: dict[str, bool], settle_s: float = 15.0) -> dict[str, bool]:
    """The native modules `pid` loaded; raises RuntimeError when they are not the `expected` ones.

    A server may accept connections before it has imported everything (mcp_kit listens on its socket
    before uvicorn loads its HTTP protocol), so a module expected to be loaded is waited for, up to
    `settle_s` seconds (a loaded machine can take that long); then every expectation is checked.
    """
    deadline = time.monotonic() + settle_s
    loaded = native_modules(pid)
    while any(want and not loaded.get(name) for name, want in expected.items()) and time.monotonic() < deadline:
        time.sleep(0.05)
        loaded = native_modules(pid)
    wrong = [name for name, want in expected.items() if loaded.get(name) != want]
    if wrong:
        detail = ", ".join(f"{name} {'loaded' if loaded.get(name) else 'not loaded'}" for name in wrong)
        raise RuntimeError(f"event-loop variant not in effect: {detail} (expected {expected})")
    return loaded
