"""Whether two records state the same fact in different words (the offline dream's paraphrase test).

Word overlap alone cannot tell "keep answers short" / "keep replies brief" (one fact) from
"the alpha service owns the queue" / "the beta service owns the queue" (two): both differ in
one word. What separates them is *what* differs. So a record's statement (description and
fact lines; not the reason, how-to or history lines) is reduced to a :class:`Gist`:

- **content units**, clause by clause and in order: English words without stopwords,
  British spelling as American ("colour"), stemmed by the one stemmer (Snowball, as recall:
  "deploys", "deployed", "deployment" are one unit)
  and mapped through a small table of everyday equivalences ("reply"/"answer",
  "lives in"/"is based in", "learn"/"study"); Chinese characters, function words out ("的",
  "尽量", "都", "每") and equivalent words mapped first ("回复"/"回答", "住在"/"生活在",
  "英文"/"英语"); a lowercase Latin word borrowed into Chinese ("commit") is a word too;
- **values**, what makes a statement true or false rather than how it is worded, each in
  one form however it is written: clock times as H:MM ("2pm", "14:00", "下午两点"), dates
  as ISO or month-day ("Dec 15th, 2026", "2026 年 12 月 15 日"), other numbers (digits,
  English and Chinese number words with their Chinese unit; "one" is mostly a pronoun and
  "一点" "a little", so neither is a number), weekdays, months and times of day, addresses
  (with or without "https://" and "www."), paths, `code`, tokens with a letter next to a
  digit ("1Password", "k8s", "v2.3" = 2.3), capitalised names that do not start a sentence,
  acronyms ("PRs" is "pr"), capitalised Latin words in Chinese text;
- **negation**: the units and values after a negation ("not", "never", "don't", "instead",
  "rather", "不要", "不再" …) in their clause (clauses are cut at sentence ends and commas).

Two gists are the same fact (:func:`same_fact`) when:

1. their values agree: equal, an acronym matching the words the other spells it with ("PR" /
   "pull request"), a name the other says as a plain word at the start of a sentence; or
   one side adds a value (a restatement that says more). "Postgres 14" / "Postgres 15",
   "Dana" / "Priya", "read-only on weekends" / "Postgres 15" never agree;
2. no clause one negates is stated plainly by the other ("mocks are fine in unit tests" /
   "don't use mocks in integration tests"), compared by words (Chinese by character
   bigrams: "不要写中文" is not against "用英文写"), and no value one names only under a
   negation is stated by the other ("Buildkite instead of Jenkins" / "runs on Jenkins");
3. they are not one frame with different fillers (:func:`swapped_in_place`): the same shared
   units in the same order with each side's own words (or a value) in the same slots is a
   different subject or value ("the alpha service" / "the beta service", "kept for a
   month" / "kept in GCS", "小李负责搜索" / "小张负责推荐"), unless synonyms made the fillers
   equal; a rewording moves, adds or drops words too;
4. they share a word unless an address or a name pins them to one thing (a time or a date
   in common and nothing else is two things at one time), two or more units (values
   included), and :data:`MIN_SHARED` of the smaller's units (:data:`MORE_SHARED` of the
   poorer's when one names a value more); :data:`ANCHORED_SHARED` when a name, an address or
   two values are shared, which pin down what the statement is about so the wording around
   them may differ more. Besides the whole statements, the two descriptions and the two
   bodies are compared apart (``views``): one pair stating the same fact is enough, when
   the whole statements clear 1–3.

A merge keeps every clause of every source (see :mod:`dreamd.models.offline.plan.plan`), so a
paraphrase never loses a fact; these rules exist to keep distinct facts apart, and they err
toward leaving two records alone. The equivalence tables hold only everyday words whose
meanings coincide in notes about work and life: lexical knowledge, like the stemmer, not a
list of phrasings. Statements that share almost no word ("is vegetarian" / "doesn't eat
meat", "reports to Rosa" / "Rosa is their manager") are beyond it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

from dreamd.models.offline.text import (
    CJK_RE,
    NEGATIONS,
    STOPWORDS,
    ZH_NEGATIONS,
    normalize,
    zh_number,
)
from memory.retrieval.tokens import stem

__all__ = ["ANCHORED_SHARED", "MIN_SHARED", "MORE_SHARED", "VALUE_SLOT", "Gist", "gist", "same_fact", "swapped_in_place", "value_kind"]

MIN_SHARED = 0.6
"""Share of the smaller gist's content units the other must have."""
ANCHORED_SHARED = 0.5
""":data:`MIN_SHARED` when the two share a name or an address (what the statement is about)."""
MORE_SHARED = 0.6
"""Share of its units a gist must find in one that also names a value it does not: the same
as any paraphrase needs (a restatement that adds a name, a date or a number says more, not
something else; 0.9 once, which kept apart nearly every rewording that named one thing more)."""

