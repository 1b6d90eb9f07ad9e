"""How a file name the OS hands us appears in results, and how a client's name maps back to it.

On POSIX a name is bytes. Python gives it to us as `str`, with every byte that is not valid
UTF-8 carried as a lone surrogate (U+DC80..U+DCFF, "surrogateescape"); such a string cannot
be encoded as JSON, so it must never reach a result as is. Names are therefore shown in a
*display form*:

- a name that is valid UTF-8, has no control character and no backslash is shown as it is;
- any other name is escaped: `\\` for a backslash, `\\xHH` for an undecodable byte or a
  control character, `\\uXXXX` for a lone UTF-16 surrogate (Windows).

`bad<0xff>.txt` is shown as `bad\\xff.txt`. The mapping is one to one, so the display form
is also how the client addresses the file again: `parse_name` turns it back into the OS name.
A client string without a backslash is always taken literally. On Windows a backslash
separates path components, so there only the display direction applies.

Must not import anything of the server (pure functions on strings).
"""

from __future__ import annotations

import re

_SURROGATE_BYTES = range(0xDC80, 0xDD00)  # surrogateescape: the undecodable byte 0xHH is U+DC00+HH
_NEEDS_ESCAPE = re.compile(r"[\x00-\x1f\x7f\\\ud800-\udfff]")
_ESCAPE = re.compile(r"\\(?:(\\)|x([0-9a-fA-F]{2})|u([dD][89a-fA-F][0-9a-fA-F]{2}))")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\\":
        return "\\\\"
    if code in _SURROGATE_BYTES:
        return f"\\x{code - 0xDC00:02x}"
    if code >= 0xD800:
        return f"\\u{code:04x}"
    return f"\\x{code:02x}"


def display_name(name: str) -> str:
    """The display form of an OS name: valid, printable Unicode that JSON can carry."""
    if _NEEDS_ESCAPE.search(name) is None:
        return name
    return _NEEDS_ESCAPE.sub(_escape_char, name)


def needs_escape(name: str) -> bool:
    """True when the display form of `name` differs from the name."""
    return _NEEDS_ESCAPE.search(name) is not None


def _unescape(match: re.Match[str]) -> str:
    backslash, byte, surrogate = match.groups()
    if backslash:
        return "\\"
    if byte is not None:
        value = int(byte, 16)
        return chr(0xDC00 + value) if value >= 0x80 else chr(value)
    return chr(int(surrogate, 16))


def parse_name(text: str) -> str:
    """The OS name a client means by `text` (the inverse of `display_name` on its results).

    Only `\\\\`, `\\xHH` and `\\uDXXX` (a surrogate) are escapes; any other backslash is kept, so
    a name such as `a\\b` typed by hand still reaches the file of that name.
    """
    if "\\" not in text:
        return text
    return _ESCAPE.sub(_unescape, text)


def parse_path(text: str, separator: str = "/") -> str:
    """The OS path a client means by `text`: each component parsed from its display form."""
    if "\\" not in text:
        return text
    return separator.join(parse_name(part) for part in text.split(separator))


def display_path(path: str, separator: str = "/") -> str:
    """The display form of a path: each component in its display form."""
    if not needs_escape(path.replace(separator, "")):
        return path
    return separator.join(display_name(part) for part in path.split(separator))
