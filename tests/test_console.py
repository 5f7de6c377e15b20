"""The console (``dreamd ui``) in real Chromium: every page, every action, live updates, and
hostile record text that must stay inert. Screenshots land in ``.cache/artifacts/console/``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.console_rig import REPO, Console, env_for, launch_browser, shot, start_console


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    yield from start_console(tmp_path)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_browser()


HOSTILE_BODY = (
    "Plain words first.\n\n<script>window.__pwned = 'script'</script>\n\n"
    '<img src="x" onerror="window.__pwned = \'img\'">\n\n'
    "[click me](javascript:window.__pwned='link') and **bold** text.\n"
)


def _dir(tmp: Path, project: str = "app") -> MemoryStore:
    return MemoryStore.init(tmp / "code" / project / ".memory")


def _seed(store: MemoryStore) -> None:
    store.commit(Change(add=[
        make_record("prefers-tabs", "user", "User prefers tabs for indentation", "Indent with tabs, never spaces."),
        make_record("deploy-helm", "project", "Deploys go through Helm", "We deploy to staging with Helm charts."),
        make_record("runbook-link", "reference", "The on-call runbook", "See https://wiki.example.test/runbook."),
    ]))  # fmt: skip
    store.commit(Change(add=[make_record("hostile-note", "feedback", "<b>bold</b> <script>window.__pwned='desc'</script>", HOSTILE_BODY)]))


def _open(browser: Any, console: Console) -> Any:
    context = browser.new_context()
    page = context.new_page()
    page.on("dialog", lambda d: (_ for _ in ()).throw(AssertionError(f"a dialog opened: {d.message}")))
    page.goto(console.url)
    return page


def test_overview_search_and_a_record_with_a_script_in_its_body_stays_inert(browser: Any, console: Console, tmp_path: Path) -> None:
    store = _dir(tmp_path)
    _seed(store)
    page = _open(browser, console)
    assert page.url == console.base + "/"  # the token became a cookie and left the URL
    row = page.locator("tr.dir")
    assert row.count() == 1
    assert "4" in row.locator("td.num").first.inner_text()
    assert "feedback 1" in row.inner_text() and "user 1" in row.inner_text()
    shot(page, "overview")

    row.locator("a").first.click()
    page.fill("#recall-form input[name=recall]", "which indentation style do I use?")
    page.click("#recall-form button")
    picks = page.locator("#recalled li")
    assert "prefers-tabs" in picks.first.inner_text()
    assert "indent" in picks.first.locator(".why").inner_text()
    page.fill("#text-form input[name=q]", "helm")
    page.click("#text-form button")
    names = page.locator("#records tbody tr td:nth-child(2)").all_inner_texts()
    assert names == ["deploy-helm"]
    shot(page, "directory-search")

    page.fill("#text-form input[name=q]", "")
    page.click("#text-form button")
    page.click("text=hostile-note")
    body = page.locator("#body")
    assert "<script>window.__pwned = 'script'</script>" in body.inner_text()
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("#body script, #body img, a[href^='javascript:']").count() == 0
    assert page.locator("#body strong").inner_text() == "bold"  # Markdown still renders
    assert "<script>" in page.locator("p.summary").inner_text()
    shot(page, "record-hostile")
    page.context.close()


def test_preview_and_run_a_dream_see_its_merge_then_roll_it_back(browser: Any, console: Console, tmp_path: Path) -> None:
    store = _dir(tmp_path)
    store.commit(Change(add=[
        make_record("staging-db", "project", "The staging database is read-only", "The staging database is read-only."),
        make_record("staging-db-2", "project", "The staging database is read-only", "The staging database is read-only."),
        make_record("prefers-tabs", "user", "User prefers tabs for indentation", "Indent with tabs."),
    ]))  # fmt: skip
    before = store.read().generation
    page = _open(browser, console)
    page.click("tr.dir a")
    page.click("#preview-dream")
    plan = page.locator("#plan").inner_text()
    assert "merge staging-db" in plan and "staging-db-2" in plan
    assert store.read().generation == before  # a preview changes nothing
    shot(page, "dream-preview")

    page.click("#run-dream")
    assert "dream applied" in page.locator("#outcome").inner_text()
    page.click("#new-generation")
    merges = page.locator("ul.merges li").all_inner_texts()
    assert any(sorted(m.split(" → ")[0].split(" + ")) == ["staging-db", "staging-db-2"] for m in merges)
    sources = page.locator("section.merge .source")
    assert sorted(sources.evaluate_all("els => els.map(e => e.dataset.source)")) == ["staging-db", "staging-db-2"]
    assert all("read-only" in s for s in sources.all_inner_texts())
    assert page.locator("section.diff").count() >= 1
    shot(page, "dream-diff")
    dreamed = store.read()
    assert len(dreamed.records) == 2

    page.click("text=Timeline")
    page.click(f"li.generation[data-generation='{before}'] a.rollback")
    assert f"generation {before}" in page.locator("#confirm-words").inner_text()
    page.click("#confirm")
    assert f"rolled back to generation {before}" in page.locator("#outcome").inner_text()
    page.click("text=Timeline")
    newest = page.locator("li.generation").first
    assert "by rollback" in newest.inner_text() and "restored" in newest.inner_text()
    shot(page, "timeline-after-rollback")
    assert sorted(e.name for e in store.read().records) == ["prefers-tabs", "staging-db", "staging-db-2"]
    page.context.close()


def test_forget_and_edit_are_commits_shown_in_the_record_history(browser: Any, console: Console, tmp_path: Path) -> None:
    store = _dir(tmp_path)
    _seed(store)
    page = _open(browser, console)
    page.click("tr.dir a")
    page.click("text=deploy-helm")
    page.click("#forget")
    page.click("#confirm")
    assert "removed deploy-helm" in page.locator("#outcome").inner_text()
    assert "deploy-helm" not in [e.name for e in store.read().records]
    shot(page, "forget-result")

    page.click("tr.dir a") if page.locator("tr.dir a").count() else page.goto(console.base + "/")
    page.goto(console.base + "/")
    page.click("tr.dir a")
    page.click("text=prefers-tabs")
    page.click("#edit")
    page.fill("textarea[name=body]", "Indent with tabs; a tab is 4 columns wide.")
    page.click("#save")
    assert "updated prefers-tabs" in page.locator("#outcome").inner_text()
    page.go_back()
    page.go_back()
    page.reload()
    versions = page.locator("ol.versions > li").all_inner_texts()
    assert [v.split(" · ")[1].split(" by ")[0] for v in versions] == ["added", "updated"]
    assert "4 columns" in page.locator("#body").inner_text()
    assert "4 columns" in store.read_record(next(e for e in store.read().records if e.name == "prefers-tabs")).body
    page.context.close()


def test_an_open_page_updates_while_the_daemon_commits_in_the_background(browser: Any, console: Console, tmp_path: Path) -> None:
    store = _dir(tmp_path)
    _seed(store)
    env = env_for(tmp_path)
    daemon = subprocess.Popen([sys.executable, "-m", "dreamd", "run"], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        page = _open(browser, console)
        page.click("tr.dir a")
        page.evaluate("window.__marker = 'still the same page'")
        assert page.locator("#records tbody tr").count() == 4
        code = (
            "import memory.client as c;"
            f"c.remember({str(store.path)!r}, name='uses-pnpm', type='project',"
            " description='The repo uses pnpm', body='Install with pnpm, not npm.')"
        )
        subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True, timeout=30)
        page.wait_for_selector("#records >> text=uses-pnpm", timeout=30_000)
        assert page.evaluate("window.__marker") == "still the same page"  # no reload
        assert int(page.evaluate("document.body.getAttribute('data-refreshed')") or 0) >= 1
        shot(page, "live-update")
        page.context.close()
    finally:
        daemon.terminate()
        daemon.wait(timeout=20)


def test_the_spool_page_shows_a_failed_job_and_retries_it(browser: Any, console: Console, tmp_path: Path) -> None:
    _dir(tmp_path)
    env = env_for(tmp_path)
    new = tmp_path / "spool" / "new"
    subprocess.run([sys.executable, "-m", "dreamd", "once"], cwd=REPO, env=env, check=True, timeout=60, capture_output=True)
    job = "20261201T000000.000000Z-0001"
    (new / f"{job}.json").write_text("{not json")
    subprocess.run([sys.executable, "-m", "dreamd", "once"], cwd=REPO, env=env, timeout=60, capture_output=True)
    assert (tmp_path / "spool" / "failed" / f"{job}.json").exists()
    page = _open(browser, console)
    page.click("text=Spool")
    row = page.locator("#failed tbody tr").first
    assert job in row.inner_text() and "not valid JSON" in row.inner_text()
    shot(page, "spool")
    row.locator("text=retry").click()
    page.click("#confirm")
    assert f"requeued {job}" in page.locator("#outcome").inner_text()
    assert (new / f"{job}.json").exists()
    page.context.close()


# ------------------------------------------------------------------------------- the guards


def _get(url: str, **headers: str) -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_every_request_needs_the_token_the_right_host_and_for_changes_the_right_origin(console: Console, tmp_path: Path) -> None:
    store = _dir(tmp_path)
    _seed(store)
    status, _, _ = _get(console.base + "/")
    assert status == 403
    status, _, _ = _get(console.base + "/?token=wrong")
    assert status == 403
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(console.url, timeout=10)
        raise AssertionError("the token URL did not redirect")
    except urllib.error.HTTPError as e:
        assert e.code == 303
        cookie = e.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    jar = cookie.split(";")[0]
    status, headers, _ = _get(console.base + "/", Cookie=jar)
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"]
    port = console.base.rsplit(":", 1)[1]
    status, _, body = _get(console.base + "/", Cookie=jar, Host=f"attacker.example:{port}")
    assert status == 400 and "Host" in body  # DNS rebinding
    status, _, _ = _get(console.base + "/static/console.js", Host="attacker.example")
    assert status == 400

    (ident,) = {line.split("/d/")[1].split('"')[0] for line in _get(console.base + "/", Cookie=jar)[2].splitlines() if "/d/" in line}
    generation = store.read().generation
    for origin in ("http://attacker.example", "null", ""):
        headers = {"Cookie": jar, "Content-Type": "application/x-www-form-urlencoded"}
        if origin:
            headers["Origin"] = origin
        req = urllib.request.Request(console.base + f"/d/{ident}/forget", data=b"name=deploy-helm", headers=headers, method="POST")
        try:
            urllib.request.urlopen(req, timeout=10)
            raise AssertionError("a cross-origin POST was served")
        except urllib.error.HTTPError as e:
            assert e.code == 403
    assert store.read().generation == generation
    status, _, _ = _get(console.base + "/d/0000000000000000", Cookie=jar)
    assert status == 404  # only the directories the console serves can be named


def test_binding_beyond_loopback_needs_an_explicit_flag(tmp_path: Path) -> None:
    from tests.console_rig import write_config

    write_config(tmp_path)
    out = subprocess.run([sys.executable, "-m", "dreamd", "ui", "--host", "0.0.0.0", "--port", "0"], cwd=REPO,
                         env=env_for(tmp_path), capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == ["dreamd: ui: refusing to bind 0.0.0.0: pass --allow-remote (or [ui] allow_remote) to serve beyond this machine"]
    assert json.dumps(out.stdout) == '""'
    assert not os.environ.get("DREAMD_CONSOLE_NEVER_SET")


def test_the_daemon_serves_the_console_when_ui_is_enabled_and_status_gives_its_url(tmp_path: Path) -> None:
    from tests.console_rig import write_config

    cfg = write_config(tmp_path)
    cfg.write_text(cfg.read_text() + "\n[ui]\nenabled = true\n")
    store = _dir(tmp_path)
    _seed(store)
    env = env_for(tmp_path)
    state = tmp_path / "spool" / "console.json"
    daemon = subprocess.Popen([sys.executable, "-m", "dreamd", "run"], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not state.exists() and time.monotonic() < deadline and daemon.poll() is None:
            time.sleep(0.1)
        assert state.exists(), daemon.stderr.read() if daemon.poll() is not None and daemon.stderr else "no console.json"
        assert state.stat().st_mode & 0o777 == 0o600
        out = subprocess.run([sys.executable, "-m", "dreamd", "status", "--json"], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
        url = json.loads(out.stdout)["console"]["url"]
        text = subprocess.run([sys.executable, "-m", "dreamd", "status"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=60, check=True).stdout  # fmt: skip
        assert f"console: {url}" in text
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            opener.open(url, timeout=10)
            raise AssertionError("the token URL did not redirect")
        except urllib.error.HTTPError as e:
            assert e.code == 303
            jar = e.headers["set-cookie"].split(";")[0]
        status, _, body = _get(url.split("?")[0], Cookie=jar)
        assert status == 200 and str(store.path) in body
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    assert not state.exists()
    try:
        urllib.request.urlopen(url.split("?")[0], timeout=5)
        raise AssertionError("the console outlived the daemon")
    except (urllib.error.URLError, ConnectionError):
        pass


def test_live_streams_are_bounded_and_a_bad_rollback_argument_is_one_line(console: Console, tmp_path: Path) -> None:
    """Each open live-update stream polls the served manifests: one past MAX_STREAMS is refused
    (503) instead of adding work without bound; a slot comes back when a stream closes. A form
    value that is not a generation gets one clear line, not Python's words."""
    import http.client

    from dreamd.console.app import MAX_STREAMS

    store = _dir(tmp_path)
    _seed(store)
    port = int(console.base.rsplit(":", 1)[1])
    headers = {"Cookie": f"dreamd_console={console.token}", "Host": f"127.0.0.1:{port}"}

    def open_stream() -> tuple[http.client.HTTPConnection, int]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/events?dir=all", headers=headers)
        resp = conn.getresponse()
        if resp.status == 200:
            resp.read1(16)
        return conn, resp.status

    opened = [open_stream() for _ in range(MAX_STREAMS)]
    assert [s for _, s in opened] == [200] * MAX_STREAMS
    extra, status = open_stream()
    assert status == 503
    extra.close()
    opened[0][0].close()
    deadline = time.monotonic() + 10
    while (status := open_stream()[1]) != 200 and time.monotonic() < deadline:
        time.sleep(0.5)  # the server notices the closed stream at its next poll
    assert status == 200
    for conn, _ in opened[1:]:
        conn.close()

    (ident,) = {line.split("/d/")[1].split('"')[0] for line in _get(console.base + "/", **headers)[2].splitlines() if "/d/" in line}
    req = urllib.request.Request(
        console.base + f"/d/{ident}/rollback", data=b"to=abc", method="POST",
        headers={**headers, "Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    try:
        urllib.request.urlopen(req, timeout=10)
        raise AssertionError("a rollback to 'abc' was served")
    except urllib.error.HTTPError as e:
        assert e.code == 409
        body = e.read().decode()
    assert "generation must be a whole number" in body and "invalid literal" not in body


def test_hostile_files_in_a_directory_are_named_never_followed_or_read_whole(console: Console, tmp_path: Path) -> None:
    """A directory from a stranger: a record file swapped for a symlink to a file outside, one
    for a FIFO, one grown past the size cap, and a second directory whose manifest is cut off.
    Every page answers, names the file in one line, shows nothing of the outside file and never
    prints Python's ``None`` for a value it could not read."""
    store = _dir(tmp_path)
    _seed(store)
    broken = _dir(tmp_path, "broken")
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("OUTSIDE-FILE-CONTENT do not show\n")
    files = {e.name: store.path / e.file for e in store.read().records}
    files["prefers-tabs"].unlink()
    files["prefers-tabs"].symlink_to(outside)
    files["deploy-helm"].unlink()
    os.mkfifo(files["deploy-helm"])
    with open(files["runbook-link"], "r+b") as f:
        f.truncate(200 * 1024 * 1024)  # sparse: past every cap, cheap on disk
    (broken.path / "manifest.json").write_text('{"format": 1, "generation": ')

    port = int(console.base.rsplit(":", 1)[1])
    headers = {"Cookie": f"dreamd_console={console.token}", "Host": f"127.0.0.1:{port}"}
    status, _, overview = _get(console.base + "/", **headers)
    assert status == 200
    assert "manifest.json: manifest is not valid JSON" in overview
    assert "None" not in overview.replace("none", "")
    idents = sorted({line.split('href="/d/')[1].split('"')[0] for line in overview.splitlines() if 'href="/d/' in line})
    assert len(idents) == 2
    pages: dict[str, str] = {}
    for ident in idents:
        for path in (f"/d/{ident}", f"/d/{ident}/timeline", f"/d/{ident}?q=tabs", f"/d/{ident}?q=tabs&mode=recall",
                     *(f"/d/{ident}/r/{name}" for name in files), *(f"/d/{ident}/edit/{name}" for name in files)):  # fmt: skip
            status, _, body = _get(console.base + path, **headers)
            assert status in (200, 404, 409), (path, status)
            assert "Traceback" not in body and "OUTSIDE-FILE-CONTENT" not in body, path
            pages[path] = body
    good = next(i for i in idents if "manifest is not valid JSON" not in pages[f"/d/{i}"])
    assert "is a symbolic link" in pages[f"/d/{good}/r/prefers-tabs"]
    assert "FIFO" in pages[f"/d/{good}/r/deploy-helm"]
    assert "over the" in pages[f"/d/{good}/r/runbook-link"] and "limit" in pages[f"/d/{good}/r/runbook-link"]
    assert outside.read_text() == "OUTSIDE-FILE-CONTENT do not show\n"
