"""Glob patterns for search_files and excludePatterns: `*`, `?`, `[...]`, `{a,b}` and `**`.

`*` stays within one path component, `**` spans any number of them, and dot files are
matched like any other. A pattern without a `/` is matched against the entry's name (so
`*.py` finds Python files at any depth); a pattern with a `/` is matched against the path
relative to the directory searched.

Matching cannot backtrack. A pattern compiles to a small automaton with one state per
pattern element (Thompson's construction); matching follows every possible state at once
and caches each set of states it meets as one step of a deterministic automaton, built
lazily as input arrives (the technique of RE2). Each input character costs one dictionary
look-up once warm, at most one pass over the pattern's states when not, so the time is
linear in the input whatever the pattern: `*?*?*?*?*?*?*?*?*?*?*?#` against a 34-character
name takes microseconds, where a backtracking regex engine takes seconds and triples with
every extra `*?`.

Must not import anything of the server.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_PATTERN_CHARS = 1024
MAX_BRACE_DEPTH = 16
MAX_CACHED_STEPS = 50_000

# node kinds
_CHAR, _ANY_BUT_SLASH, _ANY, _CLASS, _SPLIT, _MATCH = range(6)


class GlobError(ValueError):
    """The pattern cannot be used (too long, too deeply nested)."""


class _Automaton:
    """Nodes of a non-deterministic automaton; node 0 is the match state."""

    def __init__(self) -> None:
        self.kind: list[int] = [_MATCH]
        self.arg: list[object] = [None]
        self.next: list[int] = [-1]
        self.alt: list[int] = [-1]

    def add(self, kind: int, arg: object = None, next_node: int = -1, alt: int = -1) -> int:
        self.kind.append(kind)
        self.arg.append(arg)
        self.next.append(next_node)
        self.alt.append(alt)
        return len(self.kind) - 1

    def loop(self, kind: int, then: int) -> int:
        """`kind` repeated any number of times, then `then`."""
        split = self.add(_SPLIT, None, -1, then)
        self.next[split] = self.add(kind, None, split)
        return split


def _split_braces(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in body:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += char == "{"
        depth -= char == "}"
        current.append(char)
    parts.append("".join(current))
    return parts


def _closing(pattern: str, start: int) -> int:
    depth = 0
    for index in range(start, len(pattern)):
        if pattern[index] == "{":
            depth += 1
        elif pattern[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _class_of(body: str) -> tuple[bool, tuple[tuple[str, str], ...]]:
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    ranges: list[tuple[str, str]] = []
    index = 0
    while index < len(body):
        if index + 2 < len(body) and body[index + 1] == "-":
            ranges.append((body[index], body[index + 2]))
            index += 3
        else:
            ranges.append((body[index], body[index]))
            index += 1
    return negate, tuple(ranges)


def _compile(pattern: str, then: int, nfa: _Automaton, depth: int) -> int:
    """Add `pattern` to `nfa` so that it continues with node `then`; return its first node."""
    if depth > MAX_BRACE_DEPTH:
        raise GlobError(f"braces nested more than {MAX_BRACE_DEPTH} deep")
    elements: list[Callable[[int], int]] = []
    index, size = 0, len(pattern)
    while index < size:
        char = pattern[index]
        whole_component = (pattern.startswith("**", index) and (index == 0 or pattern[index - 1] == "/")
                           and (index + 2 == size or pattern[index + 2] == "/"))
        if whole_component and index + 2 < size:  # `**/`: nothing, or anything ending with `/`
            def any_dirs(then: int) -> int:
                inner = nfa.add(_SPLIT, None, -1, nfa.add(_CHAR, "/", then))
                nfa.next[inner] = nfa.add(_ANY, None, inner)
                return nfa.add(_SPLIT, None, inner, then)
            elements.append(any_dirs)
            index += 3
        elif whole_component:  # `**` at the end: anything
            elements.append(lambda then: nfa.loop(_ANY, then))
            index += 2
        elif char == "*":
            elements.append(lambda then: nfa.loop(_ANY_BUT_SLASH, then))
            index += 1
        elif char == "?":
            elements.append(lambda then: nfa.add(_ANY_BUT_SLASH, None, then))
            index += 1
        elif char == "[" and (end := pattern.find("]", index + 2)) > 0:
            klass = _class_of(pattern[index + 1 : end])
            elements.append(lambda then, klass=klass: nfa.add(_CLASS, klass, then))  # type: ignore[misc]
            index = end + 1
        elif char == "{" and (end := _closing(pattern, index)) > 0:
            alternatives = _split_braces(pattern[index + 1 : end])

            def either(then: int, alternatives: list[str] = alternatives) -> int:
                starts = [_compile(alternative, then, nfa, depth + 1) for alternative in alternatives]
                first = starts[-1]
                for start in reversed(starts[:-1]):
                    first = nfa.add(_SPLIT, None, start, first)
                return first
            elements.append(either)
            index = end + 1
        else:
            elements.append(lambda then, char=char: nfa.add(_CHAR, char, then))  # type: ignore[misc]
            index += 1
    start = then
    for element in reversed(elements):
        start = element(start)
    return start


class GlobPattern:
    """One compiled glob pattern; `fold` maps names before comparing (case, Unicode form)."""

    def __init__(self, pattern: str, fold: Callable[[str], str] | None = None) -> None:
        cleaned = pattern.strip().removeprefix("./").lstrip("/")
        if len(cleaned) > MAX_PATTERN_CHARS:
            raise GlobError(f"the pattern is {len(cleaned)} characters long; the limit is {MAX_PATTERN_CHARS}")
        self.pattern = pattern
        self.by_name = "/" not in cleaned.rstrip("/")
        self._fold = fold
        body = cleaned.rstrip("/") or "*"
        self._nfa = _Automaton()
        start = _compile(fold(body) if fold else body, 0, self._nfa, 0)
        self._states: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._accepting: list[bool] = []
        self._steps: list[dict[str, int]] = []  # per state: character -> next state
        self._cached = 0
        self._start_set = self._closure([start])
        self._start = self._state(self._start_set)

    def _closure(self, nodes: list[int]) -> frozenset[int]:
        """The nodes reachable from `nodes` without consuming input (the consuming ones and the match)."""
        kind, nxt, alt = self._nfa.kind, self._nfa.next, self._nfa.alt
        seen: set[int] = set()
        out: set[int] = set()
        stack = list(nodes)
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if kind[node] == _SPLIT:
                stack.append(nxt[node])
                stack.append(alt[node])
            else:
                out.add(node)
        return frozenset(out)

    def _state(self, nodes: frozenset[int]) -> int:
        state = self._states.get(nodes)
        if state is None:
            state = self._states[nodes] = len(self._sets)
            self._sets.append(nodes)
            self._accepting.append(0 in nodes)
            self._steps.append({})
        return state

    def _step(self, state: int, char: str) -> int:
        kind, arg, nxt = self._nfa.kind, self._nfa.arg, self._nfa.next
        targets: list[int] = []
        for node in self._sets[state]:
            node_kind = kind[node]
            if node_kind == _CHAR:
                accepted = arg[node] == char
            elif node_kind == _ANY_BUT_SLASH:
                accepted = char != "/"
            elif node_kind == _ANY:
                accepted = True
            elif node_kind == _CLASS:
                klass: tuple[bool, tuple[tuple[str, str], ...]] = arg[node]  # type: ignore[assignment]
                negate, ranges = klass
                inside = any(low <= char <= high for low, high in ranges)
                accepted = (not inside and char != "/") if negate else inside
            else:
                accepted = False
            if accepted:
                targets.append(nxt[node])
        self._cached += 1
        if self._cached >= MAX_CACHED_STEPS:  # bounded memory: start the cache afresh
            self._cached = 0
            self._states.clear()
            self._sets.clear()
            self._accepting.clear()
            self._steps.clear()
            self._start = self._state(self._start_set)
            return self._state(self._closure(targets))
        following = self._state(self._closure(targets))
        self._steps[state][char] = following
        return following

    def _full_match(self, text: str) -> bool:
        steps, sets = self._steps, self._sets
        state = self._start
        for char in text:
            following = steps[state].get(char)
            state = self._step(state, char) if following is None else following
            if not sets[state]:
                return False  # no pattern state left alive: no suffix can match
        return self._accepting[state]

    def matches(self, relative_path: str) -> bool:
        """True when the entry at `relative_path` (relative, `/`-separated) matches."""
        target = relative_path.rsplit("/", 1)[-1] if self.by_name else relative_path
        return self._full_match(self._fold(target) if self._fold else target)


def any_match(patterns: list[GlobPattern], relative_path: str) -> bool:
    """True when at least one of `patterns` matches."""
    return any(pattern.matches(relative_path) for pattern in patterns)
