"""A server's command line as an argv list, split and shown the way the user's system does it.

On Linux and macOS a string is split as a POSIX shell would (`shlex`). On Windows, where
`C:\\Program Files\\Python311\\python.exe` must keep its backslashes, it is split by the rules of
the Microsoft C runtime that every Windows program applies to its own command line: whitespace
separates arguments outside double quotes, and backslashes are literal except before a quote.

Must not import: anything outside the standard library.
"""

from __future__ import annotations

import shlex
import subprocess
import sys


def split_command(command: str, platform: str | None = None) -> list[str]:
    """`command` as argv, split by the rules of `platform` (a `sys.platform` value; this system's by default)."""
    if (platform or sys.platform) == "win32":
        return split_windows_command(command)
    return shlex.split(command)


def join_command(argv: list[str], platform: str | None = None) -> str:
    """`argv` as one line the same system would split back into it."""
    if (platform or sys.platform) == "win32":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def split_windows_command(command: str) -> list[str]:
    """Split like the Microsoft C runtime: 2n backslashes before a quote are n and the quote opens or
    closes a quoted part; 2n+1 are n and a literal quote; `""` inside quotes is a literal quote."""
    args: list[str] = []
    current: list[str] = []
    in_arg = in_quotes = False
    index, end = 0, len(command)
    while index < end:
        char = command[index]
        if char == "\\":
            run_end = index
            while run_end < end and command[run_end] == "\\":
                run_end += 1
            count = run_end - index
            if run_end < end and command[run_end] == '"':
                current.append("\\" * (count // 2))
                if count % 2:
                    current.append('"')
                    run_end += 1
            else:
                current.append("\\" * count)
            index, in_arg = run_end, True
        elif char == '"':
            if in_quotes and command[index + 1:index + 2] == '"':
                current.append('"')
                index += 2
            else:
                in_quotes = not in_quotes
                index += 1
            in_arg = True
        elif char in " \t" and not in_quotes:
            if in_arg:
                args.append("".join(current))
                current, in_arg = [], False
            index += 1
        else:
            current.append(char)
            in_arg = True
            index += 1
    if in_arg:
        args.append("".join(current))
    return args
