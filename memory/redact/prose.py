"""Secrets said in prose in an order the credential-word detectors do not read.

* **The value first**: "Xq7!bt2 is the password for the NAS", "use Xq7!bt2 as my passphrase".
  From a credential word, read back over at most three words that qualify it ("the new admin
  password"), an optional determiner and a link ("is", "was", "as") to the value. The word after
  the credential word must end the phrase (punctuation, or a word such as "for", "when"), so
  "X is the password policy" is about a policy. The value must look made up
  (:func:`memory.redact.values.is_secret_value`).
* **Lists of one-time codes**: recovery or backup codes (恢复码, 备用码) followed by a list of
  short codes, one a line or separated by spaces or commas; every code in the run goes, and the
  run ends at the first item that is not code-shaped (has no digit, or is a word).

Both read a bounded window around each anchor: linear in the text.
"""

from __future__ import annotations

from memory.redact.engine import Anchors, Lazy, Span, in_marker, register
from memory.redact.values import (
    followed_by_unit,
    is_secret_value,
    looks_random,
    reads_as_non_secret,
)

_BEFORE_WORDS = ("password", "passphrase", "passcode", "passwd", "pin")
_TOKEN_WORDS = ("key", "token", "secret")  # "<value> <- that's the API key": generated values only
_DIGIT_WORDS = frozenset({"pin", "passcode"})
_PUBLIC = Lazy(r"(?i)\bpub(?:lic|lishable)?\b|公钥|公开")
_DETERMINERS = frozenset({"the", "my", "our", "your", "his", "her", "their", "a", "an", "its"})
_LINKS = frozenset({"is", "was", "as", "be", "becomes", "'s", "that's", "that’s", "it's", "it’s", "thats"})
_ARROWS = frozenset({"<-", "<--", "←", "<=", "-", "—", "--", "="})
_ENDS_PHRASE = frozenset(
    {
        "for", "to", "of", "on", "at", "in", "when", "if", "so", "and", "but", "that", "which",
        "from", "here", "now", "we", "i", "you", "it", "please", "until", "since", "because",
        "while", "then", "there", "this", "again", "too", "also", "btw",
    }
)  # fmt: skip
_WORD_AFTER = Lazy(r"[ \t]*([A-Za-z']+)")
_NONSPACE = Lazy(r"\S+")
_QUOTES = "\"'`“”‘’"
_BOUNDARY = _QUOTES + "\\"
_SENTENCE_END = (". ", "! ", "? ", "\n", "\\n", "。")


_POINTING = frozenset({"that's", "that’s", "thats", "it's", "it’s"})
_ABOVE = Lazy(r"[ \t⎿│>$#*-]*(?P<value>[^\s\"'`\\]{4,128})[ \t]*")


def _token_above(text: str, at: int) -> tuple[int, int] | None:
    """The single token of the line that ends right before ``at`` (a line break there)."""
    if text.startswith("\\n", at - 2):
        end = at - 2
    elif text[at - 1 : at] == "\n":
        end = at - 1 - (text[at - 2 : at - 1] == "\r")
    else:
        return None
    lo = max(text.rfind("\n", max(0, end - 200), end), text.rfind("\\n", max(0, end - 200), end))
    lo = 0 if lo == -1 and end <= 200 else lo + (2 if text.startswith("\\n", lo) else 1)
    if lo <= 0 and end > 200:
        return None
    m = _ABOVE.rx.fullmatch(text, lo, end)
    return (m.start("value"), m.end("value")) if m is not None else None


