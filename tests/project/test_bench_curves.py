"""bench/README.md's scaling curves, their published files and their charts agree (`bench/publish_curves.py`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.support import ROOT

BENCH = ROOT / "bench"
PUBLISHED = BENCH / "published"
PUBLISH = BENCH / "publish_curves.py"
CURVES = ("tools", "payload", "clients", "sessions", "fanout", "cpu")  # the six
BASELINES = (BENCH / "baselines" / "scaling-before.json", BENCH / "baselines" / "scaling-before-full.json")
README = BENCH / "README.md"  # where the curves are published; the top-level README links to it


def publish(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PUBLISH), *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def blocks(readme: str) -> dict[str, str]:
    return dict(re.findall(r"<!-- curve:([a-z_]+) -->\n(.*?)<!-- /curve:\1 -->", readme, re.S))


def copy_layout(tmp_path: Path) -> Path:
    """bench/README.md and bench/published/curve-* under tmp_path, as laid out in the repository."""
    (tmp_path / "bench" / "published").mkdir(parents=True)
    shutil.copy(README, tmp_path / "bench" / "README.md")
    for path in PUBLISHED.glob("curve-*"):
        shutil.copy(path, tmp_path / "bench" / "published" / path.name)
    return tmp_path


def test_every_curve_is_in_the_published_results_section_with_its_chart_and_command() -> None:
    readme = README.read_text(encoding="utf-8")
    section = readme.split("\n## Published results", 1)[1].split("\n## ", 1)[0]
    found = blocks(section)
    assert sorted(found) == sorted(CURVES)
    for name, text in found.items():
        assert f"](published/curve-{name}.svg)" in text
        assert f"bench/scaling.py --curve {name}" in text
        assert "\n| figure | " in text  # the table
        assert (PUBLISHED / f"curve-{name}.svg").read_text(encoding="utf-8").startswith("<svg")


def test_the_readme_blocks_and_charts_are_drawn_from_the_published_files() -> None:
    done = publish("--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"checked {len(CURVES)} curve block(s)" in done.stdout and "all agree" in done.stdout


def test_a_pre_change_block_says_so_and_holds_the_committed_baseline_figures() -> None:
    readme = blocks(README.read_text(encoding="utf-8"))
    statuses = {}
    for name in CURVES:
        published = json.loads((PUBLISHED / f"curve-{name}.json").read_text(encoding="utf-8"))
        statuses[name] = published["status"]
        labelled = readme[name].startswith("**Pre-change baseline**")
        assert labelled == (published["status"] == "pre-change baseline"), name
        if labelled:
            assert published["source"].startswith("bench/baselines/")
            source = json.loads((ROOT / published["source"]).read_text(encoding="utf-8"))
            assert source["curves"][name]["samples"] == published["samples"]
            assert "PRE-CHANGE BASELINE" in (PUBLISHED / f"curve-{name}.svg").read_text(encoding="utf-8")
    assert statuses["payload"] == statuses["clients"] == "current"


def test_check_fails_when_a_block_or_a_chart_was_edited_by_hand(tmp_path: Path) -> None:
    root = copy_layout(tmp_path)
    readme = root / "bench" / "README.md"
    ok = publish("--check", "--readme", str(readme), "--out-dir", str(root / "bench" / "published"))
    assert ok.returncode == 0, ok.stderr
    text = readme.read_text(encoding="utf-8")
    payload = blocks(text)["payload"]
    edited = re.sub(r"\| (\d)", lambda m: f"| {(int(m.group(1)) + 1) % 10}", payload, count=1)
    assert edited != payload
    readme.write_text(text.replace(payload, edited), encoding="utf-8")
    chart = root / "bench" / "published" / "curve-clients.svg"
    chart.write_text(chart.read_text(encoding="utf-8").replace("</svg>", "<!-- -->\n</svg>"), encoding="utf-8")
    bad = publish("--check", "--readme", str(readme), "--out-dir", str(root / "bench" / "published"))
    assert bad.returncode == 1
    assert "payload: the README block differs" in bad.stderr and "curve-clients.svg is not the chart" in bad.stderr


def test_new_runs_replace_the_blocks_in_one_command(tmp_path: Path) -> None:
    """What the coordinator does with after-run files, here with the committed baselines as the 'new' runs."""
    root = copy_layout(tmp_path)
    readme, out = root / "bench" / "README.md", root / "bench" / "published"
    for path in out.glob("curve-*"):
        path.unlink()
    done = publish("--readme", str(readme), "--out-dir", str(out), "--curve", "tools,cpu",
                   "--before", str(BASELINES[0]), "--before", str(BASELINES[1]), *map(str, BASELINES))
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in out.iterdir()) == ["curve-cpu.json", "curve-cpu.svg", "curve-tools.json",
                                                          "curve-tools.svg"]
    after = blocks(readme.read_text(encoding="utf-8"))
    for name in ("tools", "cpu"):
        assert after[name] in done.stdout
        assert not after[name].startswith("**Pre-change baseline**")
        assert "| mcp_kit before | now/before |" in after[name]  # compared with the baseline of the same mode
        assert "mcp_kit before" in (out / f"curve-{name}.svg").read_text(encoding="utf-8")
    assert "bench/baselines/scaling-before-full.json" in after["cpu"]  # the full-mode baseline for a full run
    assert after["payload"] == blocks(README.read_text(encoding="utf-8"))["payload"]  # untouched
    for name in ("payload", "clients", "sessions", "fanout"):
        shutil.copy(PUBLISHED / f"curve-{name}.json", out)
        shutil.copy(PUBLISHED / f"curve-{name}.svg", out)
    again = publish("--check", "--readme", str(readme), "--out-dir", str(out))
    assert again.returncode == 0, again.stderr


def test_a_file_that_is_not_a_scaling_run_is_refused(tmp_path: Path) -> None:
    done = publish("--out-dir", str(tmp_path), str(PUBLISHED / "readme-full-run.json"))
    assert done.returncode != 0 and "not a scaling results file" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_top_level_readme_links_the_curves_instead_of_copying_them() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert blocks(readme) == {}
    section = readme.split("\n## Performance", 1)[1].split("\n## ", 1)[0]
    assert "](bench/README.md)" in section and "scaling curves" in section
