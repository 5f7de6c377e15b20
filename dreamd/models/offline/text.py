"""Text helpers shared by the offline extractor and planner: tokens, similarity, dates, slugs.

Everything here is a pure function of its arguments (no clock: "today" is always passed in),
so the offline backend gives the same answer for the same payload on every machine.

- Tokens: :func:`memory.retrieval.tokens.terms`, the one layer recall, dedup and this model
  share (Snowball stems of words of 2+ characters, stopwords dropped, apostrophes dropped,
  Chinese character bigrams), as a set, compound words whole (``compound_parts=False``: a URL,
  a version or a date is one value to compare). Traditional and simplified forms are not
  unified; the heuristics list both where it matters. A word list a rule compares tokens with
  is read through the same layer (:func:`token_set`).
- Similarity: Jaccard and containment (|A∩B| / min(|A|,|B|)) over those token sets.
- Shaping: first person rewritten as "User …"/"用户…", sentence case, one-line descriptions,
  a reason split off at because/since/因为.
- Dates: relative phrases ("tomorrow", "next Friday", "in 3 days", "明天", "下周五", "3天后")
  are rewritten as ISO dates relative to a reference date. "next <weekday>" / "下周X" is that
  weekday in the following Monday-based week; "this <weekday>" / "这周X" is that weekday in
  the current week; "on/by/until/before/after/due Friday" and "周五" are the next such day on
  or after the reference date (a weekday with no such word — "on a Saturday", "Friday works",
  "every Friday", "每周五" — is left alone); "next week" / "下周" is "the week of <Monday>".
  A weekday with a day of the month ("Wednesday the 16th", "周二 15 号") is the one date that has
  both, or stays as said when none is near; in a text told as past a bare weekday or day of the
  month is the last one, not the next.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable

from dreamd.models.offline import markers as lex
from memory.retrieval.tokens import (
    CJK_RE as CJK_RE,  # re-exported: the offline modules import it from here
)
from memory.retrieval.tokens import STOPWORDS as STOPWORDS  # re-exported, as CJK_RE
from memory.retrieval.tokens import terms, words

_CODE_NAME = re.compile(r"`[^`\s]{1,40}`|(?<!\w)%[a-zA-Z]\b")
_NEXT_WEEK_RANGE = re.compile(r"(下周|下週|下星期)([一二三四五六日天])(到|至|-|~)(?:周|週|星期)?(?=[一二三四五六日天])")

_FUNCTION_WORDS_TEXT = """
    a an the and or but if of to in on at by for from with into onto as is are was were be been
    being am do does did done it its this that these those there here then than so such very
    just also too not no yes my me mine we our ours you your yours he she they them their his
    her i im ive id ill s t about over under up down out off again more most some any all each
    which who whom what when where why how can could should would will shall may might must
    has have had having user users s re ll ve d m please prefer prefers like likes always usually
