"""``dreamd doctor``: is this machine set up so the daemon can do its job?

Every check is a small function returning a :class:`Check` (a value: status, what, detail,
how to fix it); :func:`run_doctor` prints one line per check,
``OK|WARN|FAIL  <check>: <detail>  (fix: …)``, and computes the exit code in one place: 1 when
any check FAILs, else 0. WARN means "works, but you will want to know".

Checks: the config (which file, valid), the roots (managed / unmanaged directories found), the
spool (exists, a directory, writable, 0700 and never group/world-writable — the daemon refuses
such a spool), the inotify limits (one watch per watched directory: every managed directory
plus the spool's ``new/``; before watchdog 7 also one instance each), the model backend
(offline needs nothing; anthropic needs a credential — ``ANTHROPIC_API_KEY`` or
``ANTHROPIC_AUTH_TOKEN``, optional with ``base_url`` — and an endpoint that answers;
claude-code needs the ``claude`` CLI and a login, asked of ``claude auth status`` without a
model call), whether the daemon's last model call found the model misconfigured (kept in
the spool's ``.model-health.json``, :mod:`dreamd.models.health`), whether a daemon holds the spool,
failed jobs waiting for ``dreamd retry``, jobs waiting in a spool no daemon reads
(``$DREAMD_SPOOL`` set for some processes only), Claude Code's hooks (``~/.claude/settings.json``
or the dreamd plugin sends every event ``dreamd hook`` answers, each with a timeout), whether
those hook commands *run* — each is started the way Claude Code starts it, ``sh -c`` with this
environment's PATH (the login PATH Claude Code inherits; nothing added), on a harmless
``SessionStart`` payload whose ``cwd`` is an empty temporary directory — the MCP server's
registration (``~/.claude.json``, or the plugin's), and the service (the systemd user unit or
launchd agent, else whether an unsupervised ``dreamd run`` is alive), and the hook's file of the
redactor's compiled patterns (there, holding every pattern: :mod:`memory.redact.saved`).

Doctor only reads: it creates no spool, takes no lock and sends the API key only to the
configured endpoint. It never prints the key. The hook check appends one line to ``hook.log``
(the hook's own record of the call, with session id ``dreamd-doctor-…``), and the secret scan
keeps its verdicts by content hash in ``~/.cache/dreamd/secret-scan.json`` (derived: hashes and
kind names only, :mod:`dreamd.status.secrets`).

The checks that wait on another process (the model probe, the hook commands, the service
manager) run in threads while the others read files; the lines come out in the same order.

A new check is a function returning a :class:`Check`, added to :func:`run_checks`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import stat
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dreamd.config import Config, ModelConfig, RecallConfig, find_config_file, load_config
from dreamd.status.collect import daemon_status, discover_dirs, spool_status
from memory.errors import ConfigError
from memory.values import FrozenValue

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from dreamd.setup.service import Runner

__all__ = [
    "ARGUMENTS",
    "Check",
    "HookCommand",
    "check_claude_hooks",
    "check_config",
    "check_daemon",
    "check_failed_jobs",
    "check_hook_code",
    "check_hooks_run",
    "check_inotify",
    "check_mcp",
    "check_model",
    "check_model_health",
    "check_other_spools",
    "check_roots",
    "check_service",
    "check_spool",
    "check_spool_dirs",
    "check_unplaced",
    "cmd_doctor",
    "doctor_main",
    "run_checks",
    "run_doctor",
]

OK, WARN, FAIL = "OK", "WARN", "FAIL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
PROBE_TIMEOUT = 5.0
CLI_PROBE_TIMEOUT = 30.0
WATCH_HEADROOM = 1024
"""Watches are counted per user, shared with editors, IDEs and other watchers."""
INSTANCE_HEADROOM = 16


class Check(FrozenValue):
    """One doctor line: status, what was checked, the detail, how to fix it."""

    __slots__ = ("status", "name", "detail", "fix")  # noqa: RUF023 (field order)
    status: str
    name: str
    detail: str
    fix: str | None

    def __init__(self, status: str, name: str, detail: str, fix: str | None = None) -> None:
        self.set_fields(status=status, name=name, detail=detail, fix=fix)

    def line(self) -> str:
        text = f"{self.status:<4}  {self.name}: {self.detail}"
        return f"{text}  (fix: {self.fix})" if self.fix else text


# --------------------------------------------------------------------------- checks


def check_config(config: Config, env: Mapping[str, str]) -> Check:
    if config.source is not None:
        return Check(OK, "config", f"{config.source} is valid")
    would_be, _ = find_config_file(None, env)
    return Check(OK, "config", f"no config file ({would_be} absent): every key at its default")


def check_roots(config: Config) -> Check:
    patterns = ", ".join(config.daemon.roots) or "(none)"
    if not config.daemon.roots:
        return Check(
            FAIL,
            "roots",
            "no roots configured: no memory directory is managed and every job is refused",
            "set [daemon] roots in the config",
        )
    managed, unmanaged = discover_dirs(config.daemon.roots)
    detail = f"{len(managed)} managed, {len(unmanaged)} unmanaged dirs under {patterns}"
    if unmanaged:
        return Check(
            WARN,
            "roots",
            f"{detail}; dreamd never writes to an unmanaged dir",
            f"dreamd adopt {unmanaged[0]}" + (" (and the others)" if len(unmanaged) > 1 else ""),
        )
    if not managed:
        return Check(
            WARN,
            "roots",
            f"no memory directories found under {patterns}",
            "dreamd init DIR (inside a root) or dreamd adopt DIR, or change [daemon] roots",
        )
    return Check(OK, "roots", detail)


def check_memory_files(managed: Sequence[Path], read: dict[Path, bytes] | None = None) -> Check:
    """Files in the managed directories dreamd leaves alone (malformed or unsafe records, a
    ``.history`` link, a ``MEMORY.md`` directory): each stays in place and blocks nothing, but
    a person should look (DESIGN §2, "A directory is not trusted"). With ``read``, the bytes of
    each record file read are kept there by path, for :func:`check_secrets`."""
    from memory.errors import DreamdError
    from memory.store.transaction import MemoryStore

    found: list[str] = []
    for directory in managed:
        got: dict[str, bytes] = {}
        try:
            found += [reason for _, reason in MemoryStore(directory).scan_malformed(read=got)]
        except (DreamdError, OSError) as exc:
            found.append(f"{directory}: {exc}")
        if read is not None:
            read.update((directory / name, data) for name, data in got.items())
    if not found:
        return Check(OK, "memory files", f"every file in {len(managed)} managed dir(s) is readable")
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return Check(
        WARN,
        "memory files",
        f"{len(found)} file(s) left in place: " + "; ".join(found[:3]) + more,
        "dreamd status lists them all; fix, rename or move each (docs/troubleshooting.md, hostile directories)",
    )


def check_spool(spool: Path) -> Check:
    """The spool must be a private directory the daemon can write (DESIGN §4, security)."""
    try:
        st = spool.stat()
    except FileNotFoundError:
        return Check(
            WARN,
            "spool",
            f"{spool} does not exist yet (the daemon or the first submit creates it 0700)",
            f"mkdir -p -m 0700 {spool}",
        )
    except OSError as exc:
        return Check(
            FAIL, "spool", f"{spool}: {exc.strerror}", f"check the permissions of {spool.parent}"
        )
    if not stat.S_ISDIR(st.st_mode):
        return Check(
            FAIL,
            "spool",
            f"{spool} is not a directory",
            "move it away; the spool must be a directory",
        )
    if st.st_uid != os.geteuid():  # named before its queues: theirs follows from it
        return Check(
            FAIL,
            "spool",
            f"{spool} is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); the daemon refuses it",
            f"chown -R $USER {spool}",
        )
    loose = [spool] if st.st_mode & 0o022 else []
    unwritable = [] if os.access(spool, os.W_OK | os.X_OK) else [spool]
    for queue in ("tmp", "new", "cur", "deferred", "done", "failed"):
        sub = spool / queue
        try:
            sub_st = sub.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(sub_st.st_mode) or sub_st.st_uid != os.geteuid():
            return Check(
                FAIL,
                "spool",
                f"{sub} is a symbolic link or another user's directory (the daemon refuses the spool)",
                f"replace it with a directory of your own: rm {sub} && mkdir -m 0700 {sub}",
            )
        sub_mode = sub_st.st_mode
        if sub_mode & 0o022:
            loose.append(sub)
        if not os.access(sub, os.W_OK | os.X_OK):
            unwritable.append(sub)
    mode = stat.S_IMODE(st.st_mode)
    if loose:
        where = ", ".join(str(p) for p in loose)
        return Check(
            FAIL,
            "spool",
            f"group- or world-writable: {where} (anyone could plant jobs; the daemon refuses it)",
            f"chmod -R go-rwx {spool}",
        )
    if unwritable:
        where = ", ".join(str(p) for p in unwritable)
        return Check(
            FAIL, "spool", f"not writable by this user: {where}", f"chown -R $USER {spool}"
        )
    if mode & 0o077:
        return Check(
            WARN,
            "spool",
            f"{spool} has mode {mode:04o}: others can read queued transcripts",
            f"chmod 700 {spool}",
        )
    return Check(OK, "spool", f"{spool}: mode {mode:04o}, writable")


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def watchdog_shares_inotify() -> bool:
    """watchdog ≥ 7 shares one inotify instance across all watches; older versions open one
    instance per watched directory (read from ``watchdog.version``, which imports nothing: neither
    the observers nor ``importlib.metadata`` and its e-mail parser load)."""
    try:
        from watchdog.version import VERSION_MAJOR
    except ImportError:
        return False
    return int(VERSION_MAJOR) >= 7


def check_inotify(
    managed_dirs: int, *, proc: Path = Path("/proc"), shared_instance: bool | None = None
) -> Check:
    """Enough inotify watches (and instances) for every managed dir plus the spool.

    Watches are one per watched directory. Instances are one per process with watchdog ≥ 7
    (``shared_instance``) but one per watched directory before that, where the usual
    ``max_user_instances = 128`` is the first limit hit. Both limits are per user, shared
    with editors and IDEs, hence the headroom.
    """
    base = proc / "sys" / "fs" / "inotify"
    watches = _read_int(base / "max_user_watches")
    instances = _read_int(base / "max_user_instances")
    if watches is None and instances is None:
        return Check(OK, "inotify", "no inotify on this system (watchdog uses the native backend)")
    if shared_instance is None:
        shared_instance = watchdog_shares_inotify()
    need_watches = managed_dirs + 1
    need_instances = 1 if shared_instance else managed_dirs + 1
    parts = []
    fail: list[str] = []
    warn: list[str] = []
    fixes: list[str] = []
    for key, limit, need, headroom in (
        ("max_user_watches", watches, need_watches, WATCH_HEADROOM),
        ("max_user_instances", instances, need_instances, INSTANCE_HEADROOM),
    ):
        if limit is None:
            continue
        parts.append(f"{key} {limit} (needs {need})")
        want = need + max(headroom, need)
        if limit < need:
            fail.append(f"{key} {limit} < {need} needed")
            fixes.append(f"sudo sysctl fs.inotify.{key}={want}")
        elif limit < want:
            warn.append(f"{key} {limit} leaves little room over the {need} dreamd needs")
            fixes.append(f"sudo sysctl fs.inotify.{key}={want}")
    fix = None
    if fixes:
        fix = "; ".join(fixes) + " (persist it in /etc/sysctl.d/90-dreamd.conf)"
    what = f" ({managed_dirs} managed dirs + the spool)"
    if fail:
        return Check(FAIL, "inotify", "; ".join(fail) + what, fix)
    if warn:
        return Check(WARN, "inotify", "; ".join(warn) + what, fix)
    return Check(OK, "inotify", ", ".join(parts) + what)


def _opener(url: str, env: Mapping[str, str]) -> Any:
    """Proxies from ``env`` like the SDK's httpx would, never for a loopback endpoint."""
    import urllib.parse  # here: only a model probe needs them (start-up of doctor, issue 20)
    import urllib.request

    host = urllib.parse.urlsplit(url).hostname or ""
    proxies: dict[str, str] = {}
    if host not in ("127.0.0.1", "localhost", "::1"):
        for scheme in ("http", "https"):
            value = env.get(f"{scheme}_proxy") or env.get(f"{scheme.upper()}_PROXY")
            if value:
                proxies[scheme] = value
    return urllib.request.build_opener(urllib.request.ProxyHandler(proxies))