_EN_SYNONYMS = (
    "answer reply response respond",
    "short brief concise terse succinct",
    "like prefer want love enjoy favor favorite fond",
    "use utilize employ run execute built written powered",
    "before prior",
    "begin start",
    "finish end complete",
    "show display",
    "tell inform notify",
    "fix repair",
    "big large huge",
    "small little tiny",
    "fast quick rapid speedy",
    "check verify",
    "need require",
    "help assist",
    "edit modify",
    "remove delete",
    "skip omit",
    "repo repository",
    "config configuration",
    "doc docs documentation",
    "colleague coworker teammate",
    "email mail",
    "buy purchase",
    "car vehicle",
    "doctor physician",
    "job occupation",
    "kid child children",
    "talk speak",
    "direct straight",
    "keep stay remain",
    "often frequently",
    "usually normally typically generally",
    "allergy allergic",
    "intro introduction preamble preface",
    "explanation explain",
    # general language: one meaning, several everyday words for it
    "live reside based located situated hosted stored kept sits",
    "learn study",
    "called named",
    "own handle manage maintain",
    "ask contact ping consult",
    "due deadline",
    "ship release launch",
    "meet meeting sync",
    "app application",
    "db database",
    "env environment",
    "auth authentication",
    "prod production",
    "infra infrastructure",
    "msg message",
    "spec specification",
    "k8s kubernetes",
    "bug issue defect ticket",
    "create make",
    "pick choose select",
    "plan schedule",
    "team group squad crew",
    "price cost",
    "picture photo image",
    "movie film",
    "trip travel journey",
    "sick ill",
    "folder dir",
    "hobby pastime",
    "vacation holiday",
)
_ZH_SYNONYMS = (
    "回答 回复 答复 应答",
    "简短 简洁 简要 精简 简练 简明",
    "喜欢 偏好 喜爱 偏爱 倾向于 倾向 热爱 钟爱 爱好 爱",
    "用户 用戶",
    "住 居住 住在 生活在 定居 常住 家在",
    "学习 在学 学",
    "负责 负责人 主管 管理 管",
    "批准 通过 同意 认可",
    "截止 截止日期 期限 最晚",
    "英文 英语",
    "中文 汉语",
    "发布 上线 发版 推出",
    "工作 上班",
    "推送 发送",
    "通知 提醒",
    "计划 规划 打算",
    "开始 启动",
    "完成 结束",
    "地址 位置 链接 网址",
    "看板 面板 仪表盘 仪表板 大盘",
    "账号 账户 帐号 帐户",
    "密码 口令",
    "服务器 主机",
    "库 数据库",
    "推迟 延期 延后 推后",
    "使用 采用 运用",
    "运行 执行",
    "之前 以前 事先 提前",
    "修复 修正",
    "删除 删掉 移除",
    "检查 核对 核查",
    "需要 必须 得要 应该 应当",
    "确保 保证",
    "编写 撰写 书写",
    "仓库 代码库",
    "配置 设置",
    "文档 说明文档 说明 手册",
    "同事 同僚",
    "孩子 小孩 子女",
    "周 星期 礼拜",
    "开会 会议",
    "解释",
    "开场白 客套话 客套",
)
_ZH_FILLER = (
    "尽量", "尽可能", "一定", "总是", "始终", "一直", "比较", "非常", "特别", "平时", "通常", "一般",
    "主要", "基本上", "大部分", "大多", "每个", "每", "我们", "我們", "用户", "用戶", "现在", "目前", "所有", "统一", "一律", "全部", "他们", "她们",
    "的", "了", "着", "地", "都", "也", "还", "就", "很", "要", "请", "是", "在", "我", "你", "他",
    "她", "它", "把", "被", "和", "与", "及", "或",
)
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "hundred": 100,
    "once": 1, "twice": 2, "single": 1, "double": 2, "half": 0.5, "dozen": 12,
}
_WHEN_WORDS = frozenset((
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekend",
    "weekday", "january", "february", "march", "april", "june", "july", "august", "september",
    "october", "november", "december", "morning", "afternoon", "evening", "night", "noon",
    "midnight",
))
"""Weekdays, months and times of day: values. ("May" is a modal verb too, so not a month here.)"""
_SEGMENT = re.compile(r"[.!?;:,]+(?:\s+|$|(?=[\u3400-\u9fff]))|[。！？；：，、\n（）()]+|(?<![^\S\n])\s+(?:but|while|whereas)\s+")
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#._'-]*[A-Za-z0-9+#]|[A-Za-z]")
_VALUE_PATTERNS = (
    re.compile(r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://\S+", re.I),  # anchored, possessive: linear
    re.compile(r"`[^`]+`"),
    re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]+\.[\w.]+"),
    re.compile(r"(?<![\w./-])[\w.-]*+(?<=[\w-])/[\w./-]+"),
    re.compile(r"#[\w-]+"),
    re.compile(r"\d+(?:[.:/-]\d+)*"),
)
_SCHEME = re.compile(r"^(?:https?://)?(?:www\.)?(?=[^/@\s]+\.[a-z]{2,}(?:/|$))")
"""An address with or without "https://" and "www." is one address."""
# Linear in a body's length (issue 21): a number is matched from its first digit ((?<!…): a match starting
# inside a number is never the leftmost one, and no match ends inside one) and never given back (++), since
# neither a unit nor a space is a digit.
_ZH_NUMERAL = re.compile(
    r"(?P<n>(?<![零一二两兩三四五六七八九十百千万])[零一二两兩三四五六七八九十百千万]++|(?<!\d)\d++)\s*"
    r"(?P<unit>[次点個个天周月号日年岁人分位台条遍倍份张项页行元块]半?)"
    r"|(?P<bare>(?<![零一二两兩三四五六七八九十百千万])[零一二两兩三四五六七八九十百千万]++)(?=[^\u3400-\u9fff]|$)"
)
_ZH_WHEN = re.compile(r"上午|下午|中午|早上|晚上|凌晨|半夜|周末|工作日|每天|天天|每日|每周|每月|每年|每晚|每早")
_ZH_WHEN_SAME = {"天天": "每天", "每日": "每天"}
_ZH_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_NEGATION = re.compile("|".join(re.escape(n) for n in sorted((*ZH_NEGATIONS, "不再", "没有", "无需", "勿"), key=len, reverse=True)))
_EN_NEG = NEGATIONS | {"nothing", "none", "neither", "cannot", "cant", "wont", "isnt", "arent", "shouldnt",
                       "rather", "instead"}