def _value_before(text: str, start: int, said: str) -> Span | None:
    lo = max(0, start - 120)
    for stop in _SENTENCE_END:
        at = text.rfind(stop, lo, start)
        if at != -1:
            lo = max(lo, at + len(stop))
    tokens = [(m.start(), m.end()) for m in _NONSPACE.finditer(text, lo, start)]
    k = len(tokens) - 1
    qualifiers = 0
    while k >= 0 and qualifiers < 3:
        word = text[tokens[k][0] : tokens[k][1]].lower()
        if not word.isalpha() or word in _DETERMINERS or word in _LINKS:
            break
        k -= 1
        qualifiers += 1
    if k >= 0 and text[tokens[k][0] : tokens[k][1]].lower() in _DETERMINERS:
        k -= 1
    if k == 0 and text[tokens[0][0] : tokens[0][1]].lower() in _POINTING and lo == tokens[0][0]:
        above = _token_above(text, lo)  # "<value>" on its own line, then "that's the password"
        if above is None:
            return None
        tokens = [above, *tokens]
        k = 1
    if k < 1 or text[tokens[k][0] : tokens[k][1]].lower() not in _LINKS:
        return None
    if k >= 2 and text[tokens[k - 1][0] : tokens[k - 1][1]] in _ARROWS:
        k -= 1  # "<value> <- that's the key"
    v_start, v_end = tokens[k - 1]
    while v_end > v_start and text[v_end - 1] in ",;:\\" + _QUOTES:
        v_end -= 1
    quoted = v_start < v_end and text[v_start] in _QUOTES
    # in JSON the word before has no space before it ("content":"X is…", "\nX is…"): the
    # value starts after the last quote or backslash escape, never spans one
    cut = max(text.rfind(c, v_start, v_end) for c in _BOUNDARY)
    if cut != -1:
        quoted = text[cut] in _QUOTES
        v_start = cut + (2 if text[cut] == "\\" else 1)
    while v_start < v_end and text[v_start] in _QUOTES:
        v_start += 1
    value = text[v_start:v_end]
    if said in _TOKEN_WORDS:
        if _PUBLIC.search(text, v_end, start) is not None:
            return None  # "<pk_live_…> is a publishable key"
        return (v_start, v_end, "secret") if looks_random(value) else None
    if is_secret_value(value, digits_ok=said in _DIGIT_WORDS, quoted=quoted):
        return v_start, v_end, "pin" if value.isdigit() else "password"
    return None