def check_model(
    model: ModelConfig, env: Mapping[str, str], *, timeout: float = PROBE_TIMEOUT
) -> Check:
    if model.backend == "offline":
        return Check(OK, "model", "offline backend: no key and no network needed")
    if model.backend == "claude-code":
        return check_claude_code(model, env)
    if model.backend != "anthropic":
        return Check(
            FAIL,
            "model",
            f"unknown backend {model.backend!r}",
            "[model] backend = offline | anthropic | claude-code",
        )
    key = env.get("ANTHROPIC_API_KEY", "").strip()
    token = "" if key else env.get("ANTHROPIC_AUTH_TOKEN", "").strip()
    if not key and not token and not model.base_url:
        return Check(
            FAIL,
            "model",
            "anthropic backend but ANTHROPIC_API_KEY is not set in this environment (nor "
            "ANTHROPIC_AUTH_TOKEN)",
            "set it where the daemon runs (systemctl --user edit dreamd → Environment= or "
            "EnvironmentFile=), or use backend = \"claude-code\" with a Claude Code login",
        )
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    url = f"{base}/v1/models?limit=1"
    headers = {"anthropic-version": ANTHROPIC_VERSION, "user-agent": "dreamd-doctor"}
    if key:
        headers["x-api-key"] = key
    elif token:
        headers["authorization"] = f"Bearer {token}"
    credential = (
        "the key" if key else "the bearer token (ANTHROPIC_AUTH_TOKEN)" if token else None
    )
    import urllib.request

    request = urllib.request.Request(url, headers=headers, method="GET")
    wait = min(timeout, model.timeout) if model.timeout > 0 else timeout
    try:
        with _opener(url, env).open(request, timeout=wait) as response:
            code = int(response.status)
    except urllib.error.HTTPError as exc:
        code = exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Check(
            FAIL,
            "model",
            f"cannot reach {base} ({reason})",
            "check the network or proxy, or [model] base_url (is the local server running?)",
        )
    if 200 <= code < 300:
        accepted = f"accepted {credential}" if credential else "needs no credential"
        return Check(
            OK, "model", f"anthropic endpoint {base} answered and {accepted} (model {model.model})"
        )
    if code in (401, 403):
        if credential is None:
            detail = f"{base} wants a credential (HTTP {code}) and none is set"
        else:
            detail = f"{base} rejected {credential} (HTTP {code})"
        return Check(FAIL, "model", detail, "check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN")
    if code in (429, 529) or code >= 500:
        return Check(
            WARN,
            "model",
            f"{base} is reachable but busy or failing (HTTP {code})",
            "try again later",
        )
    return Check(
        WARN,
        "model",
        f"{base} is reachable but answered HTTP {code} to GET /v1/models "
        "(fine for servers that do not list models)",
    )