_BRITISH = (
    (re.compile(r"(?<=\w{3})our(?=(?:s|ed|ing|ite|ites|able|ful)?$)"), "or"),  # colour, favourite
    (re.compile(r"(?<=\w{2}[tb])re(?=(?:s|d)?$)"), "er"),  # centre, metre, fibre
    (re.compile(r"(?<=\w{3})ogue(?=s?$)"), "og"),  # catalogue, dialogue
    (re.compile(r"(?<=\w{3})yse(?=(?:s|d)?$)"), "yze"),  # analyse
    (re.compile(r"(?<=\w{5})mme(?=s?$)"), "m"),  # programme
)
_NOT_BRITISH = frozenset({"detour", "devour", "contour", "paramour"})


def _american(word: str) -> str:
    """British spelling as American ("colour" → "color"); "-ise"/"-ize" meet in the stem."""
    if word in _NOT_BRITISH:
        return word
    for pattern, repl in _BRITISH:
        word = pattern.sub(repl, word, count=1)
    return word


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """The one stemmer's stem (Snowball, :func:`memory.retrieval.tokens.stem`) of the word in
    American spelling. Memoised: a dream stems the same few thousand words hundreds of
    thousands of times."""
    return stem(_american(word.lower().replace("'", "")))


def _table(groups: tuple[str, ...], key: Callable[[str], str]) -> dict[str, str]:
    """Each word of each synonym group (as ``key`` normalises it) to its group's first word."""
    out: dict[str, str] = {}
    for group in groups:
        words = group.split()
        for w in words:
            out[key(w)] = key(words[0])
    return out


_WHEN_STEMS = frozenset(_stem(w) for w in _WHEN_WORDS)
_EN_CANON = _table(_EN_SYNONYMS, _stem)
_ZH_CANON = _table(_ZH_SYNONYMS, str)
_ZH_REPLACE = re.compile("|".join(re.escape(w) for w in sorted(_ZH_CANON, key=len, reverse=True)))
_ZH_DROP = re.compile("|".join(re.escape(w) for w in sorted(_ZH_FILLER, key=len, reverse=True)))
_STOP_STEMS = frozenset(_stem(w) for w in STOPWORDS if w.isascii()) | {
    _stem(w)
    for w in ("please", "also", "always", "every", "all", "only", "really", "just", "still",
              "currently", "now", "anymore", "last", "next", "ago", "recently", "today",
              "yesterday", "tomorrow", "one", "other", "another", "anything", "everything")
}
"""Words that quantify or hedge a statement, or place it relative to today (dates that matter
are absolute in a record), without changing what it says. "One" is mostly a pronoun or a
determiner ("the one who", "one child is four, the other seven"), not a count."""


