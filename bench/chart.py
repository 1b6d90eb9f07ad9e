"""Draw the chart of a benchmark run (mcp_kit vs the official SDK and FastMCP) and print its README table.

    .venv/bin/python bench/chart.py bench/results/<stamp>-full.json            # writes <stamp>-full.svg beside it
    .venv/bin/python bench/chart.py bench/published/readme-full-run.json -o bench/published/performance.svg --table

`bench/run.py` draws the chart of every run beside its results file; this redraws one from a results file,
and with `--table` prints the README's Performance table (Markdown) computed from the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.chart import markdown_table, render_svg  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/chart.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a results file written by bench/run.py")
    parser.add_argument("-o", "--out", type=Path, help="the SVG to write (default: the results file with .svg)")
    parser.add_argument("--table", action="store_true", help="also print the README's table (Markdown) to stdout")
    args = parser.parse_args(argv)
    result = json.loads(args.results.read_text(encoding="utf-8"))
    out = args.out or args.results.with_suffix(".svg")
    out.write_text(render_svg(result), encoding="utf-8")
    if args.table:
        sys.stdout.write(markdown_table(result))
    print(f"chart: {out}", file=sys.stderr if args.table else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
