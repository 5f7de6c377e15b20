"""Secrets recognised by the structure of code and config around them, not by a word before them.

* **Name–value pairs**: a Kubernetes ``env`` entry (``- name: DB_PASSWORD`` then ``value: …``),
  an ECS task definition's ``{"name": "API_TOKEN", "value": "…"}``: the name says what the
  value is, as a ``key = value`` line would.
* **CSV columns**: a header row naming a credential (``Secret Access Key``, ``password``,
  ``token``, ``Access Key Id``) and the cells of that column in the rows under it (the
  ``credentials.csv`` a cloud console hands out).
* **String literals passed to a call**: a random-looking literal given to a client
  (``Client("…")``, ``Auth('<ak>', '<sk>')``, ``client.run('<bot token>')``), or a literal with
  the shape of a strong password among a call's arguments (``PDO(dsn, 'user', 'Pw#2026')``).
* **Key armour split over string literals**: ``"-----BEGIN … PRIVATE KEY-----\\n"`` and then one
  quoted base64 line after another (Python, JS and Java concatenation).
* **JSON Web Keys**: the private members (``d``, ``p``, ``q``, ``dp``, ``dq``, ``qi``, ``k``) of an
  object with a ``kty``.
* **Connection strings without ``://``**: Go's ``user:password@tcp(host)`` DSN, Oracle's
  ``user/password@//host`` (and ``sqlplus user/password@db``).
* **The rest of a wrapped token**: a line holding one random-looking piece right after a line
  that ends with a redacted token (a key wrapped by a terminal or a chat client).
* **Config and shell assignments**: a strong-password-shaped value (upper, lower, digit and a
  symbol) assigned to any key, known or not, in a config or shell block: ``KEY=value``,
  ``key = "value"``, ``key: value`` lines at a text's start, after a code fence, after a
  config file's name, and ``export``/``setx``/``$env:`` lines.

Each reads a bounded window around its anchors: linear in the text.
"""

from __future__ import annotations

from memory.redact.context import shown_not_given
from memory.redact.engine import Anchors, Lazy, Span, in_marker, register
from memory.redact.structure import A_STRONG_SYMBOL, strong_password
from memory.redact.values import (
    base64_of_text,
    entropy,
    generated_one_case,
    is_secret_value,
    looks_random,
    reads_as_non_secret,
)

_SPLIT = Lazy(r"[._\s-]+|(?<=[a-z0-9])(?=[A-Z])")


def _credential_name(name: str) -> str | None:
    """The kind a name of a setting says its value is (``QUEUE_PASSWORD`` → password)."""
    from memory.redact.context import credential_kind

    parts = [p.lower() for p in _SPLIT.split(name) if p]
    return credential_kind(parts) if parts else None


def _judge(kind: str, value: str) -> bool:
    if not value or reads_as_non_secret(value):
        return False
    if kind in ("password", "pin"):
        return is_secret_value(value, digits_ok=True, quoted=True, min_len=4)
    return looks_random(value) or generated_one_case(value) or (
        kind != "key-material" and is_secret_value(value, digits_ok=False, quoted=True)
    )


# ---------------------------------------------------------------------------- name / value

_NAME_VALUE = Lazy(
    r"""(?:name|key)["']?[ \t]*[:=][ \t]*(?P<nq>\\?["']?)(?P<name>[A-Za-z_][\w.-]{1,63})(?P=nq)[ \t]*"""
    r"""(?:,[ \t]*|\r?\n[ \t]*|\\n[ \t]*|(?<=["'])[ \t]+)(?:-[ \t]+)?"""
    r"""["']?value["']?[ \t]*[:=][ \t]*(?P<q>\\?["']?)(?P<value>[^\s"'\\,}]{1,4096})(?P=q)"""
)
"""A name and its value as two members: a Kubernetes ``env`` entry, an ECS ``{"name": …,
"value": …}``, and the attributes of one XML element (``<add key="ApiKey" value="…"/>``,
``<property name="password" value="…"/>``)."""


def detect_name_value_pairs(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("name", "key=", "key =", "key\":", "key:")):
        if pos and (text[pos - 1].isalnum() or text[pos - 1] == "_"):
            continue  # hostname:, username=
        if text.find("value", pos + 6, pos + 160) == -1:
            continue
        m = _NAME_VALUE.match(text, pos)
        if m is None:
            continue
        kind = _credential_name(m.group("name"))
        if kind is not None and _judge(kind, m.group("value")):
            spans.append((m.start("value"), m.end("value"), _marker_kind(kind)))
    return spans