@dataclass(frozen=True)
class Gist:
    """What a statement says, reduced for comparison (see the module docstring)."""

    values: frozenset[str]
    clauses: tuple[tuple[str, ...], ...]
    """The content units of each clause, in order."""
    negated: tuple[frozenset[str], ...]
    """The units under a negation, per clause (empty when the clause negates nothing)."""
    negated_values: frozenset[str] = frozenset()
    """Values named only under a negation ("instead of Slack", "不再放 Confluence")."""
    frames: tuple[tuple[str, ...], ...] = ()
    """Per clause, its units in order with :data:`VALUE_SLOT` where its values stood."""
    grams: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()
    """Per clause, the words before and after its negation, Chinese as character bigrams
    (:func:`_grams`): what a negation is about, for :func:`_conflict`."""

    @cached_property
    def content(self) -> frozenset[str]:
        return frozenset(u for c in self.clauses for u in c)

    @cached_property
    def initials(self) -> dict[str, frozenset[str]]:
        """What 2 to 4 consecutive English words of a clause would be abbreviated to ("pull
        request" → "pr"), with those words, so that an acronym and its expansion are one value."""
        out: dict[str, set[str]] = {}
        for clause in self.clauses:
            for i in range(len(clause)):
                for n in (2, 3, 4):
                    words = clause[i : i + n]
                    if len(words) == n and all(w.isascii() and w[:1].isalpha() for w in words):
                        out.setdefault("".join(w[0] for w in words), set()).update(words)
        return {k: frozenset(v) for k, v in out.items()}

    @cached_property
    def plain(self) -> tuple[frozenset[str], ...]:
        return tuple(frozenset(c) - n for c, n in zip(self.clauses, self.negated, strict=True))


_ZH_HOUR = r"\d{1,2}|[零一二两兩三四五六七八九十]{1,3}"
_ZH_TIME = re.compile(
    rf"(?:(?P<part>上午|早上|早晨|中午|下午|傍晚|晚上|夜里|凌晨)|(?<!\s))\s*(?P<h>{_ZH_HOUR})\s*[点點时時]"
    rf"(?:\s*(?P<half>半)|\s*(?P<m>{_ZH_HOUR})\s*分(?!钟)|(?P<whole>整|钟))?"
)
_EN_TIME = re.compile(r"(?<![\d:.])(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>[ap])\.?m\b\.?"
                      r"|(?<![\d:.])(?P<h24>\d{1,2}):(?P<m24>\d{2})(?![\d:])", re.I)
_PM_PARTS = frozenset({"下午", "傍晚", "晚上", "夜里"})


def _clock(hour: int, minute: int) -> str | None:
    """A time of day as one value, whatever its wording ("2pm", "14:00", "下午两点")."""
    return f"{hour}:{minute:02d}" if 0 <= hour <= 24 and 0 <= minute < 60 else None


def _zh_time(m: re.Match[str]) -> str | None:
    """A Chinese clock time, or None when "N点" is not one ("简短一点": a little shorter)."""
    part, h = m.group("part"), m.group("h")
    if not (part or m.group("half") or m.group("m") or m.group("whole") or h.isdigit() or h not in "一"):
        return None
    hour = int(h) if h.isdigit() else zh_number(h.replace("两", "二").replace("兩", "二"))
    minute = 30 if m.group("half") else 0
    if m.group("m"):
        mm = m.group("m")
        minute = int(mm) if mm.isdigit() else zh_number(mm)
    if (part in _PM_PARTS and hour < 12) or (part == "中午" and hour < 3):
        hour += 12
    return _clock(hour, minute)


def _times(text: str) -> str:
    """Clock times written as H:MM ("2pm", "下午两点" → "14:00")."""
    def zh(m: re.Match[str]) -> str:
        value = _zh_time(m)
        return m.group() if value is None else f" {value} "

    def en(m: re.Match[str]) -> str:
        if m.group("h24"):
            value = _clock(int(m.group("h24")), int(m.group("m24")))
        else:
            hour = int(m.group("h")) % 12 + (12 if m.group("ap").lower() == "p" else 0)
            value = _clock(hour, int(m.group("m") or 0))
        return m.group() if value is None else f" {value} "

    return _EN_TIME.sub(en, _ZH_TIME.sub(zh, text) if _chinese(text) else text)


def _chinese(text: str) -> bool:
    """Whether the Chinese patterns (numerals, weekdays, times of day, 月/日 dates, negations)
    can match: each needs a Chinese character, which ASCII text has none of. Skipping them
    there is a third of an English gist's time and changes nothing."""
    return not text.isascii()


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_EN_MONTH = r"(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_ZH_DAY = r"\d{1,2}|[一二三四五六七八九十]{1,3}"
_ZH_DATE = re.compile(rf"(?:(?P<y>\d{{4}})\s*年\s*)?(?P<m>{_ZH_DAY})\s*月\s*(?P<d>{_ZH_DAY})\s*[日号號]")
_DATES = (
    re.compile(r"(?<![\d-])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?![\d-])"),
    _ZH_DATE,
    re.compile(rf"\b{_EN_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}})\b)?", re.I),
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}(?:,?\s+(?P<y>\d{{4}})\b)?", re.I),
)