"""
FUNCTION_WORDS: frozenset[str] = frozenset(_FUNCTION_WORDS_TEXT.split())
"""The words that only hold a phrase together: a record name leaves them out ("User prefers
the …" is named by what follows), and a reflexive after one is that word's object ("care of
yourself"). Narrower than the tokenizer's STOPWORDS, which also drops words that match
everything in recall but are a phrase's content here ("merge anything")."""

NEGATIONS: frozenset[str] = frozenset(
    {"not", "no", "never", "dont", "don't", "avoid", "stop", "without", "nor", "doesnt"}
)
ZH_NEGATIONS: tuple[str, ...] = ("永远不要", "永遠不要", "不要", "不用", "别", "別", "禁止", "请勿", "請勿", "不")


def normalize(text: str) -> str:
    """NFKC, curly quotes straightened, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split())


def raw_words(text: str) -> list[str]:
    """The words of ``text`` (:func:`memory.retrieval.tokens.words`: compound words whole, Chinese runs)
    in order, apostrophes dropped (``don't`` → ``dont``), stopwords kept (slugs, patterns)."""
    return [w.replace("'", "") if "'" in w else w for w in words(text)]


def tokens(text: str) -> set[str]:
    """The token set similarity works on (see module docstring)."""
    return set(terms(text, compound_parts=False))


def token_set(words: Iterable[str]) -> frozenset[str]:
    """A rule's word list as :func:`tokens` gives those words (``using`` → ``use``), so that
    comparing tokens with it compares like with like."""
    return frozenset(t for w in words for t in terms(w, compound_parts=False))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def containment(a: set[str], b: set[str]) -> float:
    """Share of the smaller set found in the larger one."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def has_cjk(text: str) -> bool:
    return CJK_RE.search(text) is not None


def short_hash(text: str) -> str:
    return hashlib.sha1(normalize(text).encode("utf-8")).hexdigest()[:8]


def _ascii(word: str) -> str:
    """``word`` with accents dropped (``café`` → ``cafe``) and other non-ASCII letters removed:
    record names are ASCII slugs."""
    if word.isascii():
        return word
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode("ascii")


def slug_words(text: str) -> list[str]:
    """Up to five readable ASCII content words of ``text`` for a record name."""
    words: list[str] = []
    for run in raw_words(text):
        if CJK_RE.match(run):
            continue
        for part in re.split(r"[._+#]+", run):
            part = _ascii(part).strip("-")
            if not part or part in FUNCTION_WORDS:
                continue
            if part not in words:
                words.append(part)
    return words[:5]


def make_name(prefix: str, text: str, *, fallback: str = "note") -> str:
    """``prefix-content-words`` or, without ASCII content words, ``prefix-<hash>`` (``fallback``
    stands in for an empty prefix)."""
    words = slug_words(text)
    if prefix and words and words[0] == prefix:
        words = words[1:]
    if not words:
        return f"{prefix or fallback}-{short_hash(text)}"
    name = "-".join([prefix, *words] if prefix else words)
    name = re.sub(r"[^a-z0-9_-]+", "-", name).strip("-_")
    if len(name) > 56:
        name = name[:56].rsplit("-", 1)[0]
    return name or f"note-{short_hash(text)}"


# ----------------------------------------------------------------------------- dates

WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_NUMBERS_EN = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "a": 1, "an": 1,
}
_NUMBERS_ZH = {"一": 1, "两": 2, "兩": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


def parse_date(value: object) -> dt.date | None:
    """The date at the start of an ISO-ish string (``2026-11-29``, ``2026-11-29T10:00:00Z``); a
    payload is JSON, so anything else is no date."""
    m = re.match(r"\s*(\d{4})-(\d{2})-(\d{2})", value) if isinstance(value, str) else None
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def _monday(d: dt.date) -> dt.date:
    return d - dt.timedelta(days=d.weekday())


def _nearest(d: dt.date, weekday: int, back: bool) -> dt.date:
    """That weekday on or after ``d`` (``back``: on or before it)."""
    return d + dt.timedelta(
        days=-((d.weekday() - weekday) % 7) if back else (weekday - d.weekday()) % 7
    )


def _next(word: str | None) -> bool:
    """"next", "下个月": a word naming the next month or week (else this one)."""
    return (word or "x")[0] in "下nN"


def _kinds(*pairs: tuple[str, str]) -> list[tuple[re.Pattern[str], str]]:
    """Each pattern compiled, with the kind of date it names (case-insensitive: the Chinese
    patterns hold no letters)."""
    return [(re.compile(pattern, re.I), kind) for pattern, kind in pairs]


_WD = "|".join(WEEKDAYS_EN)
_NUM_EN = r"\d+|" + "|".join(sorted(_NUMBERS_EN, key=len, reverse=True))
_EN_PATTERNS = _kinds(
    (r"\b(?:the\s+)?day\s+after\s+tomorrow\b", "d+2"),
    (r"\b(?:the\s+)?day\s+before\s+yesterday\b", "d-2"),
    (r"\btomorrow\b", "d+1"),
    (r"\byesterday\b", "d-1"),
    (r"\b(?:today|tonight|this\s+morning|this\s+afternoon|this\s+evening)\b", "d+0"),
    (rf"\bnext\s+({_WD})\b", "next-wd"),
    (rf"\bthis\s+({_WD})\b", "this-wd"),
    (rf"\blast\s+({_WD})\b", "last-wd"),
    (rf"\b(?:on|by|until|before|after|due|from|this coming)\s+({_WD})\b", "bare-wd"),
    (r"\b(?:the\s+)?week\s+after\s+next\b", "next2-week"),
    (r"\bnext\s+week\b", "next-week"),
    (r"\bthis\s+week\b", "this-week"),
    (r"\blast\s+week\b", "last-week"),
    (r"\bnext\s+month\b", "next-month"),
    (rf"\bin\s+({_NUM_EN})\s+(day|week)s?\b", "in-n"),
    (rf"\b({_NUM_EN})\s+(day|week)s?\s+ago\b", "n-ago"),
)
_ZH_WD = "一二三四五六日天"
_ZH_PATTERNS = _kinds(
    ("大后天|大後天", "d+3"),
    ("后天|後天", "d+2"),
    ("前天", "d-2"),
    ("明天|明日", "d+1"),
    ("昨天|昨日", "d-1"),
    ("今天|今晚|今日", "d+0"),
    (f"(?:下下周|下下週|下下星期|下下礼拜|下下禮拜)([{_ZH_WD}])", "next2-wd"),
    (f"(?:下周|下週|下星期|下礼拜|下禮拜)([{_ZH_WD}])", "next-wd"),
    (f"(?:这周|這週|這周|本周|本週|这星期|這星期)([{_ZH_WD}])", "this-wd"),
    (f"(?:上周|上週|上星期|上礼拜|上禮拜)([{_ZH_WD}])", "last-wd"),
    (f"(?<![每个個])(?<!每[周週][{_ZH_WD}][和、跟与與])(?:周|週|星期|礼拜|禮拜)([{_ZH_WD}])", "bare-wd-zh"),
    ("下下周|下下週|下下星期|下下礼拜|下下禮拜", "next2-week"),
    ("下周|下週|下星期|下礼拜|下禮拜", "next-week"),
    ("下个月|下個月", "next-month"),
    ("((?<!\\d)\\d+|[一两兩二三四五六七八九十])(天|周|週|个星期|個星期)(?:后|後|以后|以後|之后|之後)", "in-n"),
    ("((?<!\\d)\\d+|[一两兩二三四五六七八九十])(天|周|週|个星期|個星期)(?:前|以前|之前)", "n-ago"),
)


def _weekday_index(token: str) -> int:
    token = token.lower()
    if token in WEEKDAYS_EN:
        return WEEKDAYS_EN.index(token)
    return _WEEKDAYS_ZH[token]


def _count(token: str) -> int:
    token = token.lower()
    if token.isdigit():
        return int(token)
    return _NUMBERS_EN.get(token) or _NUMBERS_ZH.get(token, 1)


_WEEK_OFFSET = {"next2": 14, "next": 7, "this": 0, "last": -7}
"""Days from this week's Monday to the Monday of the week a "next-…"/"this-…" kind names."""


def _resolve(kind: str, m: re.Match[str], ref: dt.date) -> str:
    if kind.startswith("d"):
        return (ref + dt.timedelta(days=int(kind[1:]))).isoformat()
    which, _, unit = kind.partition("-")
    if which in _WEEK_OFFSET and unit in ("wd", "week"):
        monday = _monday(ref) + dt.timedelta(days=_WEEK_OFFSET[which])
        if unit == "week":
            return f"the week of {monday.isoformat()}"
        return (monday + dt.timedelta(days=_weekday_index(m.group(1)))).isoformat()
    if kind.startswith("bare-wd"):  # a Chinese weekday keeps no lead word
        lead = "" if "zh" in kind else m.group(0)[: m.start(1) - m.start(0)]
        back = kind.endswith("past") and not lead.lower().startswith("this")  # "this coming" looks ahead
        return lead + _nearest(ref, _weekday_index(m.group(1)), back).isoformat()
    if kind == "next-month":
        return "{:04d}-{:02d}".format(*_add_months(ref, 1))
    days = _count(m.group(1)) * (1 if m.group(2).lower().startswith(("day", "天")) else 7)
    return (ref + dt.timedelta(days=days if kind == "in-n" else -days)).isoformat()


_MONTHS_EN = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_RE = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ORDINAL_EN = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}
_CALENDAR = _kinds(
    (rf"\b(?:the\s+)?(first|1st|second|2nd|third|3rd|fourth|4th|last)\s+({_WD})\s+(?:of|in)\s+"
     rf"(?:{_MONTH_RE}|(this|next)\s+month)\b(?:,?\s+(\d{{4}})\b)?", "nth-wd"),
    (rf"\b(?:the\s+)?end\s+of\s+{_MONTH_RE}\b(?:,?\s+(\d{{4}})\b)?", "eom-named-en"),
    (rf"\b{_MONTH_RE}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?", "md-en"),
    (rf"\b(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE}\b(?:,?\s+(\d{{4}})\b)?",
     "dm-en"),
    (r"\b(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?month\b", "eom-0"),
    (r"\b(?:the\s+)?end\s+of\s+next\s+month\b", "eom-1"),
    (r"\b(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?year\b", "eoy"),
    (r"(?:(\d{4}(?=\s*年)|明年|今年|后年|後年)\s*年?\s*)?(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月\s*"
     r"(\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*(?:号|號|日)", "md-zh"),
    # "十一月最后一个周五", "下个月第二个周三", "3 月的第一个星期一": that weekday of that month
    (r"(?:(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月|(下个月|下個月|这个月|這個月|本月))\s*的?\s*"
     r"(第[一二三四1-4]个|第[一二三四1-4]個|最后一个|最後一個)\s*(?:周|週|星期|礼拜|禮拜)([一二三四五六日天])", "nth-wd-zh"),
    (r"(下个月|下個月|下月|这个月|這個月|本月)\s*(\d{1,2})\s*(?:号|號|日)", "nm-day"),
    # "the 3rd of next month": that day of that month
    (r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\s+of\s+(next|this)\s+month\b", "nm-day-en"),
    # "this weekend", "下周末": the Saturday that opens it
    (r"\b(this|next)\s+weekend\b", "weekend"),
    (r"(下下|下|这个|這個|这|這|本)(?:周末|週末)", "weekend"),
    # "in two months", "in a fortnight", "两个月后", "半个月后": counted from the day
    (rf"\bin\s+({_NUM_EN})\s+(month|fortnight)s?\b", "in-months"),
    (r"((?<!\d)\d+|[一两兩二三四五六七八九十半])\s*个?月(?:后|後|以后|以後|之后|之後)", "in-months"),
    (r"(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月(?:底|末)", "eom-named-zh"),
    (r"(下个|下個|这个|這個|本)月(?:底|末)", "eom-zh"),
    (r"(?:(下个月|下個月|这个月|這個月|本月)|(?<!\s))\s*(?:月底|月末)", "eom-zh"),
    (r"(下个|下個|这个|這個|本)?月中(?!旬)", "mid-zh"),
    (r"年底|年末", "eoy"),
    (r"\b(?:the\s+)?end\s+of\s+Q([1-4])\b", "eoq"),
    (r"([一二三四1-4])季度(?:末|底)", "eoq"),
    (r"(?<![月\d年])(\d{1,2})\s*(?:号|號)(?![码碼楼樓线線])", "day-zh"),
    (r"\bthe (\d{1,2})(?:st|nd|rd|th)\b"
     r"(?!\s+(?:of|floor|time|century|anniversary|birthday|percentile))", "day-zh"),
    # a fixed-date holiday as a bound ("before xmas", "by New Year's", "国庆前", "元旦之前"): its next occurrence.
    # A holiday with no bound ("we close over Christmas", "每年国庆") names every year's, not a date.
    (r"\b(before|by|until|till|after)\s+(christmas eve|christmas|xmas|new year's eve|"
     r"new year's day|"
     r"new year's|new year|halloween|valentine's day|valentine's)(?!\w)", "holiday-en"),
    (r"(?<![每年])(平安夜|圣诞节?|聖誕節?|元旦|国庆节?|國慶節?|情人节|情人節)"
     r"(?:(前|之前|以前)|(?=后|後|之后|之後|那天|当天|當天))", "holiday"),
)
_HOLIDAYS = {
    "christmas eve": (12, 24), "christmas": (12, 25), "xmas": (12, 25), "new year's eve": (12, 31),
    "new year's day": (1, 1), "new year's": (1, 1), "new year": (1, 1), "halloween": (10, 31),
    "valentine's day": (2, 14), "valentine's": (2, 14), "平安夜": (12, 24), "圣诞": (12, 25), "圣诞节": (12, 25),
    "聖誕": (12, 25), "聖誕節": (12, 25), "元旦": (1, 1), "国庆": (10, 1), "国庆节": (10, 1), "國慶": (10, 1),
    "國慶節": (10, 1), "情人节": (2, 14), "情人節": (2, 14),
}


_ZH_DIGITS = {ch: i for i, ch in enumerate("零一二三四五六七八九")}


def zh_number(token: str) -> int:
    """1–99 written in digits or Chinese numerals (十五, 二十三, 三十); 0 if unreadable."""
    if token.isdigit():
        return int(token)
    if "十" not in token:
        return _ZH_DIGITS.get(token, 0) if len(token) == 1 else 0
    tens, _, ones = token.partition("十")
    return (_ZH_DIGITS.get(tens, 0) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)


def _month_end(year: int, month: int) -> dt.date:
    first_next = dt.date(year + (month == 12), month % 12 + 1, 1)
    return first_next - dt.timedelta(days=1)


def _add_months(ref: dt.date, n: int) -> tuple[int, int]:
    index = ref.year * 12 + ref.month - 1 + n
    return index // 12, index % 12 + 1


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _month_number(word: str) -> int:
    return _MONTHS_EN.index(word[:3].lower()) + 1


def _month_day(ref: dt.date, month: int, day: int, year: str | None) -> dt.date | None:
    """A month and day without a year is the next such day, allowing for a recent past."""
    if year:
        return _safe_date(int(year), month, day)
    this_year = _safe_date(ref.year, month, day)
    if this_year is None:
        return None
    if this_year < ref - dt.timedelta(days=90):
        return _safe_date(ref.year + 1, month, day)
    return this_year


def _nth_weekday(m: re.Match[str], ref: dt.date) -> dt.date | None:
    """"the second Tuesday of December", "the last Friday of next month": that day of that month
    (a named month without a year is the next one, as for "December 18")."""
    nth, weekday = _ORDINAL_EN[m.group(1).lower()], WEEKDAYS_EN.index(m.group(2).lower())
    if m.group(3):
        month = _month_number(m.group(3))
        year = int(m.group(5)) if m.group(5) else ref.year + (month < ref.month)
    else:
        year, month = _add_months(ref, _next(m.group(4)))
    return _nth_of_month(year, month, weekday, nth)


def _nth_of_month(year: int, month: int, weekday: int, nth: int) -> dt.date | None:
    """The ``nth`` such weekday of the month (-1: the last)."""
    if nth > 0:
        return _safe_date(year, month, 1 + (weekday - dt.date(year, month, 1).weekday()) % 7 + 7 * (nth - 1))
    last = _month_end(year, month)
    return last - dt.timedelta(days=(last.weekday() - weekday) % 7)


def _nth_weekday_zh(m: re.Match[str], ref: dt.date) -> dt.date | None:
    """"十一月最后一个周五", "下个月第二个周三": that weekday of that month (a named month is the
    next one, as for "12 月 3 号")."""
    if m.group(1):
        month = zh_number(m.group(1))
        if not 1 <= month <= 12:
            return None
        year = ref.year + (month < ref.month)
    else:
        year, month = _add_months(ref, _next(m.group(2)))
    nth = -1 if m.group(3).startswith("最") else zh_number(m.group(3)[1])
    return _nth_of_month(year, month, _WEEKDAYS_ZH[m.group(4)], nth)


def _resolve_calendar(kind: str, m: re.Match[str], ref: dt.date) -> str:
    found: dt.date | None = None
    if kind in ("md-en", "dm-en"):
        day, month_word = sorted(m.group(1, 2), key=str.isalpha)  # "December 18", "18 December"
        found = _month_day(ref, _month_number(month_word), int(day), m.group(3))
    elif kind == "md-zh":
        month, day = zh_number(m.group(2)), zh_number(m.group(3))
        year = m.group(1)
        if year and not year.isdigit():
            year = str(ref.year + {"今年": 0, "明年": 1}.get(year, 2))  # 今年 / 明年 / 后年
        found = _month_day(ref, month, day, year) if month and day else None
    elif kind == "nth-wd-zh":
        found = _nth_weekday_zh(m, ref)
    elif kind == "nm-day":
        found = _safe_date(*_add_months(ref, _next(m.group(1))), int(m.group(2)))
    elif kind == "nm-day-en":
        found = _safe_date(*_add_months(ref, _next(m.group(2))), int(m.group(1)))
    elif kind == "weekend":
        weeks = {"next": 1, "下": 1, "下下": 2}.get(m.group(1).lower(), 0)
        found = _monday(ref) + dt.timedelta(days=5 + 7 * weeks)
    elif kind == "in-months":
        count, unit = m.group(1), (*m.groups(), "month")[1].lower()  # "两个月后" names no unit
        if unit == "fortnight":
            found = ref + dt.timedelta(days=14 * _count(count))
        elif count == "半":
            found = ref + dt.timedelta(days=15)
        else:
            n = zh_number(count) if len(count) > 1 and has_cjk(count) else _count(count)
            year, month = _add_months(ref, n)
            found = _safe_date(year, month, min(ref.day, _month_end(year, month).day))
    elif kind in ("eom-0", "eom-1"):
        found = _month_end(*_add_months(ref, int(kind[-1])))
    elif kind == "eom-zh":
        found = _month_end(*_add_months(ref, _next(m.group(1))))
    elif kind == "eom-named-zh":
        month = zh_number(m.group(1))
        if 1 <= month <= 12:
            found = _month_end(ref.year + (month < ref.month), month)
    elif kind == "nth-wd":
        found = _nth_weekday(m, ref)
    elif kind == "eom-named-en":
        month = _month_number(m.group(1))
        found = _month_end(int(m.group(2)) if m.group(2) else ref.year + (month < ref.month), month)
    elif kind == "mid-zh":
        found = _safe_date(*_add_months(ref, _next(m.group(1))), 15)
    elif kind == "eoq":
        quarter = zh_number(m.group(1))
        end = _month_end(ref.year, quarter * 3)
        found = end if end >= ref else _month_end(ref.year + 1, quarter * 3)
    elif kind == "eoy":
        found = dt.date(ref.year, 12, 31)
    elif kind in ("holiday", "holiday-en"):
        month, day = _HOLIDAYS[m.group(2 if kind == "holiday-en" else 1).lower()]
        found = _safe_date(ref.year, month, day)
        if found is None or found < ref:
            found = _safe_date(ref.year + 1, month, day)
        if found and kind == "holiday-en":
            return f"{m.group(1)} {found.isoformat()}"
        if found and kind == "holiday" and m.group(2):
            found -= dt.timedelta(days=1)  # "国庆前完工": done by the day before
    elif kind.startswith("day-zh"):  # "it broke on the 25th" (past): the last such day
        day, back = int(m.group(1)), kind.endswith("past")
        named = _ISO_DATE.findall(m.string, 0, m.start())
        found = _safe_date(ref.year, ref.month, day)
        if named and int(named[-1][2]) < day:  # "April 2nd … back on the 23rd": that month
            found = _safe_date(int(named[-1][0]), int(named[-1][1]), day)
        elif found is None or (found > ref if back else found < ref):
            found = _safe_date(*_add_months(ref, -1 if back else 1), day)
    return found.isoformat() if found else m.group(0)


_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
# "every Friday", "each month", "Tuesdays", "每周五", "隔周": a phrase that recurs names no one date
RECURRING = re.compile(r"\b(?:every|each)\b|\b\w+days\b|每|隔", re.I)


def future_dates(text: str, day: dt.date, *, weekdays: bool = True) -> list[dt.date]:
    """The dates after ``day`` that ``text`` names once its relative dates are resolved
    against ``day`` (``weekdays``: as :func:`absolutize_dates`)."""
    out = []
    for m in _ISO_DATE.finditer(absolutize_dates(text, day, weekdays=weekdays)):
        try:
            when = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            continue
        if when > day:
            out.append(when)
    return out


# "Wednesday the 25th", "monday 30th", "Friday, December 18", "Thursday 3 December", "周三 25 号",
# "12月25日（周三）": one day
# named twice, by its weekday and its day of the month (a bare number after a weekday is a time: "Friday 3")
_WEEKDAY_AND_DAY = re.compile(
    rf"\b(?P<wd>{_WD}),?\s+(?:(?P<mon>{_MONTH_RE})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?|"
    rf"the\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?|"
    rf"(?P<d6>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{_MONTH_RE})|"
    rf"(?P<d3>\d{{1,2}})(?:st|nd|rd|th))\b(?!\s+of\b)|"
    rf"(?:周|週|星期|礼拜|禮拜)(?P<wz1>[{_ZH_WD}])\s*[（(]?\s*(?P<d4>\d{{1,2}})\s*(?:号|號|日)[)）]?|"
    rf"(?<![月\d])(?:(?P<monz>\d{{1,2}})\s*月\s*)?(?P<d5>\d{{1,2}})\s*(?:号|號|日)\s*[（(]?\s*"
    rf"(?:周|週|星期|礼拜|禮拜)(?P<wz2>[{_ZH_WD}])[)）]?",
    re.I,
)


def _weekday_and_day(m: re.Match[str], ref: dt.date, past: bool) -> str:
    """The date that is both that weekday and that day (of that month, when named, within a year),
    the first on or after ``ref`` (``past``: on or before it), else one this month or the one
    before (after); the phrase as said when none is."""
    g = m.groupdict()
    weekday = _weekday_index(g["wd"] or g["wz1"] or g["wz2"])
    day = int(next(g[k] for k in ("d1", "d2", "d3", "d4", "d5", "d6") if g[k]))
    month = _month_number(g["mon"] or g["mon2"]) if g["mon"] or g["mon2"] else int(g["monz"] or 0)
    for back in (past, not past):  # the tense's way first (a year, with a month named), then near
        for k in range(13 if month and back == past else 2):  # this month or the next (last)
            year, at = _add_months(ref, -k if back else k)
            found = _safe_date(year, at, day) if month in (0, at) else None
            if found and found.weekday() == weekday and (found <= ref if back else found >= ref):
                return found.isoformat()
    return m.group(0)


# Where a clause ends (not at the comma of "Friday, December 18" or "June 12, 2027"), and the goal
# of a change ("pushed to the 19th", "推到 9 号了", "改成周五"): a date there is where the event lies now.
_DATED = (_WEEKDAY_AND_DAY, *(p for p, _ in (*_CALENDAR, *_EN_PATTERNS, *_ZH_PATTERNS)))
_CLAUSE_END = re.compile(rf"([，；：;:。]|,(?!\s*(?:\d|{_MONTH_RE}\b)))", re.I)
_GOAL = re.compile(r"\bto\s+|[到成]\s*", re.I)


def _dates_of_clauses(
    text: str, ref: dt.date, weekdays: bool, told_past: Callable[[str], bool]
) -> str:
    """Each clause's dates as its own verb tells them (``told_past``), not as the sentence's
    first past tense does; a date that is the goal of a change is not past for the change (the
    second end of a span, a date before the "to", keeps the clause's tense)."""
    out = []
    for clause in filter(None, _CLAUSE_END.split(text)):  # the separators are pieces too
        goals = (g for g in _GOAL.finditer(clause) if any(p.match(clause, g.end()) for p in _DATED))
        # "下周二到周四": a date before the "到" makes a span, not a goal
        cut = next(
            (g.end() for g in goals if not has_relative_date(clause[: g.start()])), len(clause)
        )
        out += [absolutize_dates(clause[:cut], ref, weekdays=weekdays, past=told_past(clause)),
                absolutize_dates(clause[cut:], ref, weekdays=weekdays)]
    return "".join(out)


def absolutize_dates(
    text: str, ref: dt.date, *, weekdays: bool = True, past: bool | Callable[[str], bool] = False
) -> str:
    """Rewrite relative date phrases in ``text`` as ISO dates counted from ``ref``.

    A weekday with a day of the month is the date that has both (:func:`_weekday_and_day`);
    then calendar dates ("December 18", "12月3日", "下个月 15 号", "月底", "end of the month"),
    then relative phrases. ``weekdays=False`` leaves a bare weekday alone ("never deploy on
    Friday", "永远不要在周五发布" name a day of every week, not a date). ``past``: the text tells
    what happened, so a bare weekday or day of the month is the last one, not the next; a test
    of a clause's tense instead decides it clause by clause (:func:`_dates_of_clauses`).
    """
    if callable(past):
        return _dates_of_clauses(text, ref, weekdays, past)
    out, at = [], 0
    for m in _WEEKDAY_AND_DAY.finditer(text):
        out += [_absolutize(text[at : m.start()], ref, weekdays, past), _weekday_and_day(m, ref, past)]
        at = m.end()
    return "".join([*out, _absolutize(text[at:], ref, weekdays, past)])


def _absolutize(text: str, ref: dt.date, weekdays: bool, past: bool) -> str:
    if not text:
        return text
    text = _NEXT_WEEK_RANGE.sub(r"\1\2\3\1", text)  # "下周一到周三": both ends are next week
    for i, (pattern, kind) in enumerate((*_CALENDAR, *_EN_PATTERNS, *_ZH_PATTERNS)):
        if kind in ("bare-wd", "bare-wd-zh", "day-zh"):  # the tense says which
            if not weekdays and kind != "day-zh":
                continue
            kind += "-past" * past
        resolve = _resolve_calendar if i < len(_CALENDAR) else _resolve
        text = pattern.sub(
            lambda m, k=kind, f=resolve: _in_range(f, k, m, ref), text  # type: ignore[misc]
        )
    return _FROM_DATE.sub(lambda m: _in_range(lambda _k, m, ref: _from_date(m, ref), "", m, ref), text)


def _in_range(resolve: Callable[[str, re.Match[str], dt.date], str], kind: str, m: re.Match[str], ref: dt.date) -> str:
    """The phrase resolved, or left as said when its date is past the calendar's end ("in
    99999999999 days", "120000 个月后"): extraction answers every payload, so a count no date can
    hold must not raise."""
    try:
        return resolve(kind, m, ref)
    except (ValueError, OverflowError):
        return m.group(0)


# "a week from yesterday", "two days from today", "ten days from now": an offset from a date already resolved.
_FROM_DATE = re.compile(rf"\b(?:an?|{_NUM_EN})\s+(day|week)s?\s+from\s+(?:now\b|(\d{{4}})-(\d{{2}})-(\d{{2}})(?!\d))", re.I)


def _from_date(m: re.Match[str], ref: dt.date) -> str:
    count = _count(m.group(0).split()[0])  # "a", "an": 1
    try:
        base = ref if m.group(2) is None else dt.date(int(m.group(2)), int(m.group(3)), int(m.group(4)))
    except ValueError:
        return m.group(0)
    return (base + dt.timedelta(days=count * (7 if m.group(1).lower() == "week" else 1))).isoformat()


def has_relative_date(text: str) -> bool:
    return any(p.search(text) for p in _DATED[1:])


# ----------------------------------------------------------------------------- shaping

MAX_DESCRIPTION = 150


_FIRST_PERSON = [
    # "my partner and I moved" -> "their partner and the user moved" (not "… and they moved")
    (re.compile(r"\b((?:[Mm]y|[Oo]ur)\s+[\w'-]+\s+and\s+)I\b(?!')"), r"\1the user"),
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI was\b"), "they were"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bme\b", re.I), "them"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
]
_ZH_ME = re.compile(r"我(?![们們])")


def third_person(text: str) -> str:
    for pattern, repl in _FIRST_PERSON:
        text = pattern.sub(repl, text)
    return _ZH_ME.sub("用户", text)


_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "are": "is", "can": "can",
              "will": "will", "would": "would", "should": "should", "must": "must"}


