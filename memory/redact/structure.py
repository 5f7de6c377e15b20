"""Secrets recognised by how they are laid out around their context, across words and lines.

* **Values on the lines after their word**: a line that ends with a credential word ("password",
  "密码：", "the secret key got wrapped:", "SecretKey 在下一行") and the one to four lines after
  it, each a single token: a password on its own line, or a key wrapped by a terminal or split
  by hand. Every piece goes.
* **Key pairs said together**: "AK/SK：<id> / <secret>", "appkey 和 secret 分别是 A 和 B", "key
  and secret are A and B": both values, when both look generated.
* **Wallet seed phrases**: after a seed / mnemonic / recovery phrase / 助记词 context, a run of
  exactly 12, 15, 18, 21 or 24 lowercase words (BIP-39's lengths) with no function word in it.
* **Key files by their layout**: the private lines of a PuTTY ``.ppk`` (``Private-Lines: N``),
  base64 of a PEM private key (a kubeconfig ``client-key-data``, a Kubernetes Secret), the
  password field of ``.pgpass`` lines (``host:port:db:user:password``).
* **Password changes**: both sides of one ("changed it from X to Y", "从 X 改成 Y") when both
  have the strong-password shape (:func:`strong_password`: upper and lower case letters,
  digits and a symbol), which the line reading (:mod:`memory.redact.clause`) and config blocks
  (:mod:`memory.redact.literals`) test too.

Each detector reads a bounded window around its anchors: linear in the text.
"""

from __future__ import annotations

from memory.redact.engine import MARKER_RE, Anchors, Lazy, Span, in_marker, register
from memory.redact.values import (
    all_classes,
    base64_of_text,
    entropy,
    is_secret_value,
    looks_random,
    reads_as_non_secret,
)

_BREAK = Lazy(r"\r?\n|\\n")
_CJK_RANGE = ("\u4e00", "\u9fff")

# ---------------------------------------------------------------------------- next lines

_LINE_WORDS = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "key", "密码", "密碼", "口令",
    "密钥", "秘钥", "密鑰", "令牌",
)  # fmt: skip
_PASSWORD_LINE_WORDS = frozenset({"password", "passwd", "passphrase", "pwd", "密码", "密碼", "口令"})
_LINE_REST = Lazy(
    r"[^\n\\]{0,48}?(?:[:：]|(?i:below|next\s+line|following|split(?:\s+it)?|wrapped)[^\n\\]{0,16}"
    r"|下一行|下面|如下|分两行|换行)[ \t]*$"
    r"|[ \t]*$"
)
_LINE_HASH = Lazy(
    r"(?i)sha|hash|digest|checksum|fingerprint|commit|public|\bid\b|uuid|request|trace|"
    r"version|哈希|指纹|公钥"
)
_SINGLE = Lazy(r"[ \t]*(?P<token>[^\s\"'`\\]{6,256})[ \t]*(?:$|(?=\\?[\"'`]))")  # or a string's end
_PIECE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")


def _piece(token: str) -> bool:
    """A piece of a generated key: base62/base64 characters, both cases and digits, varied."""
    if len(token) < 12 or any(c not in _PIECE_CHARS for c in token):
        return False
    return all_classes(token) and entropy(token) >= 3.2


def whole_word(text: str, pos: int, end: int) -> bool:
    """``text[pos:end]`` is a word or a part of an identifier (``SecretKey``, ``DB_PASSWORD``,
    ``passwords``), not letters inside another word or a token."""
    before = text[pos - 1] if pos else " "
    if before in "nrt" and pos >= 2 and text[pos - 2] == "\\":
        before = " "  # after a JSON escape ("…\\npassword")
    after = text[end] if end < len(text) else " "
    if before.isascii() and before.isalnum() and not (before.islower() and text[pos].isupper()):
        return False
    if not (after.isascii() and after.isalnum()):
        return True
    return (after.isupper() and text[end - 1].islower()) or (
        after in "sS" and not (end + 1 < len(text) and text[end + 1].isalnum())
    )


def _line_end(text: str, at: int, limit: int) -> tuple[int, int] | None:
    """``(end of the line starting at at, start of the next line)`` within ``limit`` chars:
    a real line break or a JSON string's ``\\n``."""
    hi = min(len(text), at + limit)
    real = text.find("\n", at, hi)
    escaped = text.find("\\n", at, real if real != -1 else hi)
    if escaped != -1:
        return escaped, escaped + 2
    if real == -1:
        return None
    return (real - 1 if real > at and text[real - 1] == "\r" else real), real + 1


