"""Fixtures of the filesystem server tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.fs_layout import Layout, make_layout


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    """An allowed root with links and files pointing out of it, a sibling `root_evil`, and an outside directory."""
    return make_layout(tmp_path)
