"""``dreamd recall``: the records relevant to a query, as the hook would inject them."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from dreamd.cli.common import DIR_HELP, EXIT_OK, config_of, quiet_logs


def cmd_recall(args: argparse.Namespace) -> int:
    from memory.retrieval.recall import recall

    config = config_of(args)
    model = None
    if config.model.backend == "offline":
        # memory.* logs through stdlib logging (structlog is the model path's cost), which is
        # itself imported only if a line is written (memory.lazylog)
        from memory.lazylog import configure_at_first_use

        configure_at_first_use(_plain_warnings)
    else:
        from dreamd.models.factory import make_model

        quiet_logs(args)
        model = make_model(config.model.to_dict())
    embedder = None
    if config.recall.embeddings:
        from dreamd.embeddings.model import EmbeddingsUnavailable, load

        try:
            embedder = load(config.recall.embeddings)
        except EmbeddingsUnavailable as exc:
            print(f"dreamd recall: {exc}; keyword selection only", file=sys.stderr)
    result = recall(
        Path(args.dir),
        args.query,
        model=model,
        embedder=embedder,
        limit=args.limit or config.recall.limit,
        record_bytes=config.recall.record_bytes,
        record_lines=config.recall.record_lines,
    )
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(result.block + ("\n" if result.block and not result.block.endswith("\n") else ""))
    return EXIT_OK


def _plain_warnings() -> None:
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="dreamd: %(levelname)s: %(message)s")


def _recall(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_recall)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("query", metavar="QUERY")
    sp.add_argument("--limit", type=int, default=None, metavar="N")
    sp.add_argument("--json", action="store_true")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"recall": _recall}