_SETTING = Lazy(r"[A-Za-z_][\w.-]{0,63}=(?!=)")


def detect_next_line_values(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    hits = sorted((pos, word) for word in _LINE_WORDS for pos in anchors.positions((word,)))
    last = 0
    for pos, word in hits:
        end = pos + len(word)
        if pos < last:
            continue
        after = text[end : end + 1]
        if word.isascii() and (not whole_word(text, pos, end) or after in ("s", "S")):
            continue  # monkey, tokenizer, "output_tokens", a base64 line starting "pwD7…"
        if in_marker(text, pos):
            continue
        line = _line_end(text, end, 80)
        if line is None:
            continue
        rest = text[end : line[0]]
        if rest.strip() and rest.rstrip()[-1:] not in (":", "：") and not _LINE_REST.rx.fullmatch(rest):
            continue
        head = text[max(0, pos - 60) : pos]
        cut = max(head.rfind("\n"), head.rfind("\\n"))
        said = MARKER_RE.rx.sub("", head[cut + 1 :]) + rest
        if _LINE_HASH.search(said) or "[REDACTED:" in rest:
            continue
        is_password = word in _PASSWORD_LINE_WORDS
        at = line[1]
        found: list[Span] = []
        while len(found) < 4 and at < len(text):
            nxt = _line_end(text, at, 260)
            stop = nxt[0] if nxt is not None else min(len(text), at + 260)
            m = _SINGLE.match(text, at, stop)
            if m is None:
                break
            token = m.group("token")
            if reads_as_non_secret(token) or token.endswith((":", "：")) or _SETTING.match(token):
                break  # "valueFrom:" after "- name: DB_PASSWORD": a YAML key, not a value;
                # "spring.x.password=…" after "…主密码": a setting of its own, judged as one
            # a pagination cursor or a config blob in base64 decodes to text: not a key
            ok = (_piece(token) or looks_random(token)) and not base64_of_text(token)
            if not found and is_password:
                ok = ok or is_secret_value(token, digits_ok=False, quoted=False)
            if not ok:
                break
            found.append((m.start("token"), m.end("token"), "password" if is_password else "secret"))
            if nxt is None:
                break
            at = nxt[1]
        if found:
            spans.extend(found)
            last = found[-1][1]
    return spans


# ---------------------------------------------------------------------------- key pairs

_PAIR_LABEL = Lazy(
    r"(?i:\b(?:ak|access[ _-]?key(?:[ _-]?id)?|app[ _-]?key|api[ _-]?key|key[ _-]?id|client[ _-]?id"
    r"|app[ _-]?id|secret[ _-]?id|key|id))\s*(?:/|／|、|&|\+|和|与|跟|(?i:and))\s*"
    r"(?i:(?:app|client|api)[ _-]?)?$"
)
_PAIR_VALUES = Lazy(
    r"(?i:sk|secret(?:[ _-]?(?:key|access[ _-]?key))?|app[ _-]?secret|client[ _-]?secret)"
    r"(?![A-Za-z])[ \t]*(?:（[^）\n]{0,16}）|\([^)\n]{0,16}\))?[ \t]*"
    r"(?:[:：=]|分别是|分别为|是|为|(?i:are|is)\b)[ \t]*(?:[:：])?[ \t]*"
    r"(?P<a>[A-Za-z0-9+/=_-]{8,128}|\[REDACTED:[a-z0-9-]+\])[ \t]*(?:/|／|,|，|、|和|与|\||(?i:and))[ \t]*"
    r"(?P<b>[A-Za-z0-9+/=_-]{8,128}(?![A-Za-z0-9+/=_-])|\[REDACTED:[a-z0-9-]+\])"
)


def _generated(token: str) -> bool:
    """Looks generated: not a word, digits and letters or both cases, varied."""
    if reads_as_non_secret(token) or len(token) < 8:
        return False
    classes = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(c.isdigit() for c in token),
        )
    )
    return classes >= 2 and any(c.isdigit() for c in token) and entropy(token) >= 2.75


def detect_key_pairs(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("sk", "secret")):
        if pos and text[pos - 1].isascii() and text[pos - 1].isalnum():
            continue
        if _PAIR_LABEL.search(text[max(0, pos - 32) : pos]) is None:
            continue
        m = _PAIR_VALUES.match(text, pos)
        if m is None:
            continue
        halves = [(g, m.group(g)) for g in ("a", "b")]
        # a half already redacted (its own word found it) counts as generated
        if not all(v.startswith("[REDACTED:") or _generated(v) for _, v in halves):
            continue
        for g, v in halves:
            if not v.startswith("[REDACTED:"):
                spans.append((m.start(g), m.end(g), "access-key" if g == "a" else "secret"))
    return spans