def detect_values_before_their_word(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions((*_BEFORE_WORDS, *_TOKEN_WORDS)):
        if pos and (text[pos - 1].isalnum() or text[pos - 1] == "_"):
            continue
        word = next(
            w for w in (*_BEFORE_WORDS, *_TOKEN_WORDS) if text[pos : pos + len(w)].lower() == w
        )
        end = pos + len(word)
        if end < len(text) and (text[end].isalnum() or text[end] in "_-"):
            continue  # passwords, password-reset, pinned
        after = _WORD_AFTER.match(text, end)
        if after is not None and after.group(1).lower() not in _ENDS_PHRASE:
            continue  # "X is the password policy"
        span = _value_before(text, pos, word)
        if span is not None:
            spans.append(span)
    return spans


_ZH_WORDS = {
    "密码": "password", "密碼": "password", "口令": "password", "密钥": "secret",
    "秘钥": "secret", "密鑰": "secret", "令牌": "secret",
}  # fmt: skip
_ZH_EN_WORDS = {"password": "password", "passphrase": "password", "pin": "pin",
                "key": "secret", "token": "secret", "secret": "secret"}  # fmt: skip
_HAS_CJK = Lazy(r"[\u4e00-\u9fff]")
_CLAUSE_END = Lazy(r"码?[ \t]*(?:$|[，,。.!！?？；;）)\"'\\]|\r?\n|了|吧|呢|哦|啊)")
_CLAUSE_START = Lazy(r"[，,。！？；;\n\"]|\\n|[.!?]\s")  # a quote: a JSON string's start
_ZH_VALUE_FIRST = Lazy(
    r"[ \t]*(?P<value>[^\s，。；：、\"'`\\]{4,128})[ \t]*(?:<-+|←|—+)?[ \t]*(?:这个|这|它)?[ \t]*"
    r"(?:就|也|才|都)?[ \t]*是[^，。；！？\n\\]{0,30}"
    r"|[ \t]*用[ \t]*(?P<used>[^\s，。；：、\"'`\\]{4,128})[ \t]*(?:作为|当作|当做|当成|做|当)"
    r"[^，。；！？\n\\]{0,10}"
)


def detect_values_before_chinese_words(anchors: Anchors) -> list[Span]:
    """The value first, in Chinese: "<X> 是 NAS 的登录密码", "<X> 这个是地图服务的密钥",
    "<X> 是 Jenkins 的 admin password", "用 <X> 作为密码". The word ends its clause (or, after
    用…作为, starts what is done with it), the value starts it."""
    text = anchors.text
    spans: list[Span] = []
    words = {**_ZH_WORDS, **_ZH_EN_WORDS}
    hits = sorted((pos, word) for word in words for pos in anchors.positions((word,)))
    for pos, word in hits:
        if in_marker(text, pos):
            continue
        after = text[pos + len(word) : pos + len(word) + 1]
        if word.isascii() and (
            (pos and text[pos - 1].isascii() and text[pos - 1].isalnum())
            or (after.isascii() and after.isalnum())
        ):
            continue
        lo = max(0, pos - 80)
        if _HAS_CJK.search(text, lo, pos) is None:
            continue  # English is read by detect_values_before_their_word
        start = lo
        for stop in _CLAUSE_START.finditer(text, lo, pos):
            start = stop.end()
        clause = text[start:pos]
        if not any("\u4e00" <= c <= "\u9fff" for c in clause):
            continue  # English is read by detect_values_before_their_word
        m = _ZH_VALUE_FIRST.rx.fullmatch(text, start, pos)
        if m is None:
            above = _line_above(text, start, pos, word)
            if above is not None:
                spans.append(above)
            continue
        group = "value" if m.group("value") is not None else "used"
        if group == "value" and _CLAUSE_END.match(text, pos + len(word)) is None:
            continue  # "X 是…密码规则"
        value = m.group(group)
        kind = words[word]
        if kind == "secret":
            ok = looks_random(value)
        else:
            ok = is_secret_value(value, digits_ok=kind == "pin", quoted=False) or (
                kind == "password"
                and any(c.isdigit() for c in value)
                and any(not c.isalnum() for c in value)
                and not reads_as_non_secret(value)
            )
        if ok:
            spans.append((m.start(group), m.end(group), kind))
    return spans


_POINTS_UP = Lazy(r"[ \t]*(?:这个|这|它|上面的?|上面这个)[ \t]*(?:就|也|才)?[ \t]*是[^，。；！？\n\\]{0,30}$")


def _line_above(text: str, start: int, pos: int, word: str) -> Span | None:
    """"<value>" on a line of its own, then "这个就是 root 密码" on the next: a clause that
    points up ("这个", "上面的") at the start of its line names the line above it (a command's
    output pasted, then said what it was)."""
    if _POINTS_UP.rx.fullmatch(text, start, pos) is None:
        return None
    if _CLAUSE_END.match(text, pos + len(word)) is None:
        return None
    above = _token_above(text, start)
    if above is None:
        return None
    value = text[above[0] : above[1]]
    kind = _ZH_WORDS.get(word, "password")
    if kind == "secret":
        ok = looks_random(value)
    else:
        ok = is_secret_value(value, digits_ok=False, quoted=False) and not reads_as_non_secret(value)
    return (above[0], above[1], kind) if ok else None


_CODE_WORDS = (
    "recovery code", "backup code", "recovery key", "scratch code", "rescue code",
    "恢复码", "备用码", "救援码", "恢复代码", "备份码", "恢復碼", "備用碼",
)  # fmt: skip
_CODE_LIST = Lazy(
    r"(?:[ \t]*+(?:\\n|\r?\n|[,，、;])?+[ \t]*+(?:[-*•]|\d{1,2}[.)])?+[ \t]*+)"
    r"(?P<code>[A-Za-z0-9]{3,12}+(?:-[A-Za-z0-9]{3,12}+){0,3}+)(?![A-Za-z0-9])"
)
_LEAD = Lazy(r"[^\n.。]{0,60}?(?:[:：]|\n|\\n|(?<=\s)(?:are|is)\b)")


def _shape(code: str) -> str:
    return "".join("-" if c == "-" else "x" for c in code)


def _code_shaped(code: str) -> bool:
    bare = code.replace("-", "")
    if bare.isdigit():
        return 4 <= len(bare) <= 24  # Google's "1234 5678": two items of four digits
    return 6 <= len(bare) <= 24 and any(c.isdigit() for c in bare)


def detect_code_lists(anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(_CODE_WORDS):
        if pos < last:
            continue
        lead = _LEAD.match(text, pos)
        at = lead.end() if lead is not None else pos
        found: list[Span] = []
        shape = ""
        while len(found) < 64:
            m = _CODE_LIST.match(text, at)
            if m is None:
                break
            code = m.group("code")
            # after two codes, one of the same layout counts even without a digit ("QWER-TYUI"
            # among "AB12-CD34"s) if it is not a word (upper case, or mixed with digits)
            same = len(found) >= 2 and _shape(code) == shape and (code.isupper() or code.isdigit())
            if not (same or _code_shaped(code)):
                break
            shape = shape or _shape(code)
            found.append((m.start("code"), m.end("code"), "recovery-code"))
            at = m.end()
        if len(found) >= 2 or (found and lead is not None):
            spans.extend(found)
            last = at
    return spans


_SENT_CODE_WORDS = ("code ", "code:", "code=", "code：", "验证码", "校验码", "动态码")
_SENT_CODE = Lazy(
    r"(?P<gap>[^\n\d.!?。！？;；\"'`{}()\[\]<>]{0,24}+)(?<![\w.#/+-])"
    r"(?P<code>\d{6,8}|\d{3} \d{3}|\d{4} \d{4})(?![\w.:/%+-])"
)
_NEXT_CODE = Lazy(r"[ \t]*[,，、 ][ \t]*(?P<code>\d{6,8})(?![\w.:/%+-])")
_NOT_SENT = frozenset(
    {"error", "status", "exit", "return", "response", "http", "zip", "postal", "post", "area",
     "country", "product", "item", "sku", "bar", "color", "colour", "region", "currency",
     "bank", "branch", "tax", "swift", "sort", "reason", "result", "event", "source", "op"}
)  # fmt: skip
"""What "code" names when its number is no code sent to be typed back: a status, a place, a
product, an account's bank."""
_SENT_TIE = Lazy(r"(?:\b(?:is|was|are|were)[ \t]+|[:=：是为為][ \t]*)$")
_OWNER = Lazy(r"([A-Za-z]+)[ \t_-]?$")


def detect_sent_codes(anchors: Anchors) -> list[Span]:
    """A one-time code after its word: six to eight digits (or three and three, four and four,
    as a message spells them out) within a few words of "code" or 验证码/校验码/动态码 that end
    in a tie (``is``, ``:``, ``=``, 是) or right after it, no digit, sentence end, quote or
    bracket between ("the code they sent is 491 207",
    "code=730264" in a log line, "校验码是 508113"), and the codes of the same run after it. A
    shorter number after the word alone is a status, a line or an error ("code 404", a JSON
    ``"code": 40101``); one digit repeated is a test setup's fixed code; an owner word that
    names a status, a place or a product ("error code", "zip code") is no code sent."""
    text = anchors.text
    spans: list[Span] = []
    last = -1
    sent_code = _SENT_CODE.rx.match  # "code " is in most texts about code: one call a hit
    for pos in anchors.positions(_SENT_CODE_WORDS):
        ascii_word = text[pos] in "cC"
        m = sent_code(text, pos + (4 if ascii_word else 3))
        if m is None or pos <= last or len(set(m.group("code").replace(" ", ""))) == 1:
            continue
        if ascii_word and pos and text[pos - 1].isalpha():
            continue  # barcode, opcode, unicode
        if ascii_word:
            owner = _OWNER.search(text, max(0, pos - 24), pos)
            if owner is not None and owner.group(1).lower() in _NOT_SENT:
                continue
        gap = m.group("gap")
        if gap and gap.strip(" \t") and _SENT_TIE.search(gap) is None:
            continue  # "code review of PR 482913": the number's own word before it
        if followed_by_unit(text, m.end()):
            continue
        spans.append((m.start("code"), m.end("code"), "pin"))
        last = m.end()
        while (more := _NEXT_CODE.match(text, last)) is not None:
            spans.append((more.start("code"), more.end("code"), "pin"))
            last = more.end()
    return spans


register(*_BEFORE_WORDS, *_TOKEN_WORDS, *_ZH_WORDS, *_CODE_WORDS, *_SENT_CODE_WORDS)
PROSE_DETECTORS = (
    detect_values_before_their_word,
    detect_values_before_chinese_words,
    detect_code_lists,
    detect_sent_codes,
)