def _number(token: str) -> int:
    return int(token) if token.isdigit() else zh_number(token)


def _dates(text: str) -> str:
    """Calendar dates written as ISO (``2026-12-15``), or month-day (``12-15``) when no year
    is given, whatever their wording ("Dec 15th", "12 月 15 日")."""
    def one(m: re.Match[str]) -> str:
        groups = m.groupdict()
        month = _MONTHS.index(groups["mon"].lower()) + 1 if groups.get("mon") else _number(groups["m"])
        day = _number(groups["d"])
        if not (1 <= month <= 12 and 1 <= day <= 31):
            return m.group()
        return f" {groups['y']}-{month:02d}-{day:02d} " if groups.get("y") else f" {month:02d}-{day:02d} "

    chinese = _chinese(text)
    for pattern in _DATES:
        if chinese or pattern is not _ZH_DATE:
            text = pattern.sub(one, text)
    return text


def _same_dates(values: frozenset[str], other: frozenset[str] = frozenset()) -> frozenset[str]:
    """``values`` with a month-day written out in full elsewhere (in ``values`` or ``other``)
    as that full date: "Dec 15" and "2026-12-15" in one note are one date."""
    full = [v for v in values | other if _FULL_DATE.fullmatch(v)]
    out = set()
    for v in values:
        match = [f for f in full if f.endswith("-" + v)] if _MONTH_DAY.fullmatch(v) else []
        out.add(match[0] if len(match) == 1 else v)
    return frozenset(out)


_FULL_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_MONTH_DAY = re.compile(r"\d{2}-\d{2}")


VALUE_SLOT = "\ue000"
"""Where a value stood in a clause, for :func:`swapped_in_place` (never a content unit)."""
_BLANK = f" {VALUE_SLOT} "
_SLOT = frozenset({VALUE_SLOT})


def _slotted(text: str) -> list[str]:
    """The units of a text with values blanked, :data:`VALUE_SLOT` where each run of them was."""
    out: list[str] = []
    for i, piece in enumerate(text.split(VALUE_SLOT)):
        if i and (not out or out[-1] != VALUE_SLOT):
            out.append(VALUE_SLOT)
        out.extend(_units(piece))
    return out


def _values(text: str) -> tuple[set[str], str]:
    """The values of a segment, and the segment with them blanked out."""
    found: set[str] = set()
    chinese = _chinese(text)
    if chinese:
        for m in _ZH_WEEKDAY.finditer(text):
            found.add("周" + ("日" if m.group(1) == "天" else m.group(1)))
        text = _ZH_WEEKDAY.sub(_BLANK, text)
    for m in _MIXED.finditer(text):
        found.add(re.sub(r"^v(?=\d)", "", m.group().lower()))  # "v2.3" is version 2.3
    text = _MIXED.sub(_BLANK, text)
    if chinese:
        text = _ZH_NUMERAL.sub(lambda m: _zh_numeral(m, found), text)
    for pattern in _VALUE_PATTERNS:
        for m in pattern.finditer(text):
            found.add(_SCHEME.sub("", m.group().lower().strip("`").rstrip("./")))
        text = pattern.sub(_BLANK, text)
    if chinese:
        found.update(_ZH_WHEN_SAME.get(w, w) for w in _ZH_WHEN.findall(text))
        text = _ZH_WHEN.sub(_BLANK, text)
    cjk = bool(CJK_RE.search(text))
    for m in _EN_WORD.finditer(text):
        word = m.group()
        low = word.lower().replace("'", "")
        if low in _NUMBER_WORDS:
            found.add(str(_NUMBER_WORDS[low]))
        elif _stem(low) in _WHEN_STEMS:
            found.add(_stem(low))
        elif _ACRONYM.fullmatch(word) or (cjk and _NAMED.search(word)):
            found.add(_name_form(word))
    if cjk:  # a Latin name inside Chinese is a value; a plain lowercase word is a word
        text = _EN_WORD.sub(lambda m: _BLANK if _ACRONYM.fullmatch(m.group()) or _NAMED.search(m.group()) else m.group(), text)
    return found, text


