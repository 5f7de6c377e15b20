"""The offline engine's size, counted the ways issue 23's growth rule is read.

Lines (``wc -l`` of every ``.py`` file), Python tokens (what the code says, without comments,
newlines and indentation, so joining short lines into long ones does not make code smaller), and
lines longer than the repository's 100 columns.

    python benchmarks/engine_size.py [DIR] [--json]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "dreamd" / "models" / "offline"
WIDTH = 100
_LAYOUT = {
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.COMMENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


@dataclass(frozen=True)
class Size:
    files: int
    lines: int
    tokens: int
    wide_lines: int


def code_tokens(source: str) -> int:
    """The tokens of ``source`` that are code: names, operators, literals."""
    stream = tokenize.generate_tokens(io.StringIO(source).readline)
    return sum(1 for token in stream if token.type not in _LAYOUT)


def measure(directory: Path) -> Size:
    files = sorted(directory.rglob("*.py"))
    lines = tokens = wide = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        rows = text.splitlines()
        lines += len(rows)
        wide += sum(1 for row in rows if len(row) > WIDTH)
        tokens += code_tokens(text)
    return Size(files=len(files), lines=lines, tokens=tokens, wide_lines=wide)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", type=Path, default=ENGINE)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    args = parser.parse_args(argv)
    if not args.directory.is_dir():
        print(f"engine_size: {args.directory}: not a directory", file=sys.stderr)
        return 2
    size = measure(args.directory)
    if args.json:
        print(json.dumps(asdict(size)))
    else:
        print(f"{'files':<12}{size.files:>8,}")
        print(f"{'lines':<12}{size.lines:>8,}")
        print(f"{'tokens':<12}{size.tokens:>8,}")
        print(f"{f'> {WIDTH} cols':<12}{size.wide_lines:>8,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