# ---------------------------------------------------------------------------- seed phrases

_SEED_KIND = "mnemonic"  # not "seed-phrase": a marker's kind may end up in a record's name, and
# "phrase" (like most short words) can be one of the seed's own words
_SEED_WORDS = (
    "seed phrase", "seed words", "seed:", "seed is", "mnemonic", "recovery phrase",
    "secret phrase", "backup phrase", "wallet words", "助记词", "助记符", "恢复短语", "种子短语",
)  # fmt: skip
_SEED_RUN = Lazy(r"(?<![A-Za-z])[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23}(?![A-Za-z])")
# the same words one a line or numbered ("1. lunar\n2. orbit", "1) lunar 2) orbit", commas)
_SEED_RUN_ZH = Lazy(r"(?<![\u4e00-\u9fff])[\u4e00-\u9fff](?:[ \t\u3000]+[\u4e00-\u9fff]){11,23}(?![\u4e00-\u9fff])")
"""A Chinese BIP-39 mnemonic: its words are single characters, written with spaces between."""
_SEED_ITEM = Lazy(
    r"(?:[ \t]*(?:\r?\n|\\n|[,，、])?[ \t]*(?:\d{1,2}[.):][ \t]*)?)(?P<word>[a-z]{3,8})(?![A-Za-z])"
)
_SEED_LEAD = Lazy(r"[^\n\\]{0,40}?(?:[:：=]|\bis\b|\bare\b)|[^\n\\]{0,40}?(?=\r?\n|\\n)")
_NOT_SEED = frozenset(
    {
        "the", "and", "that", "for", "with", "this", "from", "have", "are", "was", "were",
        "will", "would", "should", "your", "our", "their", "they", "them", "then", "than", "when",
        "what", "which", "who", "not", "but", "into", "its", "has", "had", "been", "being",
        "each", "every", "some", "there", "here", "these", "those", "you", "can't", "don't",
    }
)  # fmt: skip


def _seed_list(text: str, pos: int) -> list[Span]:
    """12 to 24 seed words one a line, numbered, or separated by commas."""
    lead = _SEED_LEAD.match(text, pos)
    if lead is None:
        return []
    at = lead.end()
    found: list[Span] = []
    while len(found) < 24:
        m = _SEED_ITEM.match(text, at)
        if m is None or m.group("word") in _NOT_SEED:
            break
        found.append((m.start("word"), m.end("word"), _SEED_KIND))
        at = m.end()
    return found if len(found) in (12, 15, 18, 21, 24) else []


