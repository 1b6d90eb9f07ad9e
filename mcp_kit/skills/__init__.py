"""Agent Skills served over MCP (SEP-2640, the `io.modelcontextprotocol/skills` extension).

    catalog = SkillCatalog()
    catalog.add_directory("path/to/skills")      # every directory with a SKILL.md is a skill
    entries, next_cursor = catalog.list_page()   # skills/list
    catalog.get("skill://git-workflow/SKILL.md") # skills/get (-32602 for an unknown URI)
    catalog.file(uri).contents()                 # resources/read
    catalog.directory_page("skill://git-workflow")  # resources/directory/read

Private modules: `_frontmatter` parses and checks a SKILL.md's YAML, `_scan` reads a tree within
bounds, `_catalog` indexes what was read, `_errors` says why skills cannot be served, and `_methods`
serves a catalog (`skills/list`, `skills/get`, `resources/directory/read`, `skill://` reads).

Must not import: session, server, dispatcher, transports, context.
"""

from ._catalog import (
    DIRECTORY_MIME_TYPE,
    EXTENSION_ID,
    MAX_BYTES_PER_SKILL,
    MAX_FILES_PER_SKILL,
    Skill,
    SkillCatalog,
    SkillFile,
    SkillLimits,
)
from ._errors import FrontmatterError, ScanError, SkillError, SkillNotFound

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "EXTENSION_ID",
    "MAX_BYTES_PER_SKILL",
    "MAX_FILES_PER_SKILL",
    "FrontmatterError",
    "Skill",
    "SkillCatalog",
    "SkillError",
    "SkillFile",
    "ScanError",
    "SkillLimits",
    "SkillNotFound",
]
