"""``dreamd init`` and the roots: a directory outside ``[daemon] roots`` is refused, or added.

The daemon fails every job whose memory directory lies outside the roots, so a directory
initialised there would swallow each session the hook sends it. ``init`` therefore refuses it
with one line naming the key and the file, and ``--add-root`` appends it to ``[daemon] roots``
of the config file — edited with tomlkit, so every other line, comment and key stays as it was
— before initialising. The new file is written atomically (temp file, fsync, rename).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memory.errors import ConfigError

__all__ = ["add_root", "config_path", "outside_roots_message"]


def config_path(explicit: Path | None, env: Mapping[str, str]) -> Path:
    """The file ``load_config`` reads (or would read): ``--config``, ``$DREAMD_CONFIG``, XDG."""
    from dreamd.config import find_config_file

    path, _ = find_config_file(explicit, env)
    assert path is not None
    return path


def outside_roots_message(directory: Path, file: Path) -> str:
    return (
        f"{directory} is outside the configured roots ([daemon] roots in {file}), so the daemon would "
        f"refuse every job for it; run 'dreamd init --add-root {directory}' to add it there"
    )


def add_root(file: Path, directory: Path) -> bool:
    """Append ``directory`` to ``[daemon] roots`` in ``file`` (created when absent); False when
    it is listed already. A file that had no ``roots`` gets the defaults plus the directory,
    so adding one root never takes away the ones the defaults gave."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from dreamd.config import SCHEMA
    from memory.fsutil import replace_atomic

    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read config: {exc}") from None
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{file}: invalid TOML: {exc}") from None
    daemon = doc.get("daemon")
    if daemon is None:
        daemon = tomlkit.table()
        doc["daemon"] = daemon
    if not isinstance(daemon, dict):
        raise ConfigError(f"{file}: daemon: expected a [daemon] table")
    roots = daemon.get("roots")
    if roots is None:
        default = next(k.default for k in SCHEMA if (k.section, k.name) == ("daemon", "roots"))
        roots = tomlkit.array()
        roots.extend(default)
        daemon["roots"] = roots
    if not isinstance(roots, list):
        raise ConfigError(f"{file}: [daemon] roots: expected a list of path patterns")
    wanted = str(directory)
    if wanted in [str(r) for r in roots]:
        return False
    roots.append(wanted)
    file.parent.mkdir(parents=True, exist_ok=True)
    replace_atomic(file, tomlkit.dumps(doc).encode("utf-8"))
    return True


def check_init_target(directory: Path, *, add: bool, explicit: Path | None, env: Mapping[str, str] = os.environ) -> str | None:
    """Refuse (ConfigError, one line) a directory outside the roots, or add it when ``add``;
    returns a line to print when the config file was changed."""
    from dreamd.config import load_config
    from memory.roots import dir_allowed

    config = load_config(explicit, env=env)
    target = Path(os.path.abspath(directory))
    if dir_allowed(target, config.daemon.roots):
        return None
    file = config.source or config_path(explicit, env)
    if not add:
        raise ConfigError(outside_roots_message(target, file))
    add_root(file, target)
    load_config(file, env=env)  # the edited file must still be a valid config
    return f"added {target} to [daemon] roots in {file}"
