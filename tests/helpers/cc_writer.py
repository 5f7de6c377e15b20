"""A child process that saves memories the way Claude Code does, with no lock (store tests).

For each of ``--count`` memories it writes ``<stem>.md`` (frontmatter ``name`` in kebab case,
file name in snake case, as Claude Code writes them), then rewrites ``MEMORY.md`` as its Edit
tool does: read the file, append a pointer line, write the whole text back in place (open with
O_TRUNC, like Node's ``writeFileSync``). Every MEMORY.md version it wrote is appended to
``--log`` as one JSON line (``{"file": …, "index": …}``) so the test can check each was kept.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dir", type=Path)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    index = args.dir / "MEMORY.md"
    with open(args.log, "a", encoding="utf-8") as log:
        for i in range(args.count):
            stem = f"feedback_db_tests_{i}"
            record = (
                f"---\nname: feedback-db-tests-{i}\n"
                f"description: Integration test run {i} must use a real database\n"
                "type: feedback\n---\n"
                "Integration tests hit a real database, never mocks.\n"
                "**Why:** a mocked migration passed while the real one failed.\n"
            )
            (args.dir / f"{stem}.md").write_text(record, encoding="utf-8")
            time.sleep(rng.uniform(0, 0.004))
            try:
                text = index.read_text(encoding="utf-8")
            except FileNotFoundError:
                text = ""
            text = text.rstrip("\n") + f"\n- [Real DB in tests {i}]({stem}.md) — integration tests use a real database\n"
            with open(index, "w", encoding="utf-8") as f:
                f.write(text)
            log.write(json.dumps({"file": f"{stem}.md", "index": text}) + "\n")
            log.flush()
            time.sleep(rng.uniform(0, 0.006))


if __name__ == "__main__":
    main()