def _marker_kind(kind: str) -> str:
    return "secret" if kind in ("key-material", "security-answer") else kind


# ---------------------------------------------------------------------------- CSV columns

_CSV_HEADER_WORDS = ("access key", "secret", "password", "token", "passwd")
_ACCESS_KEY_ID = frozenset({("access", "key", "id"), ("access", "key"), ("accesskey", "id")})


def _column_kind(cell: str) -> str | None:
    parts = tuple(p.lower() for p in _SPLIT.split(cell.strip().strip('"')) if p)
    if not parts or len(parts) > 4:
        return None
    if parts[-3:] in _ACCESS_KEY_ID or parts[-2:] in _ACCESS_KEY_ID:
        return "access-key"
    return _credential_name(cell.strip().strip('"'))


def _header_line(text: str, pos: int) -> tuple[int, int] | None:
    """Where the line holding ``pos`` starts and ends, when it is short enough for a header row
    (300 characters on each side of ``pos``)."""
    start = text.rfind("\n", max(0, pos - 300), pos) + 1
    end = text.find("\n", pos, pos + 300)
    if end == -1 or (start == 0 and pos > 300):
        return None
    return start, end


def detect_csv_columns(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(_CSV_HEADER_WORDS):
        if pos < last:
            continue
        around = _header_line(text, pos)
        if around is None:
            continue  # a line this long is no CSV header
        start, end = around
        line = text[start:end]
        if "," not in line or any(c in line for c in '"{}:=\\'):
            continue  # a CSV header is plain cells (not JSON, a key = value line, a sentence)
        header = line.rstrip("\r").split(",")
        if len(header) < 2:
            continue
        columns = {i: k for i, c in enumerate(header) if (k := _column_kind(c)) is not None}
        if not columns:
            continue
        at = end + 1
        for _ in range(50):  # rows
            stop = text.find("\n", at, at + 2000)
            row_end = stop if stop != -1 else min(len(text), at + 2000)
            cells = text[at:row_end].rstrip("\r").split(",")
            if len(cells) != len(header):
                break
            offset = at
            for i, cell in enumerate(cells):
                kind = columns.get(i)
                value = cell.strip().strip('"')
                if kind is not None and value:
                    ok = looks_random(value) if kind == "access-key" else _judge(kind, value)
                    if ok:
                        begin = offset + cell.index(value)
                        spans.append((begin, begin + len(value), _marker_kind(kind)))
                offset += len(cell) + 1
            if stop == -1:
                break
            at = stop + 1
        last = at
    return spans


# ---------------------------------------------------------------------------- Markdown tables

_TABLE_HEADER_WORDS = ("password", "passwd", "secret", "token", "密码", "密碼", "口令", "密钥", "令牌")
_CJK_COLUMNS = {"密码": "password", "密碼": "password", "口令": "password", "密钥": "secret",
                "令牌": "token"}  # fmt: skip
_TABLE_RULE = Lazy(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*\r?$")
_CELL_TRIM = " \t`*"


def _pipe_cells(text: str, start: int, end: int) -> list[tuple[int, str]]:
    """The cells of a Markdown table row ``text[start:end]`` with where each begins, its
    outer pipes dropped: ``| a | b |`` → ``[(s, ' a '), (t, ' b ')]``."""
    line = text[start:end].rstrip("\r")
    lead = len(line) - len(line.lstrip(" \t"))
    body = line.strip(" \t")
    begin = start + lead
    if body.startswith("|"):
        body, begin = body[1:], begin + 1
    if body.endswith("|"):
        body = body[:-1]
    cells: list[tuple[int, str]] = []
    for cell in body.split("|"):
        cells.append((begin, cell))
        begin += len(cell) + 1
    return cells


def _table_column_kind(cell: str) -> str | None:
    name = cell.strip(_CELL_TRIM)
    return _CJK_COLUMNS.get(name) or (_column_kind(name) if name.isascii() else None)


def detect_table_columns(anchors: Anchors) -> list[Span]:
    """A Markdown table whose header row names a credential column (``| host | user |
    password |``, ``| 环境 | 账号 | 密码 |``) over its ``|---|`` rule, and the cells of that
    column in the rows under it: a made-up value there is the credential (a word, a note or a
    placeholder is not)."""
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(_TABLE_HEADER_WORDS):
        if pos < last:
            continue
        around = _header_line(text, pos)
        if around is None or text.find("|", around[0], pos) == -1:
            continue
        start, end = around
        rule_end = text.find("\n", end + 1, end + 302)
        rule_end = len(text) if rule_end == -1 else rule_end
        if _TABLE_RULE.match(text, end + 1, rule_end) is None:
            continue  # a header stands over its rule; a row that says "password" does not
        header = _pipe_cells(text, start, end)
        columns = {i: k for i, (_, c) in enumerate(header) if (k := _table_column_kind(c))}
        if not columns:
            continue
        at = rule_end + 1
        while at < len(text):
            stop = text.find("\n", at, at + 2000)
            row_end = stop if stop != -1 else min(len(text), at + 2000)
            if text.find("|", at, row_end) == -1:
                break
            cells = _pipe_cells(text, at, row_end)
            for i, (begin, cell) in enumerate(cells):
                kind = columns.get(i)
                value = cell.strip(_CELL_TRIM)
                if kind is None or not value:
                    continue
                if kind in ("password", "pin"):
                    ok = is_secret_value(value, digits_ok=True, quoted=False, min_len=4)
                else:
                    ok = _judge(kind, value)
                if ok and " " not in value:
                    head = begin + cell.index(value)
                    spans.append((head, head + len(value), _marker_kind(kind)))
            if stop == -1:
                break
            at = stop + 1
        last = at
    return spans


# ---------------------------------------------------------------------------- cookie strings

_COOKIE_LEAD = Lazy(r"[^\n=;&]{0,16}?(?=[A-Za-z_][\w-]{0,40}=)")
_COOKIE_PAIR = Lazy(r"[A-Za-z_][\w-]{0,40}=(?P<value>[^\s;,，。、&\"'`<>\\]{1,4096})")
_COOKIE_SEP = Lazy(r";[ \t]*")
_COOKIE_PART = Lazy(r"%[0-9A-Fa-f]{2}|[_.:|-]")
_LONG_HEX = Lazy(r"[0-9a-fA-F]{32,}")


def _generated_cookie(value: str) -> bool:
    """A cookie value a server generated: random, or random in the pieces it is joined from
    (URL escapes, ``_``, ``.``, ``:``), a piece of 32 or more hex digits among them."""
    if len(value) < 16 or reads_as_non_secret(value):
        return False
    if looks_random(value):
        return True
    parts = [p for p in _COOKIE_PART.split(value) if p]
    return any(looks_random(p) or _LONG_HEX.rx.fullmatch(p) is not None for p in parts)


def detect_cookie_values(anchors: Anchors) -> list[Span]:
    """The values of a cookie string said after the word (``cookie 里的 name=<v>; name2=<v>``,
    ``cookies: name=<v>``): each ``name=value`` of the run that ``;`` joins, when its value
    is generated (a preference, a flag or an analytics id of dots and digits is not)."""
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(("cookie",)):
        if pos < last:
            continue
        lead = _COOKIE_LEAD.match(text, pos + 6)
        if lead is None:
            continue
        at = lead.end()
        for _ in range(32):
            pair = _COOKIE_PAIR.match(text, at)
            if pair is None:
                break
            if _generated_cookie(pair.group("value")) and not in_marker(text, pair.start("value")):
                spans.append((pair.start("value"), pair.end("value"), "session"))
            sep = _COOKIE_SEP.match(text, pair.end())
            if sep is None:
                break
            at = sep.end()
        last = at
    return spans


# ---------------------------------------------------------------------------- call arguments

_CALLEE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")
_ARGS = Lazy(r"""[ \t]*(?:[^()"'\n]{0,200}?)?(?P<q>\\?["'])(?P<value>[^"'\\\n]{1,512})(?P=q)""")
_NOT_CLIENT_CALLS = (
    "decode", "b64", "base64", "hash", "sha", "md5", "digest", "uuid", "hex", "crc", "checksum",
    "compile", "split", "replace", "format", "print", "log", "assert", "equal", "test",
    "fixture", "sample", "example", "commit", "checkout", "revision", "fetch", "image", "icon",
    "font",
)  # fmt: skip
"""Calls whose literals are data, not credentials (a hash, a decoder, a test's expectation)."""
_CLIENT_CALLS = (
    "client", "auth", "login", "connect", "credential", "session", "api", "key", "token",
    "secret", "init", "run", "search",
)  # fmt: skip
_OBJECT_ID = Lazy(r"[a-z]{2,12}_(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{8,}$")  # price_1Mo…, cus_…: ids


_DSN_LITERAL = Lazy(r"(?i)://|^[a-z][a-z0-9]{1,15}:(?:host|dbname|server|database)=|^jdbc:")
"""A connection string given as a call's literal: a URL, a PDO/ODBC DSN (``mysql:host=…``)."""
_USER_LITERAL = Lazy(r"[A-Za-z_][A-Za-z0-9._@-]{0,63}$")


def _password_after_dsn(literals: list[tuple[int, int, str]]) -> int:
    """The index of the password among a call's literals that open with a connection string
    and a user: ``getConnection("jdbc:…", "ledger", "<password>")``, ``new PDO('mysql:host=…',
    'shop', '<password>')``; -1 when there is none. The third literal's place says what it is,
    as a key's name would: any made-up value there (not a word, a name or a placeholder)."""
    if len(literals) < 3 or _DSN_LITERAL.search(literals[0][2]) is None:
        return -1
    if "@" in literals[0][2].split("://", 1)[-1].split("/", 1)[0]:
        return -1  # the URL holds its own user (and password: the URL detector's)
    user, value = literals[1][2], literals[2][2]
    if _USER_LITERAL.rx.match(user) is None or value.isalpha() or reads_as_non_secret(value):
        return -1
    return 2 if is_secret_value(value, digits_ok=True, quoted=False, min_len=6) else -1


def detect_call_literals(anchors: Anchors) -> list[Span]:
    """String literals given to a call: a generated one to a client constructor or a login
    (not to a hash, a decoder, a test helper), a strong-password-shaped one to any call with
    two literal arguments or more (``PDO(dsn, 'user', '<password>')``)."""
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(('("', "('", '(\\"', '(b"', "(b'", '(b\\"')):  # b"…": a bytes literal
        if pos < last:
            continue
        at = pos
        lo = max(0, pos - 80)
        while at > lo and (text[at - 1] in _CALLEE_CHARS):
            at -= 1
        callee = text[at:pos].lstrip(".0123456789")
        if not callee:
            continue
        name = callee.rsplit(".", 1)[-1]
        # a client's constructor or a login (``ClientV2(``, ``Auth(``, ``client.run(``,
        # ``algoliasearch(``), not any call: ``retrieve('price_…')`` takes an id
        low = name.lower()
        named = any(w in low for w in _CLIENT_CALLS)
        clientish = named or name[:1].isupper()
        close = text.find(")", pos, pos + 600)
        if close == -1:
            continue
        if not clientish and A_STRONG_SYMBOL.search(text, pos, close) is None:
            continue  # no literal here can be a generated key or a strong password
        low_callee = callee.lower()
        if any(w in low_callee for w in _NOT_CLIENT_CALLS) or low_callee.endswith(
            ("re.match", "re.search")
        ):
            continue
        at = pos + 1
        literals: list[tuple[int, int, str]] = []
        while at < close:
            a = _ARGS.match(text, at, close)
            if a is None:
                break
            literals.append((a.start("value"), a.end("value"), a.group("value")))
            at = a.end()
        last = close
        after_user = _password_after_dsn(literals)
        for index, (start, end, value) in enumerate(literals):
            if index == after_user:
                spans.append((start, end, "password"))
                continue
            hexish = all(c in "0123456789abcdefABCDEF" for c in value)
            random = (
                clientish
                and _DSN_LITERAL.search(value) is None  # "jdbc:mysql://db:3306/shop" names a host
                and looks_random(value)
                and not base64_of_text(value)
                and _OBJECT_ID.match(value) is None
                and (not hexish or named)
            )
            if random and not reads_as_non_secret(value) and len(value) >= 24:
                spans.append((start, end, "token"))
            elif len(literals) >= 2 and strong_password(value):
                spans.append((start, end, "password"))
    return spans


# ---------------------------------------------------------------------------- key armour in literals

_ARMOUR_LITERAL = Lazy(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\\n)?[\"'][ \t]*[+,]?[ \t]*\r?\n"
)
_B64_LITERAL = Lazy(
    r"[ \t]*(?:[+,][ \t]*)?[bru]?[\"'](?P<b>[A-Za-z0-9+/=]{4,128})(?:\\n)?[\"'][ \t]*[+,]?[ \t]*\r?\n"
)


def detect_armour_literals(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("-----begin ",)):
        m = _ARMOUR_LITERAL.match(text, pos)
        if m is None:
            continue
        at = m.end()
        for _ in range(200):
            line = _B64_LITERAL.match(text, at)
            if line is None:
                break
            spans.append((line.start("b"), line.end("b"), "private-key"))
            at = line.end()
    return spans


# ---------------------------------------------------------------------------- JSON Web Keys

_JWK_PRIVATE = Lazy(
    r"\\?\"(?:d|p|q|dp|dq|qi|k)\\?\"[ \t]*:[ \t]*\\?\"(?P<value>[A-Za-z0-9_-]{16,4096})\\?\""
)  # also inside a JSONL string (\"d\":\"…\")


def detect_jwk_private_members(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(('"kty"', 'kty\\"')):
        lo = max(last, text.rfind("{", max(0, pos - 2000), pos) + 1)
        hi = text.find("}", pos, pos + 8192)
        if hi == -1:
            continue
        for m in _JWK_PRIVATE.finditer(text, lo, hi):
            spans.append((m.start("value"), m.end("value"), "private-key"))
        last = hi
    return spans


# ---------------------------------------------------------------------------- DSNs without ://

_GO_DSN = Lazy(r"(?P<user>[A-Za-z0-9._$-]{1,64}):(?P<value>[^\s:@/\"'\\`]{1,256})$")
_ORACLE = Lazy(r"(?P<user>[A-Za-z0-9._$#-]{1,64})/(?P<value>[^\s/@\"'\\`]{1,256})$")
_ORACLE_CMD = Lazy(
    r"(?i)\b(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl|sqlcl|sql)[ \t]+(?:-[A-Za-z]+[ \t]+)*"
    r"(?P<user>[A-Za-z0-9._$#-]{1,64})/(?P<value>[^\s/@\"'\\`]{1,256})(?=@|[ \t]|$)"
)


def detect_dsn_userinfo(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("@tcp(", "@tcp4(", "@tcp6(", "@unix(", "@udp(")):
        m = _GO_DSN.search(text, max(0, pos - 330), pos)
        if m is not None and not reads_as_non_secret(m.group("value")):
            spans.append((m.start("value"), m.end("value"), "password"))
    for pos in anchors.positions(("@//",)):
        m = _ORACLE.search(text, max(0, pos - 330), pos)
        if m is not None and not reads_as_non_secret(m.group("value")):
            spans.append((m.start("value"), m.end("value"), "password"))
    for pos in anchors.positions(("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl")):
        m = _ORACLE_CMD.match(text, pos)
        if m is not None and not reads_as_non_secret(m.group("value")):
            spans.append((m.start("value"), m.end("value"), "password"))
    return spans


# ---------------------------------------------------------------------------- wrapped tokens

_PIECE_LINE = Lazy(
    r"[ \t]*(?:[\u4e00-\u9fff]{1,8}[ \t]*[：:]?|[A-Za-z]{1,12}[ \t]*[0-9]?[ \t]*:)?"  # 后半段, part 2:
    r"[ \t]*(?P<piece>[A-Za-z0-9+/=_-]{12,256})[ \t]*(?=\r?\n|\\n|\\?[\"']|$)"
)


def _piece(token: str) -> bool:
    """A piece of a generated token: random-looking, or varied with a digit, or varied in both
    letter cases (the rest of a key cut in two may hold no digit)."""
    both_cases = any(c.isupper() for c in token) and any(c.islower() for c in token)
    varied = entropy(token)
    return (
        (
            looks_random(token)
            or (varied >= 3.5 and any(c.isdigit() for c in token))
            or (both_cases and varied >= 3.8)
        )
        and any(c.isalpha() for c in token)
        and not base64_of_text(token)
    )


_NEXT_LITERAL = Lazy(
    r"(?P<q>\\?[\"'])[ \t]*(?P<op>\+|,)[ \t]*(?P=q)(?P<piece>[A-Za-z0-9+/=_-]{12,256})(?P=q)"
)


def detect_wrapped_rest(anchors: Anchors) -> list[Span]:
    """The rest of a token a detector found cut: the lines after it (a key wrapped in a
    terminal or a PEM-like block), the next string literal of a concatenation (``"ghp_…" +
    "…"``, cut so that a scanner does not see it) and the literal after a key id in a pair
    (``auth=("<key id>", "<secret>")``)."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("[redacted:",)):
        close = text.find("]", pos, pos + 40)
        if close == -1 or in_marker(text, pos - 1):
            continue
        at = close + 1
        literal = _NEXT_LITERAL.match(text, at)
        if literal is not None:
            piece = literal.group("piece")
            if _piece(piece) if literal.group("op") == "+" else looks_random(piece):
                spans.append((literal.start("piece"), literal.end("piece"), "secret"))
            continue
        if text.startswith("\r\n", at):
            at += 2
        elif text.startswith("\n", at):
            at += 1
        elif text.startswith("\\n", at):
            at += 2
        else:
            continue
        for _ in range(3):
            m = _PIECE_LINE.match(text, at)
            if m is None or not _piece(m.group("piece")):
                break
            spans.append((m.start("piece"), m.end("piece"), "secret"))
            at = m.end()
            if text.startswith("\\n", at) or text.startswith("\r\n", at):
                at += 2
            elif text.startswith("\n", at):
                at += 1
            else:
                break
    return spans


_KEY_ID_MARKER = Lazy(
    r"\[REDACTED:(?:aws-access-key|aliyun-access-key|tencent-secret-id|volcengine-access-key"
    r"|access-key)\]"
    r"[ \t]*(?:[/|,，:：;]|\r?\n|\\n|和|与|(?i:and))?[ \t]*(?:\r?\n|\\n)?[ \t]*"
    r"(?P<value>[A-Za-z0-9+/_-]{24,64})(?![A-Za-z0-9+/=_-])"
)


def detect_secret_after_key_id(anchors: Anchors) -> list[Span]:
    """The secret said right after its access key id, with no label ("AKID… / <secret>",
    the id on one line and the secret on the next): a generated token there is the pair's
    secret half."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("[redacted:",)):
        m = _KEY_ID_MARKER.match(text, pos)
        if m is None:
            continue
        value = m.group("value")
        if (looks_random(value) or _piece(value)) and not reads_as_non_secret(value):
            spans.append((m.start("value"), m.end("value"), "secret"))
    return spans


# ---------------------------------------------------------------------------- JDBC thin

_THIN = Lazy(r":thin:(?P<user>[A-Za-z0-9._$#-]{1,64})/(?P<value>[^\s/@\"'\\`]{1,256})@")


def detect_jdbc_thin(anchors: Anchors) -> list[Span]:
    """``jdbc:oracle:thin:<user>/<password>@host``."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions((":thin:",)):
        m = _THIN.match(text, pos)
        if m is not None and not reads_as_non_secret(m.group("value")):
            spans.append((m.start("value"), m.end("value"), "password"))
    return spans


# ---------------------------------------------------------------------------- config blocks

_CONFIG_LINE = Lazy(
    r"[ \t]*(?:\d{1,6}(?:\t|→)[ \t]*)?(?:-[ \t]+)?(?:(?:export|set|setx|ENV|ARG)[ \t]+|\$env:)?"
    r"(?P<key>[A-Za-z_][\w.-]{0,63})[ \t]*(?:=|:(?=[ \t]))[ \t]*"
    r"(?P<q>[\"']?)(?P<value>[^\s\"'`\\]{1,256})(?P=q)[ \t]*(?:(?:[ \t]#|&&|;|\|).*)?"
)  # a comment, or the rest of a command line after it
_SKIPPED_LINE = Lazy(
    r"[ \t]*(?:\d{1,6}(?:\t|→)[ \t]*)?(?:(?:#|;|//).*|\[[^\]\n]{1,64}\]|[A-Za-z_][\w.-]{0,63}:|```\w*)?[ \t]*"
)  # blank, a comment, an INI section, a YAML parent key, a fence
_BLOCK_LINES = 60
_SHELL_ANCHORS = ("export ", "setx ", "$env:")
_CONFIG_FILES = (".env", ".ini", ".properties", ".toml", ".conf", ".cfg", ".yaml", ".yml")
_OPENERS = ("```",)
_BLOCK_ANCHORS = (*_OPENERS, *_CONFIG_FILES)


def _next_line(text: str, at: int) -> tuple[int, int, int]:
    """``(start, end, next start)`` of the line at ``at``: a real line break or ``\\n``."""
    real = text.find("\n", at, at + 1024)
    escaped = text.find("\\n", at, real if real != -1 else at + 1024)
    if escaped != -1:
        return at, escaped, escaped + 2
    if real == -1:
        end = min(len(text), at + 1024)
        return at, end, end
    return at, (real - 1 if real > at and text[real - 1] == "\r" else real), real + 1


def _config_block(text: str, at: int, spans: list[Span]) -> int:
    """The assignment lines from ``at`` on (blank lines, comments and section headers
    between them): each strong-password-shaped value goes. Returns where the block ended."""
    for _ in range(_BLOCK_LINES):
        if at >= len(text):
            break
        start, end, nxt = _next_line(text, at)
        if nxt == end and end < len(text):
            break  # no line break within 1,024 characters: no config line (a JSON record)
        m = _CONFIG_LINE.rx.fullmatch(text, start, end)
        if m is None:
            if _SKIPPED_LINE.rx.fullmatch(text, start, end) is None:
                break  # a line of prose or code: the block ended
        else:
            value = m.group("value")
            if (
                strong_password(value)
                and value == value.rstrip(".,:;")
                and not in_marker(text, m.start("value"))
                and not shown_not_given(text, m.start("value"), m.end("value"))
            ):
                spans.append((m.start("value"), m.end("value"), "password"))
        if nxt <= at:
            break
        at = nxt
    return at


def detect_config_assignments(anchors: Anchors) -> list[Span]:
    """An assignment's value of the strong-password shape in a config or shell block, whatever
    its key (``WIDGET_SEED=…``, ``export X=…``, ``mode: …``): a block starts at a text's start,
    after a code fence, after a line naming a config file, and at an ``export``/``setx``/
    ``$env:`` command."""
    text = anchors.text
    spans: list[Span] = []
    if A_STRONG_SYMBOL.search(text) is None:
        return spans  # the cheap test first: a strong value holds a symbol
    done = _config_block(text, 0, spans)
    for pos in anchors.positions(_BLOCK_ANCHORS):
        if pos < done:
            continue
        _start, end, nxt = _next_line(text, pos)
        if nxt > end and (text.startswith("```", pos) or end - pos <= 48):
            done = _config_block(text, nxt, spans)  # the file's name ends its line
    for pos in anchors.positions(_SHELL_ANCHORS):
        if pos < done:
            continue
        before = text[max(0, pos - 2) : pos]
        if pos == 0 or before[-1:] in ("\n", " ", "\t", ";", "`", "&", "|", "(") or before == "\\n":
            done = _config_block(text, pos, spans)
    return spans


register(
    *_OPENERS,
    *_CONFIG_FILES,
    *_SHELL_ANCHORS,
    ":thin:",
    "name",
    "key=", "key =", 'key":', "key:",
    *_CSV_HEADER_WORDS,
    *_TABLE_HEADER_WORDS,
    "cookie",
    '("', "('", '(\\"', '(b"', "(b'", '(b\\"',
    '"kty"', 'kty\\"',
    "@tcp(", "@tcp4(", "@tcp6(", "@unix(", "@udp(", "@//",
    "sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl",
    "[redacted:",
)  # fmt: skip
LITERAL_DETECTORS = (
    detect_armour_literals,
    detect_jwk_private_members,
    detect_dsn_userinfo,
    detect_jdbc_thin,
    detect_name_value_pairs,
    detect_csv_columns,
    detect_table_columns,
    detect_cookie_values,
    detect_call_literals,
    detect_config_assignments,
)
"""After the context detectors (a literal its word already found is a marker by then)."""
WRAP_DETECTORS = (detect_secret_after_key_id, detect_wrapped_rest)
"""Last: it reads the markers the others left."""
