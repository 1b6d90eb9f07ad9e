"""Function names for MCP tools from several servers: valid for each vendor, unique, and reversible.

    names = NameMap([("stock", "search"), ("weather", "search"), ("stock", "get_stock_price")], OPENAI_NAMES)
    names.exported("weather", "search")   -> "weather__search"   (two servers share the name: both prefixed)
    names.exported("stock", "get_stock_price") -> "get_stock_price"
    names.resolve("weather__search")      -> ("weather", "search")

A tool keeps its own name when that name is valid for the vendor and unique across servers. Names that
collide get their server as prefix (`prefix="always"` prefixes every name); characters the vendor forbids
become `_`; a name that is still too long, or that two tools would share after that, is cut and ends in
`_` plus 8 hex digits of a hash of (server, tool). When that hashed name is taken too (a tool may be
named exactly like another's hashed name), another hash of (server, tool) is tried, then numbered names:
every tool gets a name, whatever the other servers call theirs. `renamed` lists each hashed name with the
reason. Every choice depends on the set of tools only, never on their order, so the same servers give the
same names on every run; the map back is a lookup, not parsing.

Must not import anything from mcp_kit.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Prefix = Literal["auto", "always"]
HASH_LENGTH = 8
HASH_ATTEMPTS = 4  # hashes tried for one tool before numbered names


@dataclass(frozen=True)
class Renamed:
    """A tool that could not keep the name it wanted: what it is exported as instead, and why."""

    server: str
    tool: str
    name: str
    reason: str


@dataclass(frozen=True)
class NameRules:
    """What one vendor accepts as a function name."""

    vendor: str
    max_length: int
    allowed: str  # a regex character class: the characters a name may contain
    first: str | None = None  # a regex character class for the first character, when stricter

    def is_valid(self, name: str) -> bool:
        head = f"{self.first}" if self.first else self.allowed
        return re.fullmatch(f"{head}{self.allowed}{{0,{self.max_length - 1}}}", name) is not None

    def sanitize(self, name: str) -> str:
        """`name` with every forbidden character replaced by `_` (and a valid first character)."""
        clean = re.sub(f"(?!{self.allowed}).", "_", name, flags=re.S) or "_"
        if self.first and not re.match(self.first, clean):
            clean = "_" + clean
        return clean


# OpenAI (Chat Completions and Responses): ^[a-zA-Z0-9_-]{1,64}$
OPENAI_NAMES = NameRules("OpenAI", 64, "[A-Za-z0-9_-]")
# Anthropic Messages API: ^[a-zA-Z0-9_-]{1,128}$
ANTHROPIC_NAMES = NameRules("Anthropic", 128, "[A-Za-z0-9_-]")
# Gemini (Developer API and Vertex AI): a letter or underscore first, then letters, digits, _ . -; at most 64.
GEMINI_NAMES = NameRules("Gemini", 64, "[A-Za-z0-9_.-]", first="[A-Za-z_]")


class NameMap:
    """Exported function names for (server, tool) pairs under one vendor's rules, and the way back."""

    def __init__(self, tools: Iterable[tuple[str, str]], rules: NameRules, *, prefix: Prefix = "auto",
                 separator: str = "__") -> None:
        self.rules = rules
        pairs = list(dict.fromkeys(tools))
        servers_per_tool = Counter(tool for _, tool in pairs)
        wanted = {(server, tool): (f"{server}{separator}{tool}"
                                   if prefix == "always" or servers_per_tool[tool] > 1 else tool)
                  for server, tool in pairs}
        candidates = {pair: rules.sanitize(name) for pair, name in wanted.items()}
        holders: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
        for pair, name in candidates.items():
            holders[name].append(pair)
        kept = {pair: name for pair, name in candidates.items()
                if len(name) <= rules.max_length and len(holders[name]) == 1}
        taken = set(kept.values())
        given: dict[tuple[str, str], str] = {}
        self.renamed: list[Renamed] = []
        for pair in sorted(set(candidates) - set(kept)):  # sorted: the same names whatever the order of the tools
            name = candidates[pair]
            stem = name[: rules.max_length - HASH_LENGTH - 1]
            hashes = (f"{stem}_{_digest(*pair, attempt)}" for attempt in range(HASH_ATTEMPTS))
            numbered = (f"{stem}_{number:0{HASH_LENGTH}x}" for number in range(len(taken) + 1))  # one is free
            hashed = next(name for name in itertools.chain(hashes, numbered) if name not in taken)
            taken.add(hashed)
            given[pair] = hashed
            if len(name) > rules.max_length:
                why = f"is longer than the {rules.max_length} characters {rules.vendor} allows"
            else:
                others = [f"{server}/{tool}" for server, tool in holders[name] if (server, tool) != pair]
                why = f"would be {name!r}, as would {', '.join(others)}"
            if not hashed.endswith(_digest(*pair)):
                why += "; its hashed name was taken by another tool's name"
            self.renamed.append(Renamed(pair[0], pair[1], hashed, f"its name {why}; exported as {hashed!r}"))
        self._by_pair = {pair: kept.get(pair) or given[pair] for pair in pairs}
        self._by_name = {name: pair for pair, name in self._by_pair.items()}
        self._by_original = {tool: (server, tool) for server, tool in pairs if servers_per_tool[tool] == 1}

    def exported(self, server: str, tool: str) -> str:
        """The function name the model sees for `tool` of `server`."""
        return self._by_pair[(server, tool)]

    def resolve(self, name: str) -> tuple[str, str] | None:
        """The (server, tool) a function name stands for; also accepts a tool's own name when unambiguous."""
        return self._by_name.get(name) or self._by_original.get(name)

    @property
    def names(self) -> list[str]:
        """Every exported name, in the order the tools were given."""
        return list(self._by_pair.values())

    def items(self) -> list[tuple[str, tuple[str, str]]]:
        return list(self._by_name.items())


def _digest(server: str, tool: str, attempt: int = 0) -> str:
    """8 hex digits of a hash of (server, tool); `attempt` > 0 gives another one, for a name already taken."""
    text = f"{server}\0{tool}" + (f"\0{attempt}" if attempt else "")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LENGTH]