def detect_seed_phrases(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(_SEED_WORDS):
        if pos < last:
            continue
        m = _SEED_RUN.search(text, pos, min(len(text), pos + 400))
        if m is None or m.start() - pos > 80:
            m = _SEED_RUN_ZH.search(text, pos, min(len(text), pos + 200))
        if m is not None and m.start() - pos <= 80:
            words = m.group(0).split()
            if not (len(words) % 3 or any(w in _NOT_SEED for w in words)):
                spans.append((m.start(), m.end(), _SEED_KIND))
                last = m.end()
                continue
        listed = _seed_list(text, pos)
        if listed:
            spans.extend(listed)
            last = listed[-1][1]
    return spans


# ---------------------------------------------------------------------------- key file layouts

_PPK_LINES = Lazy(r"Private-Lines:[ \t]*(?P<n>\d{1,3})[ \t]*(?:\r?\n|\\n)")
_B64_LINE = Lazy(r"[A-Za-z0-9+/=]{4,128}")
_PPK_MAC = Lazy(r"Private-MAC:[ \t]*(?P<mac>[0-9a-fA-F]{40,128})(?![0-9a-zA-Z])")


def detect_ppk_private_lines(anchors: Anchors) -> list[Span]:
    """The ``Private-Lines: N`` body of a PuTTY key file: the N base64 lines after it, and
    the ``Private-MAC`` that follows them."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("private-lines:",)):
        m = _PPK_LINES.match(text, pos)
        if m is None:
            continue
        at, end = m.end(), m.end()
        for _ in range(int(m.group("n"))):
            line = _B64_LINE.match(text, at)
            if line is None:
                break
            end = line.end()
            br = _BREAK.match(text, end)
            if br is None:
                break
            at = br.end()
        if end > m.end():
            spans.append((m.end(), end, "private-key"))
            mac = _PPK_MAC.match(text, at)  # the key's MAC, computed over the private lines
            if mac is not None:
                spans.append((mac.start("mac"), mac.end("mac"), "private-key"))
    return spans


_B64_RUN = Lazy(r"[A-Za-z0-9+/]{40,65536}={0,2}")


def detect_base64_private_keys(anchors: Anchors) -> list[Span]:
    """Base64 of a PEM private key ("LS0tLS1CRUdJTi" is "-----BEGIN"): kubeconfig
    ``client-key-data``, a Kubernetes Secret's ``tls.key``, a key in an environment variable."""
    import base64  # here: the hook imports this module on every turn, and few turns need it
    import binascii

    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(("ls0tls1crudjti",)):
        if pos < last:
            continue
        m = _B64_RUN.match(text, pos)
        if m is None:
            continue
        last = m.end()  # a run is read once, however many times it says "-----BEGIN"
        try:
            head = base64.b64decode(m.group(0)[:72], validate=True)
        except (binascii.Error, ValueError):
            continue
        if b"PRIVATE KEY" in head or b"Static key" in head:
            spans.append((m.start(), m.end(), "private-key"))
    return spans


_PGPASS_LINE = Lazy(
    r"(?:^|\r?\n|\\n|\")[ \t]*(?:[A-Za-z0-9._-]+|\*|\[[0-9a-fA-F:]+\]):(?:\d{1,5}|\*):[^:\s\\]+:"
    r"[^:\s\\]+:(?P<value>[^\s\\\"']{1,256})(?=$|\r?\n|\\n|[ \t\"'])"
)


def detect_pgpass(anchors: Anchors) -> list[Span]:
    """``host:port:database:user:password`` lines after a ``.pgpass`` (or ``PGPASSFILE``)."""
    text = anchors.text
    spans: list[Span] = []
    reach = 0
    for pos in anchors.positions(("pgpass",)):
        at = max(pos, reach)
        hi = min(len(text), pos + 2000)
        for m in _PGPASS_LINE.finditer(text, at, hi):
            value = m.group("value")
            if value != "*" and not reads_as_non_secret(value):
                spans.append((m.start("value"), m.end("value"), "password"))
        reach = hi
    # a line of the file's own shape with no file named: the wildcard field or PostgreSQL's
    # port marks it, and the last field must then read as made up, not a word
    taken = {start for start, _end, _kind in spans}
    for pos in anchors.positions(_PGPASS_MARKS):  # before a named file too: `taken` skips its lines
        # a line, or a JSON string holding one (a tool result printed as JSON)
        line = max(text.rfind("\n", 0, pos), text.rfind("\\n", 0, pos), text.rfind('"', 0, pos), 0)
        row = _PGPASS_LINE.match(text, line)
        if row is None or row.start("value") in taken or row.start("value") < pos:
            continue
        if is_secret_value(row.group("value"), digits_ok=False, quoted=False):
            spans.append((row.start("value"), row.end("value"), "password"))
            taken.add(row.start("value"))
    return spans


_PGPASS_MARKS = (":*:", ":5432:")

_CRYPT_MARKS = (":$1$", ":$2a$", ":$2b$", ":$2y$", ":$5$", ":$6$", ":$apr1$", ":$y$", ":$argon2")
_CRYPT_ENTRY = Lazy(
    r"[ \t]*[A-Za-z_][A-Za-z0-9._-]{0,31}:"
    r"(?P<value>\$[a-z0-9]{1,8}\$[^\s:\\\"'$]{1,64}(?:\$[^\s:\\\"'$]{1,256}){1,3})(?=$|[:\s\\\"'])"
)


def detect_crypt_entries(anchors: Anchors) -> list[Span]:
    """A password hash in the second field of an account file's line: ``/etc/shadow``'s
    ``user:$6$salt$hash:19823:0:…``, ``.htpasswd``'s ``user:$apr1$salt$hash``. The line's
    place says it is a live credential of that account (a hash offline cracking starts from);
    the same modular-crypt string in a sentence or assigned in a test is an example."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(_CRYPT_MARKS):
        lo = max(0, pos - 40)  # the user field is 32 characters at most
        line = max(text.rfind("\n", lo, pos) + 1, text.rfind('"', lo, pos) + 1)
        escaped = text.rfind("\\n", lo, pos)
        if escaped != -1 and escaped + 2 > line:
            line = escaped + 2
        if line == 0 and lo > 0:
            continue
        m = _CRYPT_ENTRY.match(text, line)
        if m is not None and m.start("value") == pos + 1:
            spans.append((m.start("value"), m.end("value"), "password"))
    return spans


# ---------------------------------------------------------------------------- strong passwords

STRONG_SYMBOLS = frozenset("!@#$%^&*?~")  # not + / = (base64), . - _ (names, versions)
A_STRONG_SYMBOL = Lazy(r"[!@#$%^&*?~]")
"""One of :data:`STRONG_SYMBOLS`: every strong-shaped token holds one (the detectors' cheap test)."""


def strong_password(token: str) -> bool:
    """Upper and lower case letters, a digit and a symbol such as ``!#$%``: the shape password
    rules ask for, which code, paths, versions and hashes do not have together."""
    core = token.rstrip(".,:;")
    if not 8 <= len(core) <= 64 or not core.isascii() or not (
        any(c in STRONG_SYMBOLS for c in core)
        and any(c.isdigit() for c in core)
        and any(c.isupper() for c in core)
        and any(c.islower() for c in core)
    ):
        return False  # the cheap tests first
    if core[0] in "$-%{^" or core.startswith(("--", "0x")) or "/" in core or " " in core:
        return False  # a variable, a flag, a hex number, a path or a URL's part
    email = "@" in core[1:-1] and "." in core.split("@")[-1]
    return not email and "://" not in core and not reads_as_non_secret(core)


_CHANGE_EN = Lazy(
    r"[^.\n]{0,40}?\bfrom[ \t]+(?P<a>[^\s\"'`\\]{8,64})[ \t]+to[ \t]+(?P<b>[^\s\"'`\\]{8,64})"
)
_CHANGE_ZH = Lazy(r"从[ \t]*(?P<a>[^\s，。\"'`\\]{8,64})[ \t]*$")
_CHANGE_ZH_NEW = Lazy(r"了?[ \t]*(?P<b>[^\s，。\"'`\\]{8,64})")
_CHANGE_FROM_DEFAULT = Lazy(
    r"[^.\n]{0,40}?\bfrom[ \t]+(?:the[ \t]+)?(?:factory[ \t]+)?(?:default|old[ \t]+one|stock|"
    r"preset|original)[ \t]+to[ \t]+(?P<b>[^\s\"'`\\]{8,64})"
)
_CHANGE_VERBS = ("changed", "change", "rotated", "updated", "reset", "switched")
_CHANGE_VERBS_ZH = ("改成", "改为", "换成", "换为", "变成", "更新为", "更新成")


def detect_password_changes(anchors: Anchors) -> list[Span]:
    """"changed it from <old> to <new>", "从 <old> 改成 <new>": both, when both are strong."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(_CHANGE_VERBS):
        if text.find(" from ", pos, pos + 60) == -1:
            continue
        m = _CHANGE_EN.match(text, pos)
        if m is not None and strong_password(m.group("a")) and strong_password(m.group("b")):
            for g in ("a", "b"):
                core = m.group(g).rstrip(".,:;")
                spans.append((m.start(g), m.start(g) + len(core), "password"))
            continue
        m = _CHANGE_FROM_DEFAULT.match(text, pos)  # "changed it from the default to <new>"
        if m is not None and strong_password(m.group("b")):
            core = m.group("b").rstrip(".,:;")
            spans.append((m.start("b"), m.start("b") + len(core), "password"))
    for pos in anchors.positions(_CHANGE_VERBS_ZH):
        if text.find("从", max(0, pos - 70), pos) == -1:
            continue
        old = _CHANGE_ZH.search(text, max(0, pos - 70), pos)
        new = _CHANGE_ZH_NEW.match(text, pos + 2)
        if old is None or new is None:
            continue
        if strong_password(old.group("a")) and strong_password(new.group("b")):
            spans.append((old.start("a"), old.end("a"), "password"))
            core = new.group("b").rstrip(".,:;")
            spans.append((new.start("b"), new.start("b") + len(core), "password"))
    return spans


register(
    *_LINE_WORDS,
    "sk",
    "secret",
    *_SEED_WORDS,
    "private-lines:",
    "ls0tls1crudjti",
    "pgpass",
    *_PGPASS_MARKS,
    *_CRYPT_MARKS,
    *_CHANGE_VERBS,
    *_CHANGE_VERBS_ZH,
)
KEY_FILE_DETECTORS = (detect_ppk_private_lines, detect_base64_private_keys)
"""Run right after the shapes: a key file's body must not be read as words and values."""
STRUCTURE_DETECTORS = (
    detect_pgpass,
    detect_crypt_entries,
    detect_seed_phrases,
    detect_key_pairs,
    detect_next_line_values,
    detect_password_changes,
)