def check_claude_code(model: ModelConfig, env: Mapping[str, str]) -> Check:
    """The CLI the daemon would run, and whether it is logged in (``claude auth status``: no
    model call, no tokens spent)."""
    from dreamd.models.claude_code_backend import resolve_claude
    from memory.errors import ModelMisconfigured

    try:
        exe = resolve_claude(model.claude_path, env)
    except ModelMisconfigured as exc:
        return Check(
            FAIL,
            "model",
            str(exc),
            "npm install -g @anthropic-ai/claude-code, or set [model] claude_path",
        )
    import subprocess  # here: only this backend and a configured hook run a process (start-up, issue 20)

    try:
        proc = subprocess.run(
            [str(exe), "auth", "status"], env=dict(env), capture_output=True, text=True,
            timeout=CLI_PROBE_TIMEOUT, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(FAIL, "model", f"claude CLI {exe}: cannot run `claude auth status`: {exc}")
    try:
        state = json.loads(proc.stdout)
    except ValueError:
        state = None
    if not isinstance(state, dict):
        said = " ".join((proc.stderr or proc.stdout).split())[:200]
        return Check(
            WARN,
            "model",
            f"claude CLI {exe}: could not read its login state ({said or 'no output'})",
            "claude update",
        )
    if state.get("loggedIn") is not True:
        return Check(
            FAIL,
            "model",
            f"claude CLI {exe} is not logged in for this user",
            "run `claude` and /login as the user dreamd runs as, or `claude setup-token` and "
            "set CLAUDE_CODE_OAUTH_TOKEN where the daemon runs",
        )
    method = state.get("authMethod") or "unknown method"
    return Check(
        OK,
        "model",
        f"claude-code backend: {exe} logged in ({method}), model {model.model}",
    )


def check_model_health(path: Path, probe: Check) -> Check | None:
    """What the daemon's last model call said (None: nothing to report).

    A note stays until the daemon's next successful call, so after a fix that this run's probe
    confirms, it is only a WARN saying the note is out of date.
    """
    from dreamd.models.health import read_health

    note = read_health(path)
    if note is None:
        return None
    if note.get("state") == "unreadable":
        return Check(WARN, "model health", str(note.get("error")), f"rm {path}")
    error = note.get("error")
    since = note.get("at") or "?"
    if probe.status == OK:
        return Check(
            WARN,
            "model health",
            f"model misconfigured at {since} (the daemon's last call): {error}; the probe above "
            "now succeeds, so the note clears at the next successful call",
            "dreamd retry (the failed jobs)",
        )
    return Check(
        FAIL,
        "model health",
        f"model misconfigured: {error} (since {since})",
        "fix [model] (docs/models.md), then dreamd retry",
    )


def check_daemon(spool: Path, *, proc: Path = Path("/proc")) -> Check:
    """Is a daemon serving this spool? Read from the kernel's lock table, never by locking."""
    state = daemon_status(spool, proc=proc)
    if state["running"] is None:
        return Check(OK, "daemon", "cannot tell on this system (no /proc/locks)")
    if state["running"]:
        since = f" since {state['since']}" if state["since"] else ""
        return Check(OK, "daemon", f"running, pid {state['pid']}{since}")
    return Check(
        WARN,
        "daemon",
        "not running: submitted jobs wait in the spool until it starts",
        "systemctl --user enable --now dreamd (docs/operations.md), or dreamd run",
    )


def check_failed_jobs(spool: Path) -> Check:
    sp = spool_status(spool, last=1)
    if not sp["failed"]:
        return Check(OK, "failed jobs", "none")
    newest = sp["failures"][0] if sp["failures"] else None
    detail = f"{sp['failed']} in {spool / 'failed'}"
    if newest:
        detail += f" (newest {newest['job']}: {newest['reason']})"
    return Check(
        WARN,
        "failed jobs",
        detail,
        f"read {spool / 'failed'}/<job>.error.json, fix the cause, then dreamd retry",
    )


def check_secrets(
    managed: Sequence[Path], *, cache: Path | None = None, read: Mapping[Path, bytes] | None = None
) -> Check:
    """Record files that hold a secret (issue 22), in their bytes or in their name: written by
    hand or by another tool and not taken in by a reconcile yet, or written by a dreamd older
    than the current redactor. A file named for a secret is reported without its name.

    With ``cache`` (:func:`dreamd.status.secrets.cache_path`), a file whose bytes this redactor
    already judged is not redacted again (:mod:`dreamd.status.secrets`). ``read`` holds bytes
    :func:`check_memory_files` read in this run (each file is read once, issue 20); any other
    file is read here."""
    from dreamd.status.secrets import scan_secrets
    from memory.errors import DreamdError
    from memory.store.layout import INDEX, OUR_FILE_RE, read_regular

    files: list[tuple[Path, bytes]] = []
    for directory in managed:
        try:
            names = sorted(n for n in os.listdir(directory) if n.endswith(".md") and n != INDEX and not n.startswith("."))
        except OSError:
            continue  # unreadable sets are the roots and status checks' business
        for name in names:  # the set's records and files not taken in yet
            data = read.get(directory / name) if read else None
            try:
                files.append((directory / name, read_regular(directory / name) if data is None else data))
            except (DreamdError, OSError):
                continue
    found: list[str] = []
    foreign = False
    for (path, _), (kinds, named) in zip(files, scan_secrets(files, cache), strict=True):
        if named:  # the name is never shown: it holds the secret
            found.append(f"a file in {path.parent} whose name holds one ({', '.join(dict.fromkeys([*named, *kinds]))})")
        elif kinds:
            found.append(f"{path} ({', '.join(kinds)})")
        foreign = foreign or (bool(kinds or named) and not OUR_FILE_RE.match(path.name))
    checked = len(files)
    if not found:
        return Check(OK, "secrets", f"none in {checked} record file(s)")
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    fix = (
        "the daemon's next reconcile (dreamd once) writes files from outside redacted; "
        "dreamd forget NAME or edit the file for the others"
        if foreign
        else "dreamd forget NAME, or edit the file: the edit is taken in redacted"
    )
    return Check(WARN, "secrets", f"{len(found)} record file(s) hold a secret: {'; '.join(found[:3])}{more}", fix)


def check_other_spools(config: Config, env: Mapping[str, str]) -> Check:
    from dreamd.status.collect import other_spools

    others = other_spools(config, env)
    if not others:
        return Check(OK, "other spools", "no jobs wait in a spool the daemon does not read")
    first = others[0]
    waiting = sum(first[q] for q in ("new", "cur", "deferred"))
    return Check(
        WARN,
        "other spools",
        f"{waiting} job(s) wait in {first['path']}, but this setup reads {config.daemon.spool}"
        + (f" (and {len(others) - 1} more spool(s))" if len(others) > 1 else ""),
        f"set the same spool for the hook and the daemon ($DREAMD_SPOOL or [daemon] spool), "
        f"then mv {first['path']}/new/*.json {config.daemon.spool}/new/",
    )


def _dreamd_hook_commands(settings: Mapping[str, object], event: str) -> list[dict[str, object]]:
    hooks = settings.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    found: list[dict[str, object]] = []
    for group in groups if isinstance(groups, list) else []:
        entries = group.get("hooks") if isinstance(group, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            command = entry.get("command") if isinstance(entry, dict) else None
            if isinstance(command, str) and _runs_dreamd_hook(command):
                found.append(entry)
    return found


def _runs_dreamd_hook(command: str) -> bool:
    """A command that names dreamd and its ``hook`` word, however the shell line goes on
    (``dreamd hook; exit 3``, ``dreamd hook || true``: both still a dreamd hook to check)."""
    if "dreamd" not in command:
        return False
    words = command.replace(";", " ").replace("|", " ").replace("&", " ").replace(")", " ").split()
    return "hook" in words


def _this_dreamd(*words: str) -> str:
    """This dreamd's own absolute command line with ``words`` (what a fix should say to run)."""
    from dreamd.setup.command import dreamd_argv

    return shlex.join([*dreamd_argv(sys.argv[0], sys.executable), *words])


def dreamd_plugin(env: Mapping[str, str]) -> tuple[str, Path] | None:
    """The installed, enabled dreamd plugin: ``(id, install path)``, or None."""
    from dreamd.hook.claude_paths import config_dir, read_settings

    base = config_dir(env)
    installed = read_settings(base / "plugins" / "installed_plugins.json").get("plugins")
    enabled = read_settings(base / "settings.json").get("enabledPlugins")
    if not isinstance(installed, dict):
        return None
    for plugin_id, entries in installed.items():
        if not str(plugin_id).startswith("dreamd@") or not isinstance(entries, list):
            continue
        if isinstance(enabled, dict) and enabled.get(plugin_id) is False:
            continue
        for entry in entries:
            where = entry.get("installPath") if isinstance(entry, dict) else None
            if isinstance(where, str) and Path(where, "hooks", "hooks.json").is_file():
                return str(plugin_id), Path(where)
    return None


class HookCommand(FrozenValue):
    """One hook command Claude Code would run for dreamd, and where it is configured."""

    __slots__ = ("command", "events", "timeout", "source", "plugin_root")  # noqa: RUF023 (field order)
    command: str
    events: tuple[str, ...]
    timeout: float
    source: str
    plugin_root: Path | None

    def __init__(
        self, command: str, events: tuple[str, ...], timeout: float, source: str, plugin_root: Path | None = None
    ) -> None:
        self.set_fields(command=command, events=events, timeout=timeout, source=source, plugin_root=plugin_root)


def configured_hook_commands(env: Mapping[str, str]) -> list[HookCommand]:
    """Every distinct dreamd hook command in the user settings and the dreamd plugin."""
    from dreamd.hook.claude_paths import config_dir, read_settings
    from dreamd.hook.main import HOOK_EVENTS

    found: dict[tuple[str, str], HookCommand] = {}
    sources: list[tuple[str, Mapping[str, object], Path | None]] = []
    path = config_dir(env) / "settings.json"
    sources.append((str(path), read_settings(path), None))
    plugin = dreamd_plugin(env)
    if plugin is not None:
        sources.append((f"plugin {plugin[0]}", read_settings(plugin[1] / "hooks" / "hooks.json"), plugin[1]))
    for source, settings, root in sources:
        for event in HOOK_EVENTS:
            for entry in _dreamd_hook_commands(settings, event):
                command = str(entry["command"])
                if root is not None:
                    command = command.replace("${CLAUDE_PLUGIN_ROOT}", str(root))
                raw = entry.get("timeout")
                timeout = float(raw) if isinstance(raw, int | float) and raw > 0 else 60.0
                key = (source, command)
                old = found.get(key)
                events = (*old.events, event) if old else (event,)
                found[key] = HookCommand(command, events, min(timeout, old.timeout) if old else timeout, source, root)
    return list(found.values())


HOOK_CHECK_TIMEOUT = 30.0


def run_hook_command(hook: HookCommand, env: Mapping[str, str]) -> tuple[int, str, str]:
    """Run ``hook`` as Claude Code does (``sh -c``, this environment) on a SessionStart payload
    in an empty temporary directory: ``(exit code, stdout, stderr)``; 124 on a timeout."""
    run_env = dict(env)
    if hook.plugin_root is not None:
        run_env["CLAUDE_PLUGIN_ROOT"] = str(hook.plugin_root)
    import subprocess
    import tempfile  # only a configured hook needs it (random, hashlib: start-up, issue 20)

    with tempfile.TemporaryDirectory(prefix="dreamd-doctor-") as cwd:
        payload = {
            "hook_event_name": "SessionStart",
            "session_id": probe_token(),
            "cwd": cwd,
            "source": "startup",
            PROBE_KEY: probe_token(),
        }
        run_env["CLAUDE_PROJECT_DIR"] = cwd
        try:
            proc = subprocess.run(
                ["sh", "-c", hook.command], input=json.dumps(payload), env=run_env, cwd=cwd,
                capture_output=True, text=True, timeout=min(hook.timeout, HOOK_CHECK_TIMEOUT),
                check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return 124, "", f"no answer within {min(hook.timeout, HOOK_CHECK_TIMEOUT):g} s"
        except OSError as exc:
            return 126, "", str(exc)
    return proc.returncode, proc.stdout, proc.stderr


PROBE_KEY = "dreamd_probe"
"""A payload field only doctor sends: ``dreamd hook`` echoes it in its answer, so an exit 0
that never ran dreamd (``… || true``, a wrapper that swallows a missing command) is told
apart from a hook that ran (dreamd.hook.main.handle)."""


def probe_token() -> str:
    """The token doctor's probe payload carries (also its session id)."""
    return f"dreamd-doctor-{os.getpid()}"


def answered_probe(out: str) -> bool:
    """Whether a hook's stdout is dreamd hook's answer to doctor's probe."""
    try:
        answer = json.loads(out)
    except ValueError:
        return False
    return isinstance(answer, dict) and answer.get(PROBE_KEY) == probe_token()


HOOK_CHECK_CONCURRENCY = 4
"""Hook commands doctor runs at once (each is one short-lived process)."""


def _run_distinct(hooks: Sequence[HookCommand], env: Mapping[str, str]) -> dict[tuple[str, Path | None], tuple[int, str, str]]:
    """Each distinct hook command run once, up to :data:`HOOK_CHECK_CONCURRENCY` at a time.

    Claude Code runs a command the same way whichever event or file names it: the payload is
    the same SessionStart, the environment differs only by ``CLAUDE_PLUGIN_ROOT`` (part of the
    key). Of the timeouts of one command, the shortest applies, as if it ran for each entry."""
    distinct: dict[tuple[str, Path | None], HookCommand] = {}
    for hook in hooks:
        key = (hook.command, hook.plugin_root)
        seen = distinct.get(key)
        if seen is None or hook.timeout < seen.timeout:
            distinct[key] = hook
    if len(distinct) == 1:
        ((key, hook),) = distinct.items()
        return {key: run_hook_command(hook, env)}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(HOOK_CHECK_CONCURRENCY, len(distinct)), thread_name_prefix="dreamd-doctor-hook") as pool:
        futures = {key: pool.submit(run_hook_command, hook, env) for key, hook in distinct.items()}
        return {key: future.result() for key, future in futures.items()}


def _setup_fix(hook: HookCommand, what: str) -> str:
    """The setup that repairs ``hook``: a plugin's hook runs the launcher, which needs the command
    ``setup --plugin`` records (plain ``setup`` would add a second set of hooks instead)."""
    if hook.plugin_root is not None:
        return f"{_this_dreamd('setup', '--plugin')} (records the dreamd the plugin's launcher runs)"
    return f"{_this_dreamd('setup')} {what}"


def check_hooks_run(env: Mapping[str, str]) -> Check | None:
    """Each configured dreamd hook command, run the way Claude Code runs it (None: none set)."""
    hooks = configured_hook_commands(env)
    if not hooks:
        return None
    results = _run_distinct(hooks, env)
    ran: list[str] = []
    for hook in hooks:
        code, out, err = results[(hook.command, hook.plugin_root)]
        said = " ".join((err or out).split())[:300]
        where = f"{hook.source} ({', '.join(hook.events)})"
        if code == 127:
            return Check(
                FAIL,
                "claude code hooks run",
                f"`{hook.command}` from {where}: not found on Claude Code's PATH ({said or 'exit 127'}); "
                "every session is lost",
                _setup_fix(hook, "(writes the absolute path of dreamd into the hooks)"),
            )
        if code != 0:
            return Check(
                FAIL,
                "claude code hooks run",
                f"`{hook.command}` from {where} exited {code}: {said or 'no output'}",
                "run it by hand with a SessionStart payload on stdin to see why; "
                + _setup_fix(hook, "repoints the hooks at this dreamd"),
            )
        if out.strip():
            try:
                json.loads(out)
            except ValueError:
                return Check(
                    FAIL,
                    "claude code hooks run",
                    f"`{hook.command}` from {where} printed something that is not hook JSON: {out[:120]!r}",
                )
        if answered_probe(out) and isinstance(error := json.loads(out).get("dreamd_error"), str):
            return Check(
                FAIL,
                "claude code hooks run",
                f"`{hook.command}` from {where} ran, and dreamd hook failed: {error[:300]}",
                "every SessionStart and UserPromptSubmit of Claude Code meets this error (hook.log has it too)",
            )
        if not answered_probe(out):
            return Check(
                FAIL,
                "claude code hooks run",
                f"`{hook.command}` from {where} exited 0 but dreamd hook never answered "
                f"({said or 'no output'}): the command does not run dreamd, or hides its answer",
                _setup_fix(hook, "(writes a plain `<dreamd> hook` command into the hooks)"),
            )
        ran.append(f"`{hook.command}`")
    return Check(OK, "claude code hooks run", f"{', '.join(ran)} ran (sh -c, this PATH) and exited 0")


def check_mcp(env: Mapping[str, str]) -> Check:
    """The MCP server Claude Code starts for this user: registered, and its command found."""
    from dreamd.setup import mcp

    plugin = dreamd_plugin(env)
    entry = mcp.user_server(env)
    if entry is None:
        if plugin is not None and (plugin[1] / ".mcp.json").is_file():
            return Check(OK, "mcp server", f"served by plugin {plugin[0]} ({plugin[1] / '.mcp.json'})")
        return Check(
            WARN,
            "mcp server",
            f"no dreamd MCP server registered for the user in {mcp.claude_json(env)}",
            f"{_this_dreamd('setup')} (or: claude mcp add --scope user dreamd -- {_this_dreamd('mcp')})",
        )
    command = entry.get("command")
    raw_args = entry.get("args")
    args: list[Any] = raw_args if isinstance(raw_args, list) else []
    shown = shlex.join([str(command), *map(str, args)])
    if not isinstance(command, str) or not command:
        return Check(FAIL, "mcp server", f"the dreamd entry in {mcp.claude_json(env)} has no command", _this_dreamd("setup"))
    if os.sep in command:
        found = os.path.isfile(command) and os.access(command, os.X_OK)
    else:
        import shutil  # only a registered server's bare command name needs it (bz2, lzma)

        found = shutil.which(command, path=env.get("PATH", "")) is not None
    if not found:
        return Check(
            FAIL,
            "mcp server",
            f"registered as `{shown}`, but {command} is not found (Claude Code cannot start it)",
            _this_dreamd("setup"),
        )
    return Check(OK, "mcp server", f"registered for the user as `{shown}`")


def check_service(
    spool: Path, env: Mapping[str, str], runner: Runner, *, platform: str = sys.platform,
    proc: Path = Path("/proc"), run_user: Path | None = None,
) -> Check:  # fmt: skip
    """Who restarts the daemon: the systemd user unit, the launchd agent, or no one.

    With ``run_user`` (``/run/user`` when ``runner`` runs the real commands), ``systemctl --user``
    is not started where it could reach no user manager (:func:`dreamd.setup.service.no_user_manager`):
    the same verdict, without a process (start-up, issue 20)."""
    from dreamd.setup.service import (
        AGENT_LABEL,
        UNIT_NAME,
        detect_manager,
        plist_path,
        start_hint,
        unit_path,
    )

    if run_user is None:
        manager = detect_manager(runner, platform=platform)
    else:
        manager = detect_manager(runner, platform=platform, env=env, run_user=run_user)
    if manager.kind == "systemd":
        path = unit_path(env)
        _, active = runner(["systemctl", "--user", "is-active", UNIT_NAME])
        _, enabled = runner(["systemctl", "--user", "is-enabled", UNIT_NAME])
        active, enabled = active.strip() or "unknown", enabled.strip() or "unknown"
        if not path.exists() and enabled in ("unknown", "not-found"):
            return Check(WARN, "service", f"no dreamd user unit ({path} absent): nothing keeps the daemon running", _this_dreamd("setup"))
        if active == "active":
            return Check(OK, "service", f"systemd user unit {UNIT_NAME}: active, {enabled}")
        return Check(
            FAIL if active == "failed" else WARN,
            "service",
            f"systemd user unit {UNIT_NAME} is {active} ({enabled})",
            f"systemctl --user enable --now {UNIT_NAME}; journalctl --user -u dreamd says why",
        )
    if manager.kind == "launchd":
        path = plist_path(env)
        if not path.exists():
            return Check(WARN, "service", f"no launchd agent ({path} absent)", _this_dreamd("setup"))
        code, _ = runner(["launchctl", "print", f"gui/{os.getuid()}/{AGENT_LABEL}"])
        if code == 0:
            return Check(OK, "service", f"launchd agent {AGENT_LABEL} is loaded")
        return Check(WARN, "service", f"launchd agent {path} is not loaded", f"launchctl bootstrap gui/{os.getuid()} {path}")
    from dreamd.setup.command import dreamd_argv
    from memory.spool.queue import state_home

    state = daemon_status(spool, proc=proc)
    hint = start_hint(dreamd_argv(sys.argv[0], sys.executable), state_home(env))
    if state["running"]:
        return Check(
            WARN,
            "service",
            f"no service manager here ({manager.detail}): dreamd run (pid {state['pid']}) is alive "
            "but unsupervised; nothing restarts it after a crash or a reboot",
        )
    return Check(
        WARN,
        "service",
        f"no service manager here ({manager.detail}) and no dreamd run alive: jobs wait in the spool",
        hint,
    )


def check_claude_hooks(env: Mapping[str, str]) -> Check:
    """Claude Code hands sessions to dreamd only through hooks: the user settings' or the
    dreamd plugin's."""
    from dreamd.hook.claude_paths import config_dir, read_settings
    from dreamd.hook.main import HOOK_EVENTS

    path = config_dir(env) / "settings.json"
    settings = read_settings(path)
    plugin = dreamd_plugin(env)
    in_settings = any(_dreamd_hook_commands(settings, e) for e in HOOK_EVENTS)
    if plugin is not None:
        hooks = read_settings(plugin[1] / "hooks" / "hooks.json")
        missing = [e for e in HOOK_EVENTS if not _dreamd_hook_commands(hooks, e)]
        if in_settings:
            return Check(
                WARN,
                "claude code hooks",
                f"both plugin {plugin[0]} and {path} run dreamd hook: every session is sent twice",
                f"{_this_dreamd('setup', '--plugin')} takes the dreamd hooks out of {path} (the plugin's stay); "
                "or claude plugin uninstall dreamd@dreamd to keep those",
            )
        if missing:
            return Check(WARN, "claude code hooks", f"plugin {plugin[0]} misses {', '.join(missing)}", "claude plugin update dreamd")
        return Check(OK, "claude code hooks", f"plugin {plugin[0]} runs dreamd hook for all {len(HOOK_EVENTS)} events")
    fix = f"{_this_dreamd('setup')}, or add the hooks snippet from the README (section Claude Code) to {path}"
    if not settings and not path.exists():
        return Check(
            WARN, "claude code hooks", f"{path} does not exist: no session reaches dreamd", fix
        )
    configured = {event: _dreamd_hook_commands(settings, event) for event in HOOK_EVENTS}
    missing = [event for event, entries in configured.items() if not entries]
    if len(missing) == len(HOOK_EVENTS):
        return Check(WARN, "claude code hooks", f"no hook in {path} runs dreamd hook", fix)
    if missing:
        return Check(
            WARN,
            "claude code hooks",
            f"{path} runs dreamd hook for {len(HOOK_EVENTS) - len(missing)} of {len(HOOK_EVENTS)} "
            f"events; missing: {', '.join(missing)}",
            fix,
        )
    untimed = [e for e, entries in configured.items() if any("timeout" not in x for x in entries)]
    if untimed:
        return Check(
            WARN,
            "claude code hooks",
            f"no timeout for {', '.join(untimed)} in {path} (Claude Code cancels a SessionEnd "
            "hook after 1.5 s by default)",
            fix,
        )
    return Check(
        OK, "claude code hooks", f"{path} runs dreamd hook for all {len(HOOK_EVENTS)} events"
    )


# --------------------------------------------------------------------------- running


def run_checks(
    config: Config,
    *,
    env: Mapping[str, str],
    proc: Path = Path("/proc"),
    runner: Runner | None = None,
    platform: str = sys.platform,
) -> list[Check]:
    from dreamd.models.health import health_path
    from dreamd.setup.service import RUN_USER, subprocess_runner
    from dreamd.status.secrets import cache_path as secret_scan_cache

    # The real commands: systemctl is then not run where no user manager can answer it. A
    # runner given (tests) answers for systemctl itself and is always asked.
    run_user = RUN_USER if runner is None else None
    runner = subprocess_runner(env, timeout=10.0) if runner is None else runner
    spool = config.daemon.spool
    # The checks that wait on other processes (the model endpoint or CLI, each hook command,
    # systemctl) run while the ones that only read files do; the lines keep their order.
    model_bg = _Background(lambda: check_model(config.model, env))
    hooks_bg = _Background(lambda: check_hooks_run(env))
    service_bg = _Background(
        lambda: check_service(spool, env, runner, platform=platform, proc=proc, run_user=run_user)
    )
    # imports the redactor (~80 M instructions): meanwhile the others wait on their processes
    hook_code_bg = _Background(lambda: check_hook_code(env))
    managed, _ = discover_dirs(config.daemon.roots)
    read: dict[Path, bytes] = {}  # record files' bytes, read once for both file checks
    first = [
        check_config(config, env),
        check_roots(config),
        check_memory_files(managed, read),
        check_spool(spool),
        check_inotify(len(managed), proc=proc),
        check_daemon(spool, proc=proc),
    ]
    embeddings = check_embeddings(config.recall)
    failed = check_failed_jobs(spool)
    secrets = check_secrets(managed, cache=secret_scan_cache(env), read=read)
    others = check_other_spools(config, env)
    hooks = check_claude_hooks(env)
    mcp = check_mcp(env)
    placement = _placement_checks(config, env)
    model = model_bg.line()
    health = check_model_health(health_path(spool), model)
    hooks_run = hooks_bg.result()
    return [
        *first,
        model,
        *([health] if health is not None else []),
        *embeddings,
        failed,
        secrets,
        others,
        hooks,
        *([hooks_run] if hooks_run is not None else []),
        hook_code_bg.line(),
        mcp,
        service_bg.line(),
        *placement,
    ]


class _Background:
    """One check run in a thread: what it waits on is another process, so it costs doctor's
    start-up only what it takes beyond the checks run meanwhile (issue 20). Its exception, if
    any, is raised by :meth:`result`, as if it had run in line. (Not a ``Generic``: doctor does
    not import typing at run time.)"""

    def __init__(self, check: Callable[[], Check | None]) -> None:
        self._check = check
        self._value: Check | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="dreamd-doctor-check", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._check()
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> Check | None:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value

    def line(self) -> Check:
        """:meth:`result` of a check that always gives a line (the model, the service)."""
        found = self.result()
        if found is None:
            raise RuntimeError("a doctor check that always gives a line gave none")
        return found


def _placement_checks(config: Config, env: Mapping[str, str]) -> list[Check]:
    """Where sessions go, and sessions that go nowhere (issue 20): jobs for a directory outside
    ``[daemon] roots`` (the daemon fails each one) and sessions the hook could not place at all
    (auto-memory moved outside the roots, turned off, no working directory); ``dreamd status``
    shows the same facts."""
    return [check_spool_dirs(config), check_unplaced(env)]


def check_spool_dirs(config: Config) -> Check:
    """FAIL when jobs in the spool name a directory outside the roots (each of them fails)."""
    from dreamd.status.collect import spool_dirs
    from memory.roots import dir_allowed

    outside = {d: c for d, c in spool_dirs(config.daemon.spool).items() if not dir_allowed(d, config.daemon.roots)}
    if not outside:
        return Check(OK, "job directories", "every directory the spool's jobs name is inside [daemon] roots")
    shown = "; ".join(
        f"{d} ({sum(c.values())} job(s), {c['failed']} failed)" for d, c in sorted(outside.items())[:3]
    )
    more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
    where = config.source or "the config file"
    return Check(
        FAIL, "job directories", f"jobs for directories outside [daemon] roots: {shown}{more}",
        f"add them to [daemon] roots in {where} (or 'dreamd init --add-root DIR'), then 'dreamd retry'",
    )  # fmt: skip


def check_unplaced(env: Mapping[str, str]) -> Check:
    """The sessions the hook could not place: FAIL when the latest was refused by the roots
    (a configuration mistake that loses every session), WARN for the others (auto-memory
    turned off, no working directory: maybe meant, but no memory is kept for them)."""
    from dreamd.hook.placement import describe_unplaced, read_unplaced, unplaced_path
    from memory.spool.queue import state_home

    state_dir = state_home(env)
    state = read_unplaced(state_dir)
    summary = describe_unplaced(state)
    if summary is None:
        return Check(OK, "placement", "the hook placed every session it saw")
    last = state["recent"][-1] if state.get("recent") else {}
    reason = str(last.get("reason", ""))
    fix = (
        "add the directory to [daemon] roots, or map the project in [daemon] projects, or 'dreamd init "
        "--add-root <project>/.memory'"
    )
    clear = f"; then rm {unplaced_path(state_dir)}"
    status = FAIL if "outside [daemon] roots" in reason else WARN
    return Check(status, "placement", summary, fix + clear)


def check_hook_code(env: Mapping[str, str]) -> Check:
    """Whether the hook's file of compiled patterns (:mod:`memory.redact.saved`) is there and
    holds every pattern of the redactor in a form the interpreter accepts: WARN when it does
    not (the hook works, its first run compiles them and is over its budget)."""
    from memory.redact.saved import check_code, code_file
    from memory.spool.queue import state_home

    state_dir = state_home(env)
    path = code_file(state_dir)
    valid, total, why = check_code(state_dir)
    fix = "'dreamd setup' (or the daemon's start) writes it"
    if why is not None:
        detail = f"{path} {why}: the next hook compiles the redactor's {total} patterns"
        return Check(WARN, "hook code", detail, fix)
    if valid < total:
        detail = f"{path} holds {valid} of the redactor's {total} patterns: the next hook compiles the rest"
        return Check(WARN, "hook code", detail, fix)
    return Check(OK, "hook code", f"{path} holds the redactor's {total} compiled patterns")


def exit_code(checks: Sequence[Check]) -> int:
    return 1 if any(c.status == FAIL for c in checks) else 0


def run_doctor(
    config: Config,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    proc: Path = Path("/proc"),
    runner: Runner | None = None,
    platform: str = sys.platform,
) -> int:
    """Print one line per check; 1 when any check failed, else 0."""
    env = os.environ if env is None else env
    out = sys.stdout if out is None else out
    checks = run_checks(config, env=env, proc=proc, runner=runner, platform=platform)
    for c in checks:
        out.write(c.line() + "\n")
    return exit_code(checks)


def doctor_main(
    config_path: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    proc: Path = Path("/proc"),
) -> int:
    """``dreamd doctor [--config F]``: an invalid config is itself a FAIL line, not a crash."""
    env = os.environ if env is None else env
    out = sys.stdout if out is None else out
    try:
        config = load_config(config_path, env=env)
    except ConfigError as exc:
        out.write(Check(FAIL, "config", str(exc), "fix the file named above").line() + "\n")
        return 1
    return run_doctor(config, env=env, out=out, proc=proc)


def check_embeddings(recall: RecallConfig) -> list[Check]:
    """``[recall] embeddings``: no line when the key is unset; else one OK or FAIL line naming the
    model. Nothing is loaded: the files are located and their sha256 checked, and the runtime
    libraries are looked up without importing them."""
    if not recall.embeddings:
        return []
    import importlib.util

    from dreamd.embeddings.model import INSTALL_HINT, EmbeddingsUnavailable, locate

    runtime = ("numpy", "onnxruntime", "tokenizers")
    missing = [m for m in runtime if importlib.util.find_spec(m) is None]
    if missing:
        return [Check(FAIL, "embeddings", f"{', '.join(missing)} not installed for [recall] embeddings", INSTALL_HINT)]
    try:
        files = locate(recall.embeddings)
    except EmbeddingsUnavailable as exc:
        return [Check(FAIL, "embeddings", str(exc).removeprefix("embeddings: "), INSTALL_HINT)]
    spec = files.spec
    return [Check(OK, "embeddings", f"{spec.name} from {spec.weights_dist} (sha256 checked), recall fuses it with keywords")]


def cmd_doctor(args: argparse.Namespace) -> int:
    # doctor loads the config itself so an invalid one is a FAIL line, not a bare error
    return int(doctor_main(Path(args.config) if args.config else None))


def _doctor(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_doctor)


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"doctor": _doctor}