def verb_3rd(verb: str) -> str:
    """``use`` → ``uses`` for "User always uses …"."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if not low.isalpha() or (low.endswith("s") and not low.endswith(("ss", "sh", "ch"))):
        return verb
    if low.endswith(("sh", "ch", "x", "z", "o", "ss")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def tidy(text: str) -> str:
    text = " ".join(text.replace("\u2019", "'").replace("\u2018", "'").split())
    text = text.strip(" ,;:，、：；-—")
    return re.sub(r"[.。!！]+$", "", text).strip()


def sentence_case(text: str) -> str:
    """Tidy and capitalise English; text with Chinese in it is left as written."""
    text = tidy(text)
    if not text or has_cjk(text):
        return text
    return text[:1].upper() + text[1:]


def as_line(text: str) -> str:
    """One body line: capitalised and ending with a full stop of the right script."""
    text = sentence_case(text)
    if not text:
        return text
    return text + ("。" if has_cjk(text) else ".")


def one_line(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = sentence_case(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:，") + "…"


# Linear in a run of spaces (issue 21): a match starts where a run starts ((?<!\s): one starting inside
# a run is never the leftmost one, and split_reason only asks for that one) and a run taken is never given
# back (*+), since no marker starts with a space.
_REASON_SPLIT = re.compile(
    rf"(?<!\s)\s*+[,;]?\s*+(?:\b(?:because of|{lex.REASON_EN}|due to|given that|{lex.PURPOSE_EN}|cuz|coz|bc|b/c)\b|'cause\b)\s*|"
    rf"(?<!\s)\s*+[，,；;]?\s*+(?:{lex.REASON_ZH}|原因是|{lex.PURPOSE_ZH})\s*",
    re.I,
)
REASON_NEXT = re.compile(
    rf"^(?:{lex.REASON_EN}|that's because|that is because|the reason is(?: that)?|reason:|"
    rf"{lex.REASON_ZH}|原因是|理由是)[\s:：,，]*(?P<r>.+)$",
    re.I,
)
"""The sentence after a rule giving its reason ("Because prod shares that box."), the reason in ``r``."""
REASON_NEXT_START = re.compile(rf"^(?:{lex.REASON_EN}|that's because|the reason is|{lex.REASON_ZH}|原因是)", re.I)
"""The narrower test the feedback rule asks of the next sentence (whether its rule is standing): fewer
openings than :data:`REASON_NEXT`, and nothing needs to follow them."""


def split_reason(text: str) -> tuple[str, str | None]:
    m = _REASON_SPLIT.search(text)
    if not m or m.start() == 0:
        return text, None
    fact, reason = text[: m.start()], text[m.end() :]
    reason = tidy(reason)
    if len(tokens(reason)) < 1:
        return text, None
    return tidy(fact), reason


def content_ok(text: str, *, min_tokens: int = 2) -> bool:
    """Enough substance to be a memory: ``min_tokens`` content words or 3 Chinese chars."""
    zh = sum(1 for ch in text if has_cjk(ch))
    code = len(_CODE_NAME.findall(text))  # "no `any`": a code name is content even if a stop word
    phrase = {w.lower() for w in raw_words(text)} & STOPWORDS - FUNCTION_WORDS  # recall's stopwords, content here ("anything")
    return zh >= 3 or len(tokens(text)) + len(phrase) + 2 * code >= min_tokens


PRONOUN_OBJECT = re.compile(
    r"^(?:it|this|that|these|those|them|him|her|you|your|yours|how|what|the way|when you)\b"
    r"(?!\s+(?:when|if) you)",
    re.I,
)