_NAMED = re.compile(r"[A-Z0-9_.+#-]")
"""What makes a Latin word inside Chinese a name rather than a word ("Bytebase", "pg-slow",
"QA" are names; "commit", "schema" are words the sentence borrows)."""
_MIXED = re.compile(r"(?<![A-Za-z0-9_.+-])(?=[A-Za-z0-9_.-]*(?:[A-Za-z]\d|\d[A-Za-z]))[A-Za-z0-9][A-Za-z0-9_.-]*+(?<![.-])")
"""A token with a letter next to a digit ("1Password", "top10", "k8s", "v2.3"): one value,
not a number and a word. ("eu-west-1" stays a word and a number.)"""


def _zh_numeral(m: re.Match[str], found: set[str]) -> str:
    """A Chinese number with its unit into ``found`` ("两次" → "2次", "2027 年" → "2027"), but
    not "一点" ("a little", not one o'clock: a time has a part of day or 钟)."""
    digits = (m.group("n") or m.group("bare")).replace("两", "二").replace("兩", "二")
    unit = m.group("unit") or ""
    if digits == "一" and unit == "点":
        return m.group()
    if unit == "年" and len(digits) == 4 and digits.isdigit():
        unit = ""  # a year is the same number with or without 年
    found.add(str(zh_number(digits) or digits) + unit)
    return _BLANK


_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+)[\s\-*+>#\d.)\"'(\[]*$")


def value_kind(value: str) -> str:
    """What kind of value a gist value is: ``address`` (a URL, a path, an e-mail address, a
    channel), ``date`` (2026-12-10, 12月, 15号), ``time`` (9:30, 两点), ``number`` (any other
    digits), ``when`` (a weekday, month or time of day) or ``name``. A change replaces a value
    with one of the same kind: a standup moved to 10:00 says nothing about its room 4."""
    if re.search(r"://|/|@|^#|\.[a-z]{2,4}$", value):
        return "address"
    if re.fullmatch(r"\d{4}-\d{1,2}(?:-\d{1,2})?|\d{1,2}[/-]\d{1,2}|\d+[月日号]", value):
        return "date"
    if re.fullmatch(r"\d{1,2}:\d{2}(?::\d{2})?|\d+点半?", value):
        return "time"
    if value in _WHEN_STEMS or _ZH_WEEKDAY.fullmatch(value) or _ZH_WHEN.fullmatch(value):
        return "when"
    if re.search(r"[a-z]", value):
        return "name"  # an identifier of letters and digits: "eu-west-1", "k8s", "1password"
    if any(ch.isdigit() for ch in value) or _ZH_NUMERAL.fullmatch(value):
        return "number"
    return "name"


_ACRONYM = re.compile(r"[A-Z][A-Z0-9]+s?")


def _name_form(word: str) -> str:
    """A name as a value: lowercase, an acronym's plural "s" off ("PRs" is "pr")."""
    low = word.lower().replace("'", "")
    return low[:-1] if _ACRONYM.fullmatch(word) and word.endswith("s") else low


def _names(line: str) -> set[str]:
    """Capitalised words that do not start a sentence: names ("Dana", "Postgres", "Notion")."""
    return {
        _name_form(m.group())
        for m in _EN_WORD.finditer(line)
        if m.group()[0].isupper() and not _SENTENCE_START.search(line[: m.start()])
        and m.group().lower() not in STOPWORDS and m.group().lower() not in _NUMBER_WORDS
        and _stem(m.group()) not in _WHEN_STEMS
    }


def _en_units(text: str) -> list[str]:
    out: list[str] = []
    for m in _EN_WORD.finditer(text):
        low = m.group().lower().replace("'", "")
        if low in STOPWORDS or low in _EN_NEG or low in _NUMBER_WORDS:
            continue
        stem = _stem(low)
        if stem in _STOP_STEMS or stem in _WHEN_STEMS:
            continue
        out.append(_EN_CANON.get(stem, stem))
    return out


def _zh_units(text: str) -> list[str]:
    """The characters of the Chinese runs, function words out and synonyms mapped.

    Characters rather than bigrams: without word segmentation a bigram spans a word boundary,
    and an inserted word ("深色主题" / "编辑器和终端都用深色主题") would change two of them."""
    out: list[str] = []
    for run in re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", text):
        run = _ZH_NEGATION.sub(" ", run)
        run = _ZH_REPLACE.sub(lambda m: _ZH_CANON[m.group()], run)
        run = _ZH_DROP.sub(" ", run)
        out.extend(ch for ch in run if not ch.isspace())
    return out


def _grams(text: str) -> frozenset[str]:
    """English units and Chinese character bigrams (a lone character as itself): characters
    alone would tie "中文" to "英文" by their shared "文"; a negation is about words."""
    out: set[str] = set()
    for run in _SCRIPT_RUN.findall(text):
        if not CJK_RE.match(run):
            out.update(_en_units(run))
            continue
        run = _ZH_NEGATION.sub(" ", run)
        run = _ZH_REPLACE.sub(lambda m: _ZH_CANON[m.group()], run)
        for word in _ZH_DROP.sub(" ", run).split():
            out.update([word] if len(word) == 1 else (word[i : i + 2] for i in range(len(word) - 1)))
    return frozenset(out)


_SCRIPT_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _units(text: str) -> list[str]:
    """The content units of a text in order, English and Chinese runs as they come."""
    out: list[str] = []
    for run in _SCRIPT_RUN.findall(text):
        out.extend(_zh_units(run) if CJK_RE.match(run) else _en_units(run))
    return out


def _negation_at(segment: str) -> int:
    """Where the first negation of a segment starts (its length when there is none): what
    follows it is negated ("likes brief replies without preamble" negates only the preamble)."""
    at = len(segment)
    m = _ZH_NEGATION.search(segment) if _chinese(segment) else None
    if m:
        at = m.start()
    for w in _EN_WORD.finditer(segment[:at]):
        low = w.group().lower().replace("'", "")
        if low in _EN_NEG or w.group().lower().endswith("n't"):
            return w.start()
    return at


@lru_cache(maxsize=16384)
def gist(text: str) -> Gist:
    """The gist of one statement (a record's description and fact lines)."""
    values: set[str] = set()
    stated: set[str] = set()
    clauses: list[tuple[str, ...]] = []
    negated: list[frozenset[str]] = []
    grams: list[tuple[frozenset[str], frozenset[str]]] = []
    frames: list[tuple[str, ...]] = []
    lines = [_times(_dates(normalize(line))) for line in text.splitlines()]
    names = set().union(*(_names(line) for line in lines)) if lines else set()
    name_re = re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r")s?(?![\w'])", re.I) if names else None
    for segment in _SEGMENT.split("\n".join(lines)):
        if not segment or not segment.strip():
            continue
        at = _negation_at(segment)
        parts = [segment[:at], segment[at:]]
        found = [set[str](), set[str]()]
        if name_re is not None:
            for i, part in enumerate(parts):
                found[i] = {_name_form(m.group()) for m in name_re.finditer(part)}
                parts[i] = name_re.sub(_BLANK, part)
        before, after = _values(parts[0]), _values(parts[1])
        values |= before[0] | after[0] | found[0] | found[1]
        stated |= before[0] | found[0]
        plain_units = _units(before[1])
        negated_units = _units(after[1])
        if plain_units or negated_units:
            clauses.append(tuple(plain_units + negated_units))
            negated.append(frozenset(negated_units))
            grams.append((_grams(before[1]), _grams(after[1]) if negated_units else frozenset()))
            frames.append(tuple(_slotted(before[1]) + _slotted(after[1])))
    return Gist(values=_same_dates(frozenset(values)), clauses=tuple(clauses), negated=tuple(negated),
                negated_values=_same_dates(frozenset(values - stated), frozenset(values)),
                frames=tuple(frames), grams=tuple(grams))


