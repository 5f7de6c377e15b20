"""``dreamd remember`` and ``dreamd forget``: one record in, records out (kept in ``.history/``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dreamd.cli.common import DIR_HELP, EXIT_OK, open_store_of

if TYPE_CHECKING:
    from memory.store.records import Record
    from memory.store.transaction import MemoryStore


def cmd_remember(args: argparse.Namespace) -> int:
    from memory.redact import redact
    from memory.store.records import make_record
    from memory.store.redaction import clean_name
    from memory.store.transaction import Change

    if args.body_file:
        body = sys.stdin.read() if args.body_file == "-" else Path(args.body_file).read_text(encoding="utf-8")
    else:
        body = args.body
    # The name is checked against the text before it is redacted: only there is the secret a
    # name may share a part with (issue 22).
    name = clean_name(args.name, args.description, body)
    rec = make_record(
        name, args.type, redact(args.description)[0], redact(body)[0], where="remember",
        importance=args.importance, expires=args.expires,
    )  # fmt: skip
    store = open_store_of(args)
    keys, _ = store.resolve([rec.name])  # the key, or a record's own frontmatter name
    exists = rec.name in keys and name == args.name  # a renamed record never replaces another
    if exists:
        rec = _keep_options(store, keys[rec.name], rec)
    change = Change(replace={keys[rec.name]: rec}) if exists else Change(add=[rec])
    result = store.commit(change)
    verb = "updated" if exists else "added"
    renamed = "; renamed: the name given held part of a secret" if name != args.name else ""
    name = (result.updated or result.added or [rec.name])[0]
    print(f"{verb} {name} (generation {result.generation}{renamed})")
    return EXIT_OK


def _keep_options(store: MemoryStore, key: str, rec: Record) -> Record:
    """An update keeps the record's ``importance``/``expires`` unless the command sets them."""
    from memory.errors import RecordError
    from memory.store.records import OPTIONAL_FIELDS

    entry = next((e for e in store.read().records if e.name == key), None)
    if entry is None:
        return rec
    try:
        old = store.read_record(entry)
    except RecordError:
        return rec
    kept = {k: old.extra[k] for k in OPTIONAL_FIELDS if k in old.extra and k not in rec.extra}
    return rec.replace(extra={**kept, **rec.extra}) if kept else rec


def cmd_forget(args: argparse.Namespace) -> int:
    from memory.errors import StoreError
    from memory.store.transaction import Change

    store = open_store_of(args)
    keys, unknown = store.resolve(args.names)  # a key or the record's own frontmatter name
    if unknown:
        raise StoreError(f"{store.path}: no record named {', '.join(unknown)}")
    result = store.commit(Change(remove=list(dict.fromkeys(keys[n] for n in args.names))))
    # A record whose file had become a link or a FIFO leaves the set, but there were no bytes
    # of it to keep: say so, one line per file, instead of "kept in .history/".
    kept = "" if result.not_archived else "; kept in .history/"
    print(f"removed {', '.join(result.removed)} (generation {result.generation}{kept})")
    for _, line in result.not_archived:
        print(f"  {line}")
    return EXIT_OK


def _remember(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_remember)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--name", required=True)
    sp.add_argument("--type", required=True, choices=("user", "feedback", "project", "reference"))
    sp.add_argument("--description", required=True)
    body = sp.add_mutually_exclusive_group(required=True)
    body.add_argument("--body")
    body.add_argument("--body-file", metavar="F")
    sp.add_argument("--importance", type=float, default=None, metavar="0..1",
                    help="raises the record in recall ties; 0.8 or more protects it from expiry")
    sp.add_argument("--expires", default=None, metavar="YYYY-MM-DD",
                    help="a dream may drop the record after this day")


def _forget(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_forget)
    sp.add_argument("names", nargs="+", metavar="NAME",
                    help="records to remove; a first word that is a directory (or holds a /) is the memory directory, "
                         "else the one a session started here uses")
    sp.set_defaults(dir=None)


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"remember": _remember, "forget": _forget}
