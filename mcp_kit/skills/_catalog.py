"""The skills a server serves (SEP-2640): entries, files, directories, pages, lookups.

A catalog is built from directories of Agent Skills (`add_directory`). Every directory holding a
`SKILL.md` is a skill; its path below the directory given (after an optional organisational
`prefix`) is its `<skill-path>`, so `skills/acme/refunds/SKILL.md` becomes
`skill://acme/refunds/SKILL.md`. Each file of a skill is a resource `skill://<skill-path>/<file>`;
each directory, skill roots and organisational prefixes included, is a directory resource
(`inode/directory`) that `resources/directory/read` lists.

The catalog is a snapshot: files are read once, hashed once, and served from memory, so what
`resources/read` returns always matches the digest and size `skills/list` announced. A later
`add_directory` builds new indexes and swaps them in whole. The limits of SEP-2640 (512 files and
16 MiB per skill) and overall bounds are checked while reading.

Answers are plain data: entries and resource definitions as JSON-ready dicts, unknown skills as
`SkillNotFound` (-32602). Protocol-era details (cache attributes, error codes of `resources/read`)
belong to the caller.

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import mimetypes
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from .._primitives.cursors import decode_cursor, encode_cursor, invalid_cursor
from ._errors import SkillError, SkillNotFound
from ._frontmatter import FrontmatterError, frontmatter_problems, parse_frontmatter, split_frontmatter
from ._scan import ScanError, ScanLimits, scan_tree

logger = logging.getLogger("mcp_kit.skills")

EXTENSION_ID = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
SCHEME = "skill"
DIRECTORY_MIME_TYPE = "inode/directory"
MARKDOWN_MIME_TYPE = "text/markdown"
MAX_FILES_PER_SKILL = 512
MAX_BYTES_PER_SKILL = 16 * 1024 * 1024

_SEGMENT = re.compile(r"^[A-Za-z0-9._~!$&'()*+,;=-]+$")  # a URI segment (and reg-name) needing no encoding
_SAFE = "-._~!$&'()*+,;=:@"
_TEXT_TYPES = ("application/json", "application/yaml", "application/toml", "application/xml",
               "application/javascript", "image/svg+xml")
_MIME_TYPES = {".md": MARKDOWN_MIME_TYPE, ".markdown": MARKDOWN_MIME_TYPE, ".py": "text/x-python",
               ".txt": "text/plain", ".json": "application/json", ".yaml": "application/yaml",
               ".yml": "application/yaml", ".toml": "application/toml", ".csv": "text/csv",
               ".sh": "text/x-shellscript", ".html": "text/html", ".xml": "application/xml"}
_DEFAULT_MIME = mimetypes.MimeTypes()  # the standard library's built-in table, not the system's files


@dataclass(frozen=True, slots=True)
class SkillLimits:
    """Per-skill limits (SEP-2640's, by default) and bounds on the whole catalog."""

    max_files_per_skill: int = MAX_FILES_PER_SKILL
    max_bytes_per_skill: int = MAX_BYTES_PER_SKILL
    max_skills: int = 1000
    max_total_files: int = 10_000
    max_total_bytes: int = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill, held in memory with its digest."""

    uri: str
    name: str
    mime_type: str
    data: bytes
    digest: str

    @property
    def size(self) -> int:
        return len(self.data)

    def manifest_entry(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": self.size}

    def resource(self) -> dict[str, Any]:
        """Its `Resource` definition (as `resources/directory/read` lists it)."""
        return {"uri": self.uri, "name": self.name, "mimeType": self.mime_type, "size": self.size}

    def contents(self) -> list[dict[str, Any]]:
        """Its `resources/read` contents: text when it is UTF-8 text, base64 otherwise."""
        if self.mime_type.startswith("text/") or self.mime_type in _TEXT_TYPES:
            try:
                return [{"uri": self.uri, "mimeType": self.mime_type, "text": self.data.decode("utf-8")}]
            except UnicodeDecodeError:
                pass
        return [{"uri": self.uri, "mimeType": self.mime_type, "blob": base64.b64encode(self.data).decode("ascii")}]


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its `SKILL.md` URI, frontmatter, and every file (SKILL.md first)."""

    uri: str
    skill_path: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root_uri(self) -> str:
        return self.uri[: -len("/" + SKILL_FILE)]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def entry(self) -> dict[str, Any]:
        """The skill entry of `skills/list` and `skills/get`: uri, frontmatter, complete manifest."""
        return {"uri": self.uri, "frontmatter": self.frontmatter,
                "resources": [f.manifest_entry() for f in self.files]}

    def resource(self) -> dict[str, Any]:
        """The `Resource` definition of its SKILL.md, named and described from the frontmatter."""
        skill_md = self.files[0]
        return {"uri": self.uri, "name": self.name, "description": self.description,
                "mimeType": MARKDOWN_MIME_TYPE, "size": skill_md.size}


@dataclass(frozen=True, slots=True)
class _Child:
    name: str
    uri: str
    file: SkillFile | None  # None for a directory

    def resource(self) -> dict[str, Any]:
        if self.file is not None:
            return self.file.resource()
        return {"uri": self.uri, "name": self.name, "mimeType": DIRECTORY_MIME_TYPE}


@dataclass(slots=True)
class _Index:
    skills: dict[str, Skill] = field(default_factory=dict)  # SKILL.md URI -> skill
    files: dict[str, SkillFile] = field(default_factory=dict)  # file URI -> file
    directories: dict[str, dict[str, _Child]] = field(default_factory=dict)  # directory URI -> children by name

    def copy(self) -> _Index:
        return _Index(dict(self.skills), dict(self.files), {k: dict(v) for k, v in self.directories.items()})


class SkillCatalog:
    """The skills of one server, with the lookups and pages SEP-2640's methods need."""

    def __init__(self, *, limits: SkillLimits | None = None, page_size: int = 50) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.limits = limits or SkillLimits()
        self.page_size = page_size
        self._index = _Index()

    # ------------------------------------------------------------------ building

    def add_directory(self, path: str | Path, *, prefix: str | None = None, strict: bool = True) -> list[Skill]:
        """Serve the skills found in `path` (a skill itself, or a tree holding skills); returns them.

        `prefix` ("acme/billing") puts them under an organisational path. With `strict` (the default)
        any invalid skill fails the whole call with a `SkillError` listing every problem; otherwise
        invalid skills are left out with a warning in the log.
        """
        root = Path(path)
        prefix_parts = _prefix_parts(prefix)
        index = self._index
        scanned = _scan(root, self.limits, total_files=len(index.files),
                        total_bytes=sum(f.size for f in index.files.values()))
        found = [*scanned.files, *scanned.oversized]
        if (SKILL_FILE,) in found:  # `path` is one skill: its own name is its path
            base: tuple[str, ...] = (*prefix_parts, root.resolve().name)
            skill_dirs: list[tuple[str, ...]] = [()]
        else:
            base = prefix_parts
            skill_dirs = sorted(p[:-1] for p in found if p[-1] == SKILL_FILE and len(p) > 1)
        problems: list[str] = []
        built: list[tuple[Skill, tuple[str, ...]]] = []
        for directory in skill_dirs:
            try:
                built.append((_build_skill(root, base, directory, scanned.files, self.limits, scanned.oversized),
                              directory))
            except SkillError as exc:
                problems.append(str(exc))
        if not skill_dirs:
            problems.append(f"{str(root)!r} holds no skill (a directory with a {SKILL_FILE})")
        new_index = index.copy()
        for skill, _ in built:
            if skill.uri in new_index.skills:
                problems.append(f"{skill.uri} is already served (two skills at the same path)")
        if len(new_index.skills) + len(built) > self.limits.max_skills:
            problems.append(f"a server may serve at most {self.limits.max_skills} skills")
        if problems and strict:
            raise SkillError("cannot serve these skills:\n- " + "\n- ".join(problems))
        for problem in problems:
            logger.warning("skills: %s", problem)
        room = max(0, self.limits.max_skills - len(new_index.skills))
        kept = [(s, d) for s, d in built if s.uri not in new_index.skills][:room]
        for skill, directory in kept:
            _index_skill(new_index, skill, scanned.directories, base, directory)
        self._index = new_index
        names = [s.name for s in new_index.skills.values()]
        for name in sorted({n for n in names if names.count(n) > 1}):
            logger.warning("skills: more than one skill is named %r; clients must tell them apart by URI", name)
        return [skill for skill, _ in kept]

    # ------------------------------------------------------------------ lookups

    @property
    def skills(self) -> list[Skill]:
        """Every skill, in URI order."""
        return [self._index.skills[uri] for uri in sorted(self._index.skills)]

    def __len__(self) -> int:
        return len(self._index.skills)

    def get(self, uri: str) -> Skill:
        """The skill whose SKILL.md is at `uri` (`skills/get`); SkillNotFound (-32602) otherwise."""
        skill = self._index.skills.get(canonical_uri(uri) or "")
        if skill is None:
            raise SkillNotFound(uri, f"Unknown skill {uri!r}: skills/get takes the URI of a served skill's "
                                     f"{SKILL_FILE}, as skills/list gives it")
        return skill

    def file(self, uri: str) -> SkillFile | None:
        """The file at `uri`, or None when no skill has such a file (`resources/read`)."""
        return self._index.files.get(canonical_uri(uri) or "")

    def is_directory(self, uri: str) -> bool:
        return (canonical_uri(uri) or "") in self._index.directories

    def resources(self) -> list[dict[str, Any]]:
        """`resources/list` entries: one per skill, its SKILL.md."""
        return [skill.resource() for skill in self.skills]

    # ------------------------------------------------------------------ pages

    def list_page(self, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        """One page of `skills/list` entries and the cursor of the next page (None on the last)."""
        uris = sorted(self._index.skills)
        start = _start_after(uris, "skills/list", cursor)
        page = uris[start:start + self.page_size]
        more = start + self.page_size < len(uris)
        entries = [self._index.skills[uri].entry() for uri in page]
        return entries, encode_cursor("skills/list", page[-1]) if more and page else None

    def directory_page(self, uri: str, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a directory's direct children (`resources/directory/read`); -32602 for a non-directory."""
        key = canonical_uri(uri) or ""
        children = self._index.directories.get(key)
        if children is None:
            what = "a file, not a directory" if key in self._index.files else "not a directory this server serves"
            raise SkillNotFound(uri, f"{uri!r} is {what}; resources/directory/read takes a directory URI such as "
                                     "a skill's root (its SKILL.md URI without '/SKILL.md')")
        names = sorted(children)
        listing = f"resources/directory/read {key}"
        start = _start_after(names, listing, cursor)
        page = names[start:start + self.page_size]
        more = start + self.page_size < len(names)
        return [children[n].resource() for n in page], encode_cursor(listing, page[-1]) if more and page else None


# ---------------------------------------------------------------------- URIs


def skill_uri(parts: Iterable[str]) -> str:
    """`skill://a/b/c` from path segments, each percent-encoded where it must be."""
    return f"{SCHEME}://" + "/".join(quote(part, safe=_SAFE) for part in parts)


def canonical_uri(uri: str) -> str | None:
    """The form the catalog keys URIs by (one encoding of each segment), or None when it cannot be ours."""
    head = f"{SCHEME}://"
    if not isinstance(uri, str) or not uri.startswith(head) or "?" in uri or "#" in uri:
        return None
    segments = [unquote(s) for s in uri[len(head):].split("/")]
    if not segments or any(s in ("", ".", "..") or "/" in s for s in segments):
        return None
    return skill_uri(segments)


def _prefix_parts(prefix: str | None) -> tuple[str, ...]:
    if prefix is None or prefix.strip("/") == "":
        return ()
    parts = tuple(prefix.strip("/").split("/"))
    for part in parts:
        if not _SEGMENT.match(part) or part in (".", ".."):
            raise SkillError(f"prefix segment {part!r} must be letters, digits and - . _ ~ only")
    return parts


def _start_after(items: list[str], listing: str, cursor: str | None) -> int:
    """Where the page after `cursor` starts in the sorted `items` (0 without a cursor)."""
    if cursor is None:
        return 0
    after = decode_cursor(listing, cursor)
    if not isinstance(after, str):
        raise invalid_cursor(cursor)
    low, high = 0, len(items)
    while low < high:  # first item greater than `after`
        middle = (low + high) // 2
        if items[middle] <= after:
            low = middle + 1
        else:
            high = middle
    return low


# ---------------------------------------------------------------------- building


def _scan(root: Path, limits: SkillLimits, *, total_files: int, total_bytes: int) -> Any:
    """The tree under `root`; a file too large for any skill is left out and blamed on its skill."""
    try:
        return scan_tree(root, ScanLimits(max_files=max(0, limits.max_total_files - total_files),
                                          max_file_bytes=limits.max_bytes_per_skill,
                                          max_total_bytes=max(0, limits.max_total_bytes - total_bytes),
                                          leave_out_oversized=True))
    except ScanError as exc:
        raise SkillError(f"cannot serve the skills in {str(root)!r}: {exc}") from None


def _mime_type(name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix in _MIME_TYPES:
        return _MIME_TYPES[suffix]
    guessed, _ = _DEFAULT_MIME.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


def _build_skill(root: Path, base: tuple[str, ...], directory: tuple[str, ...],
                 files: dict[tuple[str, ...], bytes], limits: SkillLimits,
                 oversized: set[tuple[str, ...]] | None = None) -> Skill:
    skill_parts = (*base, *directory)
    where = str(root.joinpath(*directory, SKILL_FILE))
    problems: list[str] = []  # every problem of this skill, not only the first
    for part in skill_parts[:-1]:
        if not _SEGMENT.match(part):
            problems.append(f"the directory name {part!r} cannot be part of a skill path (use letters, digits and "
                            "- . _ ~)")
    too_large = sorted(p for p in oversized or () if p[:len(directory)] == directory)
    if too_large:
        problems.append(f"{str(root.joinpath(*too_large[0]))} holds more than {limits.max_bytes_per_skill} bytes, "
                        "more than a whole skill may (SEP-2640's limit); move it out of the skill or shrink it")
    frontmatter: dict[str, Any] = {}
    if (*directory, SKILL_FILE) not in files:  # SKILL.md itself is the oversized file: nothing more to read
        raise SkillError(f"{where}: " + "; ".join(problems))
    try:
        text = files[(*directory, SKILL_FILE)].decode("utf-8")
    except UnicodeDecodeError:
        problems.append("not UTF-8 text")
    else:
        try:
            yaml_text, _body = split_frontmatter(text)
            frontmatter = parse_frontmatter(yaml_text)
        except FrontmatterError as exc:
            problems.append(str(exc))
        else:
            problems += frontmatter_problems(frontmatter, skill_parts[-1])
    depth = len(directory)
    own = sorted(p for p in files if p[:depth] == directory)
    own.remove((*directory, SKILL_FILE))
    own.insert(0, (*directory, SKILL_FILE))
    if len(own) > limits.max_files_per_skill:
        problems.append(f"the skill has {len(own)} files; at most {limits.max_files_per_skill}")
    total = sum(len(files[p]) for p in own)
    if total > limits.max_bytes_per_skill:
        problems.append(f"the skill's files hold {total} bytes; at most {limits.max_bytes_per_skill}")
    if problems:
        raise SkillError(f"{where}: " + "; ".join(problems))
    skill_files = tuple(
        SkillFile(uri=skill_uri((*skill_parts, *p[depth:])), name=p[-1],
                  mime_type=MARKDOWN_MIME_TYPE if p[depth:] == (SKILL_FILE,) else _mime_type(p[-1]),
                  data=files[p], digest="sha256:" + hashlib.sha256(files[p]).hexdigest())
        for p in own)
    return Skill(
        uri=skill_uri((*skill_parts, SKILL_FILE)),
        skill_path="/".join(quote(s, safe=_SAFE) for s in skill_parts),
        frontmatter=frontmatter,
        files=skill_files,
    )


def _index_skill(index: _Index, skill: Skill, directories: set[tuple[str, ...]], base: tuple[str, ...],
                 directory: tuple[str, ...]) -> None:
    """Add a skill's files, its directories and the prefix directories above it to the index."""
    index.skills[skill.uri] = skill
    skill_parts = (*base, *directory)
    for depth in range(1, len(skill_parts)):  # organisational prefixes lead down to the skill root
        parent = skill_uri(skill_parts[:depth])
        child = skill_parts[depth]
        index.directories.setdefault(parent, {})[child] = _Child(child, skill_uri(skill_parts[:depth + 1]), None)
    for relative in sorted(d for d in directories if d[:len(directory)] == directory):
        uri = skill_uri((*base, *relative))
        index.directories.setdefault(uri, {})
        if len(relative) > len(directory):
            parent = skill_uri((*base, *relative[:-1]))
            index.directories.setdefault(parent, {})[relative[-1]] = _Child(relative[-1], uri, None)
    for skill_file in skill.files:
        index.files[skill_file.uri] = skill_file
        parent_uri, _, name = skill_file.uri.rpartition("/")
        index.directories.setdefault(parent_uri, {})[unquote(name)] = _Child(unquote(name), skill_file.uri, skill_file)
