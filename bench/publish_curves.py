"""Publish scaling curves in bench/README.md: a chart and a Markdown table per curve, from scaling results files.

    .venv/bin/python bench/publish_curves.py --readme bench/README.md bench/results/STAMP-scaling-full.json
    .venv/bin/python bench/publish_curves.py --readme bench/README.md \\
        --before bench/baselines/scaling-before-full.json \\
        bench/results/STAMP-scaling-full.json              # + "mcp_kit before" columns and a dotted line
    .venv/bin/python bench/publish_curves.py --check      # bench/README.md = published/curve-*.json = charts?

For every curve in the given files (a later file wins when two hold the same curve; `--curve` picks
some), writes `bench/published/curve-<name>.json` (that curve cut out of its run: settings, samples,
source) and `curve-<name>.svg` drawn from it, and prints the README block (command, table per event
loop, verdicts, chart link). With `--readme FILE` the block replaces the one between
`<!-- curve:<name> -->` and `<!-- /curve:<name> -->` in FILE. `--pre-change` labels the curves as the
pre-change baseline (for the committed `bench/baselines/*.json`). `--check` measures nothing and
writes nothing: it redraws every curve the README shows from its published file and exits 1 if the
README block or the committed chart differ.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import curve_publish  # noqa: E402
from scaling import CURVES  # noqa: E402

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/publish_curves.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", type=Path, help="scaling results files (bench/scaling.py's JSON "
                        "or a bench/baselines/ file)")
    parser.add_argument("--curve", help="comma-separated curves to publish (default: every curve in the files)")
    parser.add_argument("--before", action="append", type=Path, default=[],
                        help="a pre-change run to compare with (repeatable; per curve, the last file holding "
                        "it in the same mode, else in any mode)")
    parser.add_argument("--pre-change", action="store_true", help="label the curves as the pre-change baseline")
    parser.add_argument("--out-dir", type=Path, default=BENCH / "published", help="where the JSON and SVGs go")
    parser.add_argument("--readme", type=Path, help="rewrite this file's curve blocks in place")
    parser.add_argument("--check", action="store_true",
                        help="verify the README (default bench/README.md) against the published files; write nothing")
    return parser.parse_args(argv)


def shown_path(path: Path, relative_to: Path) -> str:
    """`path` as the README links it: relative to the README's folder, with forward slashes."""
    return Path(os.path.relpath(path.resolve(), relative_to.resolve())).as_posix()


def source_name(path: Path) -> str:
    resolved = path.resolve()
    return resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else path.name


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("kind") != "scaling":
        raise SystemExit(f"{path} is not a scaling results file (bench/scaling.py's JSON or a baseline)")
    return data


def choose_before(
    name: str, mode: str, befores: list[tuple[Path, dict[str, Any]]]
) -> tuple[str, dict[str, Any]] | None:
    holding = [(path, data) for path, data in befores if name in data["curves"]]
    same_mode = [(path, data) for path, data in holding if data["mode"] == mode]
    chosen = (same_mode or holding or [None])[-1]
    return None if chosen is None else (source_name(chosen[0]), chosen[1])


def render(name: str, published: dict[str, Any], out_dir: Path, readme_dir: Path) -> tuple[str, str]:
    """The README block and the SVG of one published curve."""
    curve = CURVES[name]
    block = curve_publish.block(curve, published, shown_path(out_dir / f"curve-{name}.svg", readme_dir),
                                shown_path(out_dir / f"curve-{name}.json", readme_dir))
    return block, curve_publish.chart(curve, published)


def check(readme: Path, out_dir: Path) -> int:
    text = readme.read_text(encoding="utf-8")
    names = curve_publish.blocks_in(text)
    problems = []
    for name in names:
        path = out_dir / f"curve-{name}.json"
        if not path.exists():
            problems.append(f"{name}: {path} missing")
            continue
        published = json.loads(path.read_text(encoding="utf-8"))
        block, svg = render(name, published, out_dir, readme.parent)
        if curve_publish.replace_block(text, name, block) != text:
            problems.append(f"{name}: the README block differs from what {path} gives")
        chart = out_dir / f"curve-{name}.svg"
        if not chart.exists() or chart.read_text(encoding="utf-8") != svg:
            problems.append(f"{name}: {chart} is not the chart of {path}")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"checked {len(names)} curve block(s): {', '.join(names) or 'none'}; "
          f"{'all agree' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems or not names else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.check:
        return check(args.readme or BENCH / "README.md", args.out_dir)
    if not args.results:
        raise SystemExit("give one or more scaling results files (or --check)")
    wanted = None if not args.curve else [name.strip() for name in args.curve.split(",") if name.strip()]
    unknown = [name for name in wanted or [] if name not in CURVES]
    if unknown:
        raise SystemExit(f"unknown curve(s) {', '.join(unknown)}; choose from {', '.join(CURVES)}")
    befores = [(path, load(path)) for path in args.before]
    chosen: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path in args.results:
        data = load(path)
        for name in data["curves"]:
            if wanted is None or name in wanted:
                chosen[name] = (path, data)
    missing = [name for name in wanted or [] if name not in chosen]
    if missing:
        raise SystemExit(f"no results for curve(s) {', '.join(missing)} in the given files")
    readme_dir = (args.readme or BENCH / "README.md").parent
    readme_text = args.readme.read_text(encoding="utf-8") if args.readme else None
    args.out_dir.mkdir(parents=True, exist_ok=True)
    order = [name for name in CURVES if name in chosen]
    for name in order:
        path, data = chosen[name]
        status = curve_publish.PRE_CHANGE if args.pre_change else curve_publish.CURRENT
        before = None if args.pre_change else choose_before(name, data["mode"], befores)
        published = curve_publish.cut(data, name, source_name(path), status, before)
        json_path = args.out_dir / f"curve-{name}.json"
        json_path.write_text(json.dumps(published, indent=1) + "\n", encoding="utf-8")
        block, svg = render(name, published, args.out_dir, readme_dir)
        (args.out_dir / f"curve-{name}.svg").write_text(svg, encoding="utf-8")
        print(block + "\n")
        print(f"wrote {json_path} and {json_path.with_suffix('.svg')}", file=sys.stderr)
        if readme_text is not None:
            readme_text = curve_publish.replace_block(readme_text, name, block)
    if args.readme and readme_text is not None:
        args.readme.write_text(readme_text, encoding="utf-8")
        print(f"updated {len(order)} block(s) in {args.readme}: {', '.join(order)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
