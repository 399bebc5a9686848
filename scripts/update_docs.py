"""Regenerate the generated blocks of the docs, so no figure in them is typed by hand.

A block is written between `<!-- generated: COMMAND -->` and `<!-- end generated -->`; COMMAND is
`evidenceqa …` (the CLI) or a Python script of this repository with its arguments, and its
standard output replaces the block's content. Blocks marked `generated-measurement:` hold timings
and memory, which differ from run to run: `--check` skips them.
Run: .venv/bin/python scripts/update_docs.py [--check] [FILES...] (default: every docs/*.md).
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(<!-- (?P<kind>generated|generated-measurement): (?P<command>.+?) -->\n)(?P<body>.*?)(<!-- end generated -->)",
    re.S,
)


def render(text: str, measurements: bool = True, only: str = "") -> str:
    def replace(match: re.Match[str]) -> str:
        skipped = match.group("kind") == "generated-measurement" and not measurements
        if skipped or only not in match.group("command"):
            return match.group(0)
        return f"{match.group(1)}{run(match.group('command'))}{match.group(5)}"

    return BLOCK.sub(replace, text)


def run(command: str) -> str:
    words = shlex.split(command)
    if words[0] == "evidenceqa":
        args = [sys.executable, "-m", "evidenceqa", *words[1:]]
    else:
        args = [sys.executable, *words]
    # Progress bars go to the terminal; a failure shows its own error, not just an exit status.
    result = subprocess.run(args, cwd=REPO, stdout=subprocess.PIPE, text=True)
    if result.returncode:
        raise SystemExit(f"`{command}` failed with exit status {result.returncode}")
    return result.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if a block is out of date")
    parser.add_argument("--only", default="", help="regenerate only blocks whose command contains this")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args()
    stale = []
    for path in args.files or sorted((REPO / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        new = render(text, measurements=not args.check, only=args.only)
        if new != text:
            stale.append(path)
            if not args.check:
                # A block can run for an hour; an edit made to the page meanwhile must not be lost.
                if path.read_text(encoding="utf-8") != text:
                    raise SystemExit(f"{path} changed while its blocks were regenerated: run again")
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{'out of date' if args.check else 'updated'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