def _conflict(x: Gist, y: Gist) -> bool:
    """A clause ``x`` negates that ``y`` states plainly (half its words in one plain clause of
    ``y``) and does not negate too: "don't use mocks in integration tests" / "mocks are fine
    in unit tests". Words, not characters: "不要写中文" says nothing against "用英文写"."""
    for _, n in x.grams:
        if len(n) == 1 and len(only := next(iter(n))) == 1 and CJK_RE.match(only):
            continue  # one character ("不吃", "不开") names no thing that is negated
        need = max(1.0, 0.5 * len(n))
        if n and any(len(n & p) >= need for p, _ in y.grams) and not any(len(n & m) >= need for _, m in y.grams):
            return True
    return False


def _value_conflict(x: Gist, y: Gist) -> bool:
    """A value ``x`` names only under a negation that ``y`` states plainly: "builds on Buildkite
    instead of Jenkins" / "the pipeline runs on Jenkins"."""
    return bool(x.negated_values & (y.values - y.negated_values))


def _frame(clause: tuple[str, ...], only: frozenset[str], skip: frozenset[str]) -> tuple[tuple[str, ...], frozenset[int]]:
    """A clause's shared units in order, and the slots (index into them) where units only
    this side has stand (``skip``: words that spell an acronym of the other side)."""
    skeleton: list[str] = []
    slots: set[int] = set()
    for u in clause:
        if u in skip:
            continue
        if u in only:
            slots.add(len(skeleton))
        else:
            skeleton.append(u)
    return tuple(skeleton), frozenset(slots)


