"""The console's Starlette application: pages, actions, live updates, and the guards every
request passes.

Guards (all of them, on every request, before any handler runs):

- **Host**: the ``Host`` header must name the address the console is bound to (``127.0.0.1``,
  ``localhost`` or ``[::1]`` with its port, or the explicit host it was started with), so a
  page on another site that rebinds its DNS name to 127.0.0.1 is refused.
- **Token**: the URL ``dreamd ui`` prints carries a random token; the first request with it
  sets an HttpOnly, SameSite=Strict cookie and redirects to the same page without it. Every
  other request needs the cookie (or the token) or gets 403.
- **Origin**: a state-changing request (POST) must carry an ``Origin`` that is the console's
  own, so a form on another page cannot post to it even with the cookie.
- Every response carries a Content-Security-Policy that allows only the console's own script
  and style files: even markup that slipped into a page could not run. Record text is escaped
  by the templates (autoescape) and Markdown is rendered with raw HTML off.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from dreamd.config import Config
from dreamd.console import actions, views
from memory.errors import DreamdError
from memory.store.transaction import MemoryStore

log = logging.getLogger("dreamd.console")

COOKIE = "dreamd_console"
MAX_FORM_BYTES = 256 * 1024
"""A form larger than this is refused (a record body is at most 64 KiB)."""
POLL_SECONDS = 0.5
"""How often an open live-update stream looks at the served manifests (only while a page is
open: a console nobody is looking at does no work)."""
HEARTBEAT_SECONDS = 15.0
MAX_STREAMS = 16
"""Live-update streams one console keeps open at once; one more is refused with 503 (each polls
the served manifests, so an unbounded number would be unbounded work)."""
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


@dataclass
class ConsoleState:
    config: Config
    token: str
    port: int
    hosts: set[str] = field(default_factory=set)
    dirs: views.Directories = field(default_factory=views.Directories)
    cache: views.TextCache = field(default_factory=views.TextCache)
    streams: int = 0
    """Live-update streams open now (at most :data:`MAX_STREAMS`)."""
    stores: dict[Path, MemoryStore] = field(default_factory=dict)
    """One long-lived store per served directory: it keeps the parsed manifest until the file
    changes, so a page costs a stat, not a parse (derived, rebuilt at every start)."""

    def store(self, path: Path) -> MemoryStore:
        store = self.stores.get(path)
        if store is None:
            store = MemoryStore(path, history_generations=self.config.retention.history_generations)
            self.stores[path] = store
        return store

    def allowed_hosts(self) -> set[str]:
        base = {"127.0.0.1", "localhost", "[::1]", *self.hosts}
        return {f"{h}:{self.port}" for h in base}


_MD = MarkdownIt("commonmark", {"html": False, "linkify": False})


def markdown(text: str) -> Markup:
    """Markdown as HTML with raw HTML off: markup in a record shows as text, and markdown-it
    refuses ``javascript:``/``vbscript:``/``data:`` links (its ``validateLink``)."""
    return Markup(_MD.render(text))


def _env() -> Environment:
    env = Environment(loader=PackageLoader("dreamd.console", "templates"), autoescape=select_autoescape(default=True))
    env.filters["markdown"] = markdown
    env.globals["dir_id"] = views.dir_id
    return env


ENV = _env()


def page(request: Request, template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
    html = ENV.get_template(template).render(request=request, **values)
    return HTMLResponse(html, status_code=status_code)


def _state(request: Request) -> ConsoleState:
    state: ConsoleState = request.app.state.console
    return state


def _store(request: Request) -> tuple[Path, MemoryStore]:
    path = _state(request).dirs.get(request.path_params["dir"])
    if path is None:
        raise _NotFound("no such directory in this console")
    return path, _state(request).store(path)


class _NotFound(Exception):
    pass


async def _form(request: Request) -> dict[str, str]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise DreamdError(f"form over {MAX_FORM_BYTES} bytes")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[-1] for k, v in fields.items()}


# ------------------------------------------------------------------------------- pages


async def overview(request: Request) -> Response:
    from dreamd.status.collect import collect_status

    state = _state(request)
    paths = state.dirs.all()
    status = await asyncio.to_thread(collect_status, state.config, paths)
    types = await asyncio.to_thread(views.counts_by_type, [state.store(p) for p in paths])
    for d in status["directories"]:
        d["id"] = views.dir_id(Path(d["path"]))
        d["types"] = types.get(d["path"], {})
    return page(request, "overview.html", status=status, live="all")


async def directory(request: Request) -> Response:
    path, store = _store(request)
    q = request.query_params
    type_ = q.get("type") or None
    text = q.get("q") or None
    prompt = q.get("recall") or None
    try:
        pg = int(q.get("page") or 1)
    except ValueError:
        pg = 1
    tbl = await asyncio.to_thread(views.table, store, type_=type_, text=text, page=pg, cache=_state(request).cache)
    if not text:
        _state(request).cache.warm(store)
    recalled = None
    if prompt:
        recalled = await asyncio.to_thread(_recall, path, prompt, _state(request).config)
    return page(request, "directory.html", path=path, table=tbl, type_=type_, text=text, prompt=prompt,
                recalled=recalled, live=views.dir_id(path), query=lambda **kw: _query(q, **kw))  # fmt: skip


def _query(current: Any, **changes: Any) -> str:
    params = {k: v for k, v in current.items() if v}
    for k, v in changes.items():
        if v in (None, ""):
            params.pop(k, None)
        else:
            params[k] = str(v)
    return "?" + urlencode(params) if params else "?"


def _recall(path: Path, prompt: str, config: Config) -> dict[str, Any]:
    """What recall would pick for this prompt (the real ``memory.recall``, offline selection),
    and why: the rank and the words the record shares with the prompt."""
    from memory.retrieval.recall import recall
    from memory.retrieval.select import tokenize

    result = recall(path, prompt, limit=config.recall.limit, record_bytes=config.recall.record_bytes,
                    record_lines=config.recall.record_lines)  # fmt: skip
    asked = set(tokenize(prompt))
    picked = []
    for rank, r in enumerate(result.records, start=1):
        shared = sorted(asked & set(tokenize(f"{r.name} {r.description} {r.text}")))
        picked.append({"rank": rank, "name": r.name, "type": r.type, "description": r.description, "shared": shared})
    return {"selector": result.selector, "fallback": result.fallback_reason, "records": picked, "block": result.block}


async def record(request: Request) -> Response:
    path, store = _store(request)
    view = await asyncio.to_thread(views.record_view, store, request.path_params["name"])
    if view is None:
        raise _NotFound(f"no record named {request.path_params['name']}")
    return page(request, "record.html", path=path, view=view, live=views.dir_id(path))


async def timeline(request: Request) -> Response:
    path, store = _store(request)
    items = await asyncio.to_thread(views.timeline, store)
    current = items[0][0].generation if items else 0
    return page(request, "timeline.html", path=path, items=items, current=current, live=views.dir_id(path))


async def generation(request: Request) -> Response:
    path, store = _store(request)
    try:
        gen = int(request.path_params["gen"])
    except ValueError:
        raise _NotFound("no such generation") from None
    found = await asyncio.to_thread(views.generation_diff, store, gen)
    if found is None:
        raise _NotFound(f"generation {gen} is not kept in .history/")
    entry, diffs, merges = found
    current = views.generation_of(store)
    return page(request, "generation.html", path=path, entry=entry, words=views.describe(entry), diffs=diffs,
                merges=merges, current=current, live=views.dir_id(path))  # fmt: skip


async def spool(request: Request) -> Response:
    jobs = await asyncio.to_thread(views.spool_jobs, _state(request).config.daemon.spool)
    return page(request, "spool.html", spool=jobs, live="all")


async def edit_form(request: Request) -> Response:
    path, store = _store(request)
    view = await asyncio.to_thread(views.record_view, store, request.path_params["name"])
    if view is None or view.record is None:
        raise _NotFound(f"no readable record named {request.path_params['name']}")
    return page(request, "edit.html", path=path, view=view)


_CONFIRM = {
    "rollback": "Roll back to generation {to}: a new generation whose records equal generation {to}'s. Nothing is lost; this can be rolled back too.",
    "forget": "Forget {name}: it leaves the set in a new generation; its file is kept in .history/ and a rollback brings it back.",
    "dream": "Run this dream now (gates bypassed, the lease respected): the plan may differ from the preview if the set changed meanwhile.",
    "retry": "Put failed job {job} back in new/ for the daemon to run again.",
}


async def confirm(request: Request) -> Response:
    q = dict(request.query_params)
    action = q.pop("action", "")
    if action not in _CONFIRM:
        raise _NotFound("no such action")
    if action == "retry":
        target = "/spool/retry"
        path = None
    else:
        path, _ = _store(request)
        target = f"/d/{request.path_params['dir']}/{action}"
    try:
        words = _CONFIRM[action].format(**q)
    except KeyError:
        raise _NotFound("the action misses an argument") from None
    return page(request, "confirm.html", path=path, action=action, words=words, target=target, fields=q)


# ------------------------------------------------------------------------------- actions


def _result(request: Request, outcome: actions.Outcome, path: Path | None, plan: str = "") -> Response:
    return page(request, "result.html", status_code=200 if outcome.ok else 409, outcome=outcome, path=path, plan=plan)


async def do_rollback(request: Request) -> Response:
    path, store = _store(request)
    form = await _form(request)
    try:
        to = int(form.get("to", ""))
    except ValueError:
        return page(request, "error.html", status_code=409, message="generation must be a whole number")
    outcome = await asyncio.to_thread(actions.rollback, store, to)
    return _result(request, outcome, path)


async def do_forget(request: Request) -> Response:
    path, store = _store(request)
    form = await _form(request)
    outcome = await asyncio.to_thread(actions.forget, store, form.get("name", ""))
    return _result(request, outcome, path)


async def do_edit(request: Request) -> Response:
    path, store = _store(request)
    form = await _form(request)
    outcome = await asyncio.to_thread(
        actions.edit, store, request.path_params["name"], description=form.get("description", ""), body=form.get("body", "")
    )
    return _result(request, outcome, path)


async def do_preview(request: Request) -> Response:
    path, _ = _store(request)
    await _form(request)
    outcome, plan = await asyncio.to_thread(actions.dream, path, _state(request).config, dry_run=True)
    return page(request, "preview.html", path=path, outcome=outcome, plan=plan)


async def do_dream(request: Request) -> Response:
    path, _ = _store(request)
    await _form(request)
    outcome, _ = await asyncio.to_thread(actions.dream, path, _state(request).config, dry_run=False)
    return _result(request, outcome, path)


async def do_retry(request: Request) -> Response:
    form = await _form(request)
    outcome = await asyncio.to_thread(actions.retry, _state(request).config, form.get("job", ""))
    return _result(request, outcome, None)


# ------------------------------------------------------------------------------- live updates


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path / "manifest.json")
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


async def events(request: Request) -> Response:
    """Server-sent events: ``change`` with the directory's id whenever a served manifest is
    replaced (any commit, by anyone). Polls a ``stat`` per directory while the page is open."""
    state = _state(request)
    which = request.query_params.get("dir", "all")

    def watched() -> list[Path]:
        paths = state.dirs.all()
        return paths if which == "all" else [p for p in paths if views.dir_id(p) == which]

    if state.streams >= MAX_STREAMS:
        return PlainTextResponse(f"dreamd console: {MAX_STREAMS} live-update streams are open already\n", status_code=503)
    state.streams += 1

    async def stream() -> AsyncIterator[bytes]:
        try:
            async for chunk in watch():
                yield chunk
        finally:
            state.streams -= 1

    async def watch() -> AsyncIterator[bytes]:
        seen = {p: _signature(p) for p in watched()}
        yield b"retry: 2000\n\n"
        idle = 0.0
        while not await request.is_disconnected():
            await asyncio.sleep(POLL_SECONDS)
            idle += POLL_SECONDS
            for p in watched():
                sig = _signature(p)
                if seen.get(p) != sig:
                    seen[p] = sig
                    data = json.dumps({"dir": views.dir_id(p), "generation": views.generation_of(state.store(p))})
                    yield f"event: change\ndata: {data}\n\n".encode()
                    idle = 0.0
            if idle >= HEARTBEAT_SECONDS:
                idle = 0.0
                yield b": keep-alive\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


# ------------------------------------------------------------------------------- the guards


Handler = Callable[[Request], Awaitable[Response]]


def guard(handler: Handler) -> Handler:
    async def guarded(request: Request) -> Response:
        state = _state(request)
        host = request.headers.get("host", "")
        if host not in state.allowed_hosts():
            return PlainTextResponse(f"dreamd console: Host {host!r} is not this console's address\n", status_code=400)
        given = request.query_params.get("token")
        if given is not None and hmac.compare_digest(given, state.token):
            rest = {k: v for k, v in request.query_params.items() if k != "token"}
            target = request.url.path + ("?" + urlencode(rest) if rest else "")
            response: Response = RedirectResponse(target, status_code=303)
            response.set_cookie(COOKIE, state.token, httponly=True, samesite="strict", path="/")
            return response
        cookie = request.cookies.get(COOKIE, "")
        if not hmac.compare_digest(cookie, state.token):
            return PlainTextResponse("dreamd console: open the URL `dreamd ui` printed (it carries the token)\n", status_code=403)
        if request.method == "POST":
            origin = request.headers.get("origin", "")
            if origin.removeprefix("http://") not in state.allowed_hosts():
                return PlainTextResponse(f"dreamd console: Origin {origin!r} may not change anything here\n", status_code=403)
        try:
            return await handler(request)
        except _NotFound as exc:
            return page(request, "error.html", status_code=404, message=str(exc))
        except (DreamdError, OSError, ValueError) as exc:
            return page(request, "error.html", status_code=409, message=str(exc))
        except Exception as exc:  # a file or value nobody foresaw: one line, never a traceback page
            log.exception("console: %s %s failed", request.method, request.url.path)
            return page(request, "error.html", status_code=500, message=f"could not show this page ({type(exc).__name__})")

    return guarded


class _Headers:
    """ASGI middleware: the security headers on every response, static files included."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"),
                    (b"cache-control", b"no-store"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def _static_guard(app: Any, state: ConsoleState) -> Any:
    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if host not in state.allowed_hosts():
            await PlainTextResponse("bad Host\n", status_code=400)(scope, receive, send)
            return
        await app(scope, receive, send)

    return guarded


def create_app(state: ConsoleState) -> Any:
    routes: list[BaseRoute] = [
        Route("/", guard(overview)),
        Route("/spool", guard(spool)),
        Route("/spool/confirm", guard(confirm)),
        Route("/spool/retry", guard(do_retry), methods=["POST"]),
        Route("/events", guard(events)),
        Route("/d/{dir}", guard(directory)),
        Route("/d/{dir}/r/{name}", guard(record)),
        Route("/d/{dir}/timeline", guard(timeline)),
        Route("/d/{dir}/g/{gen}", guard(generation)),
        Route("/d/{dir}/edit/{name}", guard(edit_form)),
        Route("/d/{dir}/edit/{name}", guard(do_edit), methods=["POST"]),
        Route("/d/{dir}/confirm", guard(confirm)),
        Route("/d/{dir}/rollback", guard(do_rollback), methods=["POST"]),
        Route("/d/{dir}/forget", guard(do_forget), methods=["POST"]),
        Route("/d/{dir}/preview", guard(do_preview), methods=["POST"]),
        Route("/d/{dir}/dream", guard(do_dream), methods=["POST"]),
    ]
    static = StaticFiles(packages=[("dreamd.console", "static")])
    routes.append(Mount("/static", app=_static_guard(static, state), name="static"))
    app = Starlette(routes=routes)
    app.state.console = state
    return _Headers(app)
