"""``dreamd hook``: listed with the other commands; :func:`dreamd.command.main` and
:func:`dreamd.cli.main.main` run it before any argument is parsed."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def cmd_hook(args: argparse.Namespace) -> int:  # pragma: no cover - main() takes the fast path
    from dreamd.hook.main import main as hook_main

    return int(hook_main())


def _hook(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_hook)


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"hook": _hook}