def swapped_in_place(x: Gist, y: Gist, skip: frozenset[str] = frozenset()) -> bool:
    """Whether some clause of ``x`` and some clause of ``y`` are one frame with different
    fillers: the same shared units in the same order, each side's own words in the same
    slots ("the alpha service owns the queue" / "the beta service owns the queue",
    "小李负责搜索" / "小张负责推荐"). That is a different subject or value, unless synonyms made
    the fillers equal; a rewording moves, adds or drops words as well. A frame holds a word
    at least, or three Chinese characters: one shared character ("吃素" / "吃肉") or a
    two-character name ("河南人" / "老家河南") is too little wording to be a frame."""
    only_x = x.content - y.content - skip | (_SLOT if x.values - y.values else frozenset())
    only_y = y.content - x.content - skip | (_SLOT if y.values - x.values else frozenset())
    if not only_x or not only_y:
        return False
    frames_y = {_frame(c, only_y, skip) for c in y.frames}
    for c in x.frames:
        skeleton, slots = _frame(c, only_x, skip)
        if slots and _wording(skeleton) >= 1 and (skeleton, slots) in frames_y:
            return True
    return False


def _wording(units: tuple[str, ...]) -> float:
    """How many words' worth of wording ``units`` hold: a Chinese character is a third."""
    return sum(0 if u == VALUE_SLOT else 1 / 3 if CJK_RE.match(u) else 1 for u in units)


def _spelled_out(x: Gist, y: Gist) -> tuple[frozenset[str], frozenset[str]]:
    """``x``'s acronyms that ``y`` spells out instead ("PR" / "pull request"), and the words
    of ``y`` that spell them."""
    found = frozenset(v for v in x.values if v not in y.values and v in y.initials)
    return found, frozenset().union(*(y.initials[v] for v in found))


def _unit(word: str) -> str:
    return _EN_CANON.get(_stem(word), _stem(word))


def _named_in(x: Gist, y: Gist) -> tuple[frozenset[str], frozenset[str]]:
    """``y``'s names that ``x`` says as a plain word (a name that starts a sentence is not
    seen as one: "Kenji handles infra" / "ask Kenji"), and those words' units in ``x``."""
    found = frozenset(v for v in y.values - x.values
                      if value_kind(v) == "name" and v.isascii() and _unit(v) in x.content)
    return found, frozenset(_unit(v) for v in found)


_ANCHORS = frozenset({"name", "address"})
"""Value kinds that single out what a statement is about: a shared one lets the wording
around it differ more (:data:`ANCHORED_SHARED`)."""


def same_fact(x: Gist, y: Gist, views: Iterable[tuple[Gist, Gist]] = ()) -> bool:
    """Whether two gists state the same fact (see the module docstring).

    ``views`` are parts of the two statements to compare as well (a record's description with
    the other's, its body with the other's body): one that states the same fact is enough,
    when the whole statements do not differ in a value, a negation or a filler. A summary
    often says it in the same words while the bodies keep each speaker's own."""
    verdict = _compare(x, y)
    if verdict is None:
        return False
    return verdict or any(_compare(vx, vy) for vx, vy in views)


def _compare(x: Gist, y: Gist) -> bool | None:
    """``same_fact`` of two gists: True, False (too little in common), or None when they
    differ in a value, a negation or a filler, which no part of them can outweigh."""
    ax, spell_x = _spelled_out(x, y)
    ay, spell_y = _spelled_out(y, x)
    nx, word_x = _named_in(x, y)
    ny, word_y = _named_in(y, x)
    vx, vy = (x.values - ax) | nx, (y.values - ay) | ny
    vx, vy = _same_dates(vx, vy), _same_dates(vy, vx)
    if not (vx <= vy or vy <= vx):
        return None
    if not (x.content or x.values):
        return False
    if _conflict(x, y) or _conflict(y, x) or _value_conflict(x, y) or _value_conflict(y, x):
        return None
    acronyms = ax | ay
    cx, cy = x.content - spell_y - word_x, y.content - spell_x - word_y
    ux, uy = cx | vx | acronyms, cy | vy | acronyms
    skip = spell_x | spell_y | word_x | word_y
    if swapped_in_place(x, y, skip):
        return None
    shared = len(ux & uy)
    anchored = bool(acronyms) or any(value_kind(v) in _ANCHORS for v in vx & vy)
    if cx and cy and not cx & cy and not anchored:
        return False  # a time, a date or a number in common and nothing else: two things at one time
    pinned = anchored or len(vx & vy) >= 2
    if vx != vy:
        # one side names a value the other does not: a restatement that says more
        poorer = ux if vx < vy else uy
        if pinned:
            return shared >= 2 and shared >= ANCHORED_SHARED * len(poorer)
        return shared >= MORE_SHARED * len(poorer)
    need = ANCHORED_SHARED if pinned else MIN_SHARED
    return shared >= 2 and shared >= need * min(len(ux), len(uy))
