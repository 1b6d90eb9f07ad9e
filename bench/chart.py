"""Draw the chart of a benchmark run: mcp_kit vs the official SDK and FastMCP, one panel per figure.

    .venv/bin/python bench/chart.py bench/results/<stamp>-full.json            # writes <stamp>-full.svg beside it
    .venv/bin/python bench/chart.py bench/published/readme-full-run.json -o bench/published/performance.svg

`bench/run.py` draws the chart of every run beside its results file; this redraws one from a results file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.chart import render_svg  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/chart.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a results file written by bench/run.py")
    parser.add_argument("-o", "--out", type=Path, help="the SVG to write (default: the results file with .svg)")
    args = parser.parse_args(argv)
    out = args.out or args.results.with_suffix(".svg")
    out.write_text(render_svg(json.loads(args.results.read_text(encoding="utf-8"))), encoding="utf-8")
    print(f"chart: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
