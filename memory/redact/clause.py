"""A value anywhere in a clause that names a credential, whatever the phrasing.

The credential-word detectors (:mod:`memory.redact.context`) find a value through a connector
after the word ("is", ":", "为"…), the prose ones (:mod:`memory.redact.prose`) a value said
first in a few fixed orders. People say it every other way too: "change the ftp pw (currently
goldfish44)", "try logging into the router with Ferrous+Bramble+61 — that's what I set", "the
token I pasted earlier, ghp_…, expired". So this reads the clause itself: from a credential
word (either language, a word of its own, not part of an identifier) out to the clause's ends
on both sides (a sentence stop, a line break, a semicolon, a JSON string's edge; at most
:data:`_REACH` characters), every token in it is judged by its shape alone:

* **generated**: long, mixed classes, high entropy (:func:`memory.redact.values.looks_random`):
  anywhere in the clause (a strong password — upper, lower, digit and a symbol — anywhere on
  the word's line is taken first, by :func:`detect_strong_in_credential_lines`);
* **made up**: letters with digits (or symbols), eight characters or more, that is no word, no
  identifier (``snake_case``, ``dotted.name``, ``kebab-case``), no version, path, URL, e-mail,
  hash, UUID, placeholder or technical term (``bcrypt12``, ``1Password``): only within
  :data:`_NEAR` words of the credential word, since a clause may also name the box it is for;
  words joined by hyphens or underscores count when they are no name (both letter cases and
  three parts, or a leet word: ``Walrus-Lamp-9``);
* **one of a list**: a token of the same class shape (``Aa-Aa-9-Aa``) as one taken in the
  same clause ("wiki → <value>, mail → <value>").

A clause that says what the tokens are instead (a hash, a digest, a commit, an id, an
example) is left alone. No word or sentence list is added: the words are the credential and
login words the other detectors already read (the login verb in its inflections too: "logging
into"), and the value's test is its shape.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory.redact.context import shown_not_given
from memory.redact.engine import Anchors, Lazy, Span, in_marker, register, run
from memory.redact.shapes import SHAPE_DETECTORS
from memory.redact.structure import A_STRONG_SYMBOL, strong_password, whole_word
from memory.redact.values import (
    all_classes,
    entropy,
    looks_random,
    made_up_letters,
    reads_as_non_secret,
)

_WORDS = {
    "password": "password", "passwd": "password", "passphrase": "password", "passcode": "password",
    "pwd": "password", "pw": "password", "pin": "pin", "secret": "secret", "token": "token",
    "api key": "api-key", "apikey": "api-key", "login": "password", "creds": "password",
    "credentials": "password", "密码": "password", "密碼": "password", "口令": "password",
    "密钥": "secret", "秘钥": "secret", "令牌": "token", "登录": "password", "登陆": "password",
    "log in": "password", "log into": "password", "logging in": "password",
    "logging into": "password", "signing into": "password",
    "sign in": "password", "sign into": "password", "signing in": "password",
}  # fmt: skip
"""The credential words the context detectors already read, each with the kind it names."""

_REACH = 160
_NEAR = 6
_NEAR_COLON = 8
_BARE_NEAR = 1
_CLAUSE_STOP = Lazy(r"[.!?](?=\s|$)|\r?\n|\\n|[;。！？；]|\",\"|\":\"|\"}|\{\"")
_TOKEN = Lazy(r"(?<![^\s(\[{,:：，、（“‘])[^\s\"'`\\,;()\[\]{}<>，。；：、（）“”‘’]{6,64}")
_SAYS_WHAT = Lazy(
    r"(?i)\b(?:sha\d*|hash(?:ed|es)?|digest|checksum|md5|commit|revision|etag|uuid|"
    r"request[ _-]?id|trace|build|example|e\.g|sample|fingerprint)\b|哈希|摘要|示例|例如"
)
_ENDS_TOKEN = Lazy(r"[\s\"'`\\,;()\[\]{}<>，。；：、（）“”‘’]")
_ASIDE = Lazy(r"[(（][^()（）]{0,60}[)）]")
_HEXISH = Lazy(r"[0-9a-fA-F-]+")
_NEGATED = Lazy(r"(?i)(?:\bnot|n't|\bno|不是|并非|非)\s*(?:an?\s+|the\s+)?(?:\w+\s+)?$")
_BRAND = Lazy(r"\d+[A-Z][a-z]+")  # 1Password, 7Zip: a name, not a value
_STRIP = ".,:!?"
_OWNER_SLOT = frozenset({"for", "of", "on", "at", "to", "in", "into", "onto", "from"})
"""The word before a token that says what the credential is for ("the password for
postgres16 is …"): that token names the thing, the value comes elsewhere."""


def _by_head(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``words`` by their first two characters, the longest first ("logging into" before
    "login", "administrator" before "admin"): :func:`_starting_at`'s index."""
    index: dict[str, tuple[str, ...]] = {}
    for w in sorted(words, key=len, reverse=True):
        index[w[:2]] = (*index.get(w[:2], ()), w)
    return index


def _starting_at(index: dict[str, tuple[str, ...]], text: str, pos: int) -> str | None:
    """The longest word of ``index`` that ``text`` has at ``pos``, in any case."""
    low = text[pos : pos + 14].lower()
    return next((w for w in index.get(low[:2], ()) if low.startswith(w)), None)


_BY_HEAD = _by_head(_WORDS)


def _word_at(text: str, pos: int) -> str | None:
    """The credential word starting at ``pos`` as a word of its own, or None."""
    word = _starting_at(_BY_HEAD, text, pos)
    if word is None or not word.isascii():
        return word
    if word == "pin" and text[pos : pos + 3].islower():
        return None  # "pin the version": the verb; a PIN is written PIN or Pin
    before = text[pos - 1] if pos else " "
    if pos >= 2 and text[pos - 2] == "\\" and before in "nrt":
        before = " "  # after a JSON escape ("…\\npassword")
    after = text[pos + len(word) : pos + len(word) + 2].ljust(2)
    if after[0] in "sS" and word in ("password", "passphrase", "token", "secret"):
        after = after[1]  # plurals: "the tokens"
    after = after[0]
    if after == "." and text[pos + len(word) + 1 : pos + len(word) + 2] in ("", " ", ".", "\n"):
        after = " "  # the end of a sentence ("the password."), an ellipsis: not password.reset
    if (before.isalnum() or before in "_-.$") or (after.isalnum() or after in "_-=.("):
        return None  # inside an identifier, a word or code: the context detectors read those
    return word


_RUN_BEFORE = Lazy(r"\S{1,64}$")


def _ends_a_value(text: str, stop: int) -> bool:
    """The ``!`` or ``?`` at ``stop`` is the last character of a made-up value
    (``Biscuit1998!``), not the end of a sentence."""
    if text[stop] not in "!?" or not stop or not text[stop - 1].isalnum():
        return False
    run = _RUN_BEFORE.search(text, max(0, stop - 64), stop)
    return run is not None and _made_up(run.group() + text[stop])


def _clause(text: str, pos: int, end: int) -> tuple[int, int]:
    lo = max(0, pos - _REACH)
    start = lo
    for m in _CLAUSE_STOP.finditer(text, lo, pos):
        if not _ends_a_value(text, m.start()):
            start = m.end()
    stop = _CLAUSE_STOP.search(text, end, min(len(text), end + _REACH))
    return start, (stop.start() if stop is not None else min(len(text), end + _REACH))


def _made_up(token: str, *, introduced: bool = False) -> bool:
    """Letters with digits, eight or more, that read as a chosen value, not a name.
    ``introduced``: a connector comes right before it (:func:`_introduced`)."""
    if len(token) < 8 or not any(c.isalpha() for c in token):
        return False
    if not any(c.isdigit() for c in token) or not token.isascii():
        return False
    if any(c in "./=:\\" for c in token) or token.startswith(("-", "#", "0x")):
        return False  # a path, a setting, a flag, a colour, a hex number
    if ("_" in token or "-" in token) and not _chosen_words(token, introduced=introduced):
        other = any(not c.isalnum() and c not in "-_" for c in token)
        if "_" in token or not other:
            return False  # snake_case, kebab-case: pw-reset-v3, gpt-4o-mini, test_user_2
    if "@" in token[1:-1] and "." in token.split("@")[-1]:
        return False
    hexadecimal = all(c in "0123456789abcdefABCDEF" for c in token)
    return not hexadecimal and _BRAND.rx.fullmatch(token) is None


_JOINT = Lazy(r"[-_]")
_LEET = Lazy(r"[A-Za-z]*[a-z][0-9][a-z][A-Za-z]*")
_VERSION_PART = Lazy(r"[vV]\d+")


def _chosen_words(token: str, *, introduced: bool) -> bool:
    """Words joined by hyphens or underscores the way a password is made, not a name: a word
    spelled with a digit for a letter (``bi0s-L0ck``), or both letter cases and three parts or
    more (``Walrus-Mint-9``, ``Datum_Prism_48``) right after a connector ("is", "with", "type",
    ":", "是"…). Names in code and products keep one case (``test_user_2``, ``gpt-4o-mini``), are
    a word and a number (``Fedora-39``), and the ones in both cases (``Windows-11-Pro``,
    ``Build-Agent-07``) are named in passing ("flagged X", "policy X"), not given."""
    parts = _JOINT.split(token)
    if len(parts) < 2 or not all(parts) or not all(p.isalnum() for p in parts):
        return False
    if not (any(c.isupper() for c in token) and any(c.islower() for c in token)):
        return False
    if any(_VERSION_PART.rx.fullmatch(p) for p in parts):
        return False  # Policy-Strong-v2: a name with its version
    if any(_LEET.rx.fullmatch(p) for p in parts):
        return True
    return introduced and len(parts) >= 3


_INTRO_WORDS = frozenset(
    {"is", "was", "are", "were", "be", "it's", "it’s", "that's", "to", "with", "type", "enter",
     "use", "using", "as"}
)  # fmt: skip
_INTRO_CJK = Lazy(r"(?:是|为|為|成了?|用|输入|填)[ \t]*$")


_AS_CJK = Lazy(r"是|为|為|作为|当作")


def _said_as(between: str) -> bool:
    """The words between a value said first and its credential word say it is one ("is",
    "that's", "as", "是"): "ticket INC0042173 about the password" names a thing."""
    words = {w.strip(".,;:!?—-").lower() for w in between.split()}
    return not words.isdisjoint(_INTRO_WORDS) or _AS_CJK.search(between) is not None


def _introduced(text: str, at: int) -> bool:
    """A connector right before ``text[at]``: ``:``, ``→``, ``=``, ``(``, one of the copulas and verbs
    the context detectors read as connectors ("is", "with", "type"…), or 是/为/成/用/输入."""
    before = text[max(0, at - 24) : at].rstrip(" \t`'\"")
    if before[-1:] in (":", "：", "→", "=", "(", "（"):
        return True
    if _INTRO_CJK.search(before) is not None:
        return True
    last = before.rsplit(None, 1)[-1:] if before else []
    return bool(last) and last[0].lower() in _INTRO_WORDS


_SHAPE_CLASS = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "A" * 26 + "a" * 26 + "9" * 10,
)


def _shape(token: str) -> str:
    """``Bill-Rot-0936-Qx`` → ``Aa-Aa-9-Aa``: the runs of character classes."""
    out: list[str] = []
    for c in token.translate(_SHAPE_CLASS):
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def _value_kind(token: str, near: bool, *, introduced: bool = False) -> bool:
    if not any(c.isdigit() for c in token):
        return False  # every shape taken here holds a digit: the cheap test first
    if reads_as_non_secret(token) or token.isdigit() or token.lower().startswith("0x"):
        return False
    if any(c in ":=" for c in token.rstrip("=")) or _HEXISH.rx.fullmatch(token):
        return False  # a setting (the context detectors read those), a hash, an address
    if token.count("/") >= 2 or token.startswith(("/", "~", "./")):
        return False  # a path ("…/pytest-99/test_a_secret0/mem" in an error that names a command)
    if looks_random(token):
        return True
    return near and _made_up(token, introduced=introduced)


def detect_clause_values(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    done = -1
    for pos in anchors.positions(tuple(_WORDS)):
        if pos < done or in_marker(text, pos):
            continue
        word = _word_at(text, pos)
        if word is None:
            continue
        end = pos + len(word)
        start, stop = _clause(text, pos, end)
        if not any(c.isdigit() for c in text[start:stop]):
            done = stop
            spans.extend(_in_next_sentence(text, (start, end, stop), _WORDS[word]))
            continue  # no value of any shape taken here
        if _SAYS_WHAT.search(text, start, stop) is not None or _NEGATED.search(
            text, max(start, pos - 24), pos
        ):
            done = stop
            continue
        found: set[str] = set()
        rest: list[tuple[int, str]] = []
        for m in _TOKEN.finditer(text, start, stop):
            if m.end() < stop and not _ENDS_TOKEN.rx.match(text, m.end()):
                continue  # cut at 64 characters: part of a longer run
            if m.start() < end and m.end() > pos:
                continue  # the word itself
            token = m.group(0).rstrip(_STRIP)
            if "[REDACTED:" in token or in_marker(text, m.start()):
                continue
            between = text[m.end() : pos] if m.end() <= pos else text[end : m.start()]
            words = [  # "(the one on the note)" is an aside; a dash or a comma is no word
                w for w in _ASIDE.rx.sub(" ", between).split() if any(c.isalnum() for c in w)
            ]
            owner = m.end() > pos and bool(words) and words[-1].lower() in _OWNER_SLOT
            # a colon right before the value introduces it: "password, in case you forgot: X"
            reach = _NEAR_COLON if m.end() > pos and between.rstrip()[-1:] in (":", "：") else _NEAR
            intro = _introduced(text, m.start())  # "password (X)", "use X to log in"
            # after its word, a value is given (a connector before it) or said right there
            # ("pw goldfish44"); a token after a noun names a thing: "ticket INC0042173"
            if m.end() <= pos:  # said first: "X is the password", "X — that's the password"
                given = len(words) <= _BARE_NEAR or _said_as(between)
            else:
                given = intro or len(words) <= _BARE_NEAR
            # joined words after a comma are given only by a colon: "密钥轮换…，负责人是
            # Ops-Team-3" names the owner, "密码，我记下来：Xx_Yy_12" gives the value
            joined_ok = intro and (
                not any(c in between for c in ",，") or between.rstrip()[-1:] in (":", "：")
            )
            near = len(words) <= reach and not owner and given
            if _value_kind(token, near, introduced=joined_ok):
                if shown_not_given(text, m.start(), m.start() + len(token)):
                    continue  # "… is banned", "placeholder: …": said as a rule's instance
                spans.append((m.start(), m.start() + len(token), _WORDS[word]))
                found.add(_shape(token))
            elif not owner:
                rest.append((m.start(), token))
        # a list of values said together ("billing → <value>, search → <value>"): a token of
        # the same shape as a value taken, in the same clause, is one more of them
        for at, token in rest:
            if found and _shape(token) in found and _value_kind(token, True, introduced=True):
                spans.append((at, at + len(token), _WORDS[word]))
        if not found:
            spans.extend(_in_next_sentence(text, (start, end, stop), _WORDS[word]))
        done = stop
    return spans


_SENTENCE_END = Lazy(r"(?:[.!?]+|[。！？]+)(?=\s|$|[^\x00-\x7f])")
_LAST_WORDS = 3
_NEXT_NEAR = 3


def _in_next_sentence(text: str, clause: tuple[int, int, int], kind: str) -> list[Span]:
    """A value said in the sentence after the one that ends on its credential word ("Password
    changed. New: X", "I'll send the password... actually it's X"), when the word is among the
    last words of its own sentence, that sentence gave no value and ends with a stop (not a
    line break); the value must come within :data:`_NEXT_NEAR` words of the new sentence's
    start ("New:", "actually it's"), not after "for"/"of"… (which names what it is for)."""
    start, end, stop = clause  # the clause, and where its credential word ends
    tail = text[end:stop]
    if (
        "[REDACTED:" in text[start:stop]
        or len([w for w in tail.split() if any(c.isalnum() for c in w)]) > _LAST_WORDS
    ):
        return []  # the sentence gave its value already, or goes on about something else
    dot = _SENTENCE_END.match(text, stop)
    if dot is None:
        return []
    begin = dot.end()
    _start, finish = _clause(text, begin + 1, begin + 1)
    if _SAYS_WHAT.search(text, begin, finish) is not None:
        return []
    for m in _TOKEN.finditer(text, begin, finish):
        if m.end() < finish and not _ENDS_TOKEN.rx.match(text, m.end()):
            continue
        token = m.group(0).rstrip(_STRIP)
        if "[REDACTED:" in token or in_marker(text, m.start()):
            continue
        words = [w for w in text[begin : m.start()].split() if any(c.isalnum() for c in w)]
        if len(words) > _NEXT_NEAR or (words and words[-1].lower() in _OWNER_SLOT):
            break
        if _value_kind(token, True, introduced=_introduced(text, m.start())):
            return [(m.start(), m.start() + len(token), kind)]
    return []


_BREAK = Lazy(r"\r?\n|\\n")
_LAST_PIECE = Lazy(r"(?<![^\s:=：])([A-Za-z0-9+/=_-]{6,256})[ \t]*$")
_PIECE_LINE = Lazy(r"[ \t]*([A-Za-z0-9+/=_-]{6,256})[ \t]*")
_WRAPS = 4


def _one_secret(joined: str, pieces: int) -> bool:
    """``joined`` is one secret: a vendor shape covers it whole, or it reads as generated
    (not as hex, which lines of hashes make)."""
    out, kinds = run(joined, SHAPE_DETECTORS)
    if kinds and out.startswith("[REDACTED:") and out.endswith("]") and out.count("[") == 1:
        return True
    return pieces >= 2 and all_classes(joined) and entropy(joined) >= 4.0 and looks_random(joined)


def detect_wrapped_values(anchors: Anchors) -> list[Span]:
    """A value cut over line breaks next to a credential word: the last token of the word's
    line and the single-token lines after it ("the token wrapped in my terminal:" and two
    lines of one ``ghp_`` token), or a piece ending in a hyphen-wrap (``…Xk7q-`` then
    ``9Lm…``), when joined they are one secret. Each piece goes."""
    text = anchors.text
    spans: list[Span] = []
    done = -1
    for pos in anchors.positions(tuple(_WORDS)):
        if pos < done or in_marker(text, pos) or _word_at(text, pos) is None:
            continue
        brk = _BREAK.search(text, pos, min(len(text), pos + _REACH))
        if brk is None:
            continue
        start, _stop = _clause(text, pos, pos + 1)
        if _SAYS_WHAT.search(text, start, brk.start()) is not None:
            continue
        pieces: list[tuple[int, int]] = []
        last = _LAST_PIECE.search(text, pos + 1, brk.start())
        if last is not None and not in_marker(text, last.start(1)):
            pieces.append((last.start(1), last.end(1)))
        at = brk.end()
        for _ in range(_WRAPS):
            nxt = _BREAK.search(text, at, min(len(text), at + 260))
            line_end = nxt.start() if nxt is not None else min(len(text), at + 260)
            m = _PIECE_LINE.rx.fullmatch(text, at, line_end)
            if m is None or not any(c.isdigit() for c in m.group(1)):
                break  # a word ("thanks"), a blank line: the value ended
            pieces.append((m.start(1), m.end(1)))
            if nxt is None:
                break
            at = nxt.end()
        done = at
        if len(pieces) < 2:
            continue
        parts = [text[a:b] for a, b in pieces]
        unwrapped = "".join(p[:-1] if p.endswith("-") else p for p in parts[:-1]) + parts[-1]
        for count in range(len(parts), 1, -1):  # the longest run of pieces that is one secret
            if _one_secret("".join(parts[:count]), count) or (
                count == len(parts) and _one_secret(unwrapped, count)
            ):
                spans.extend((a, b, "token") for a, b in pieces[:count])
                break
    return spans


# ---------------------------------------------------------------------------- strong passwords

_LINE_WORDS = tuple(
    dict.fromkeys(
        (*_WORDS, "credential", "api_key", "api-key", "access key", "access_key", "凭据", "凭证", "授权码")
    )
)
"""The clause's credential words, and the few that name one only as a line's context (a
credential, 凭据/凭证, a mail provider's 授权码): never a value's connector here."""
_LINE_REACH = 200
_TOKEN_CHARS = r"[!#$%&*+\-./0-9?@A-Z^_a-z|~]"
"""The printable ASCII a strong password is made of, without quotes, brackets and the
separators of code (``,;:=``): a Chinese character next to a value ends it ("密码是Kx9!…"),
and an ASCII class compiles in microseconds (a class of Unicode ranges takes milliseconds,
which a cold hook pays)."""
_STRONG_TOKEN = Lazy(r"(?<!" + _TOKEN_CHARS + ")" + _TOKEN_CHARS + r"{8,64}+(?!" + _TOKEN_CHARS + ")")
"""Whole: never the first 64 characters of a longer run."""
_PERCENT_CODE = Lazy(r"%[0-9A-Fa-f]{2}")


def _line(text: str, pos: int) -> tuple[int, int]:
    """The line around ``pos`` (a real line break or a JSON string's ``\\n``), at most
    :data:`_LINE_REACH` characters each way."""
    lo = max(0, pos - _LINE_REACH)
    hi = min(len(text), pos + _LINE_REACH)
    real, escaped = text.rfind("\n", lo, pos), text.rfind("\\n", lo, pos)
    start = max(real + 1 if real != -1 else lo, escaped + 2 if escaped != -1 else lo)
    real, escaped = text.find("\n", pos, hi), text.find("\\n", pos, hi)
    stop = min(real if real != -1 else hi, escaped if escaped != -1 else hi)
    if stop > pos and text[stop - 1] == "\r":
        stop -= 1
    return start, stop


_LINE_BY_HEAD = _by_head(_LINE_WORDS)


def _line_word_at(text: str, pos: int) -> str | None:
    """A credential word at ``pos``, a word of its own or a part of an identifier
    (``DB_PASSWORD``, ``apiToken``): on a line, either says what the line is about."""
    word = _starting_at(_LINE_BY_HEAD, text, pos)
    if word is None:
        return None
    if word.isascii() and not whole_word(text, pos, pos + len(word)):
        return None
    if word == "pin" and text[pos : pos + 3].islower():
        return None  # "pin the version": the verb
    return word


def detect_strong_in_credential_lines(anchors: Anchors) -> list[Span]:
    """Weak context: a token of the strong-password shape (upper, lower, digit and a symbol,
    8–64 characters, no space) on the same line as a credential word, in either language,
    wherever the word stands (a word of its own or an identifier's part) and whatever the
    phrasing; not when its sentence says it is an example, a placeholder, fake or banned."""
    text = anchors.text
    spans: list[Span] = []
    if A_STRONG_SYMBOL.search(text) is None:
        return spans  # the cheap test first: every strong token holds a symbol
    done = -1
    for pos in anchors.positions(_LINE_WORDS):
        if pos < done or (text[pos - 1 : pos] == "_" and text[pos : pos + 6].lower() == "tokens"):
            continue  # input_tokens, max_tokens: a count (every usage line of a transcript)
        start, stop = _line(text, pos)
        if A_STRONG_SYMBOL.search(text, start, stop) is None:
            done = stop
            continue  # the cheap test first: every strong token holds one
        if in_marker(text, pos) or _line_word_at(text, pos) is None:
            continue
        done = stop
        for m in _STRONG_TOKEN.finditer(text, start, stop):
            core = m.group(0).rstrip(".,:;")
            if not strong_password(core) or in_marker(text, m.start()):
                continue
            if _PERCENT_CODE.search(core) is not None:
                continue  # URL-encoded text (%2F, %20), not a chosen value
            end = m.start() + len(core)
            if not shown_not_given(text, m.start(), end):
                spans.append((m.start(), end, "password"))
    return spans


# ---------------------------------------------------------------------------- account pairs

_ACCOUNTS = ("root", "admin", "administrator", "superuser", "sysadmin", "postgres", "ubuntu", "oracle")
"""The accounts every system ships with: named in a pair, they say a login is being given."""
_JOIN_CHARS = " \t/／:：,，`'\"+"
_ACCOUNT_BY_HEAD = _by_head(_ACCOUNTS)
_PAIR_JOIN = Lazy(
    r"[`'\"]?(?:[ \t]*[/／:：][ \t]*|[ \t]+(?:and|with|using|\+)[ \t]+|[ \t]*[,，][ \t]*)[`'\"]?"
    r"(?P<value>[^\s\"'`\\,;()\[\]{}<>，。；：、（）]{6,64})"
)


def detect_account_pairs(anchors: Anchors) -> list[Span]:
    """A user/password pair whose user is an account every system has ("root with X", "admin
    and X", "postgres / X", "admin:X"): the account names the login, the value is made up
    (letters with digits that are no name, words joined the way a password is, a code of
    letters no language spells) or of the strong-password shape."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(_ACCOUNTS):
        account = _starting_at(_ACCOUNT_BY_HEAD, text, pos)
        if account is None:
            continue
        end = pos + len(account)
        if text[end : end + 1] not in _JOIN_CHARS:
            continue  # the cheap test first: admin_url, rootfs, /root/
        before = text[pos - 1 : pos]
        if before and (before.isalnum() or before in "_-./@$"):
            continue  # part of a name, a path, an address: /root, sysroot, $root
        span = _pair_value(text, end)
        if span is not None:
            spans.append(span)
    return spans


def _pair_value(text: str, end: int) -> Span | None:
    m = _PAIR_JOIN.match(text, end)
    if m is None or in_marker(text, m.start("value")):
        return None
    raw = m.group("value")
    value = raw.rstrip(".,:;") if strong_password(raw) else raw.rstrip(".,:;!?")
    if reads_as_non_secret(value) or not (
        strong_password(value) or _made_up(value, introduced=True) or made_up_letters(value)
    ):
        return None
    start = m.start("value")
    if shown_not_given(text, start, start + len(value)):
        return None
    return start, start + len(value), "password"


_SLASH = " / "
_SLASH_USER = Lazy(r"(?<![\w./@$:\\-])[A-Za-z][A-Za-z0-9_.-]{1,31}$")


def detect_slash_pairs(anchors: Anchors) -> list[Span]:
    """``<user> / <password>`` with a space on each side of the slash (a path or a fraction has
    none): any user name, as a login is written down ("ops / X", "qa / X"), when the value is
    what :func:`detect_account_pairs` takes after an account every system has (made up, or of
    the strong-password shape); "read / write", "TCP / UDP" are words, and a third part
    ("Admin / Settings / Billing2024") makes a menu's path."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions((_SLASH,)):
        user = _SLASH_USER.search(text, max(0, pos - 33), pos)
        if user is None or text[max(0, user.start() - 3) : user.start()].rstrip().endswith("/"):
            continue  # "Admin / Settings / Billing2024": a menu's path, no login
        span = _pair_value(text, pos)
        if span is not None and not text[span[1] : span[1] + 3].lstrip().startswith("/"):
            spans.append(span)
    return spans


register(*_WORDS, *_LINE_WORDS, *_ACCOUNTS, _SLASH)
CLAUSE_DETECTORS = (
    detect_strong_in_credential_lines,
    detect_clause_values,
    detect_wrapped_values,
    detect_account_pairs,
    detect_slash_pairs,
)

