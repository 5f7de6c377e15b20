"""Regenerate the example ``config.toml`` at the repository root from ``dreamd.config.SCHEMA``.

Usage: ``python scripts/gen_config.py`` (writes the file) or ``--reference`` (prints the
Markdown table for the README). ``tests/test_config.py`` fails when the committed file is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dreamd.config import render_example, render_reference


def main(argv: list[str]) -> int:
    if "--reference" in argv:
        sys.stdout.write(render_reference())
        return 0
    target = Path(__file__).resolve().parents[1] / "config.toml"
    target.write_text(render_example(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
