"""The conversation around a sentence: offers the user accepts, rules asked as questions, corrections.

- :func:`proposal_of` / :func:`accepts` — the assistant asks "Should I run the formatter
  before every commit?" or "should new functions get type hints?" and the user answers "yes,
  from now on" / "好的，以后就这么做": the offer becomes the user's rule.
- :func:`standing_request` — a standing rule asked as a question: "Can you always reply in
  English from now on?", "Would you mind keeping samples under 30 lines going forward?",
  "以后能不能都用英文回复？". A plain "Can you always tell when …?" asks what the assistant can
  do and is left alone.
- :func:`correction_of` — "Sorry, I meant Postgres 15", "不对，应该是 8.0", "Scratch that: … Ilona,
  not Marek", "哎说错了，是每周三…，周二是…": the new value (and the old one when named, before or after
  it, narrowed to the same shape) for the extractor to put right in the record it already made.
"""

from __future__ import annotations

import re

from dreamd.models.offline.text import has_cjk

# ----------------------------------------------------------------------------- proposals accepted

_PROPOSAL = re.compile(
    r"(?:^|\s)(?:should|shall|can|may)\s+i\s+(?:also\s+|just\s+)?(?P<x>[^?]+?)\s*\?\s*$|"
    r"(?:^|\s)(?:do|would)\s+you\s+(?:want|like)\s+me\s+to\s+(?:also\s+)?(?P<y>[^?]+?)\s*\?\s*$|"
    r"(?:^|\s)want\s+me\s+to\s+(?P<z>[^?]+?)\s*\?\s*$|"
    r"(?:要不要|需不需要|用不用)我(?P<w>[^？?]+?)[？?]\s*$|(?:需要|要)我(?P<v>[^？?]+?)吗[？?]\s*$|"
    r"(?:^|\s)(?:should|shall|must)\s+(?P<u>(?!i\b|we\b)[a-z][^?]{4,}?)\s*\?\s*$|"
    r"^(?P<t>[^？?，,]{3,30}?(?:要|需要|应该|應該|得)[^？?]{2,30}?)(?:吗|嗎)[？?]\s*$",
    re.I,
)
_ACCEPT = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|please do|do it|go ahead|sounds good|that works|absolutely|definitely|"
    r"good idea|great idea|perfect)\b|^(?:好的?|可以|行|嗯|对|對|没问题|沒問題|要的?|需要|就这么办|就這麼辦)",
    re.I,
)


def proposal_of(assistant_text: str) -> str | None:
    """What the assistant offered to do in its last question ("Should I always run X?" → "always run X")."""
    for line in reversed([x.strip() for x in assistant_text.splitlines() if x.strip()]):
        m = _PROPOSAL.search(line)
        if m:
            return next(g for g in m.groups() if g).strip(" ,，")
    return None


def accepts(sentence: str) -> bool:
    """Whether a user sentence accepts what was just offered ("Yes, please do that from now on")."""
    return bool(_ACCEPT.match(sentence.strip()))


# ----------------------------------------------------------------------------- requests phrased as questions

_POLITE_ASK_EN = re.compile(
    r"^(?:would you mind\s+|do you mind\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)(?P<x>.+?)\s*\?*\s*$", re.I
)
_ASK_ZH = re.compile(
    r"^(?P<y>.+?)[，,]\s*(?:可以吗|可以嗎|好吗|好嗎|行吗|行嗎)[？?]?$|"
    r"^(?P<pre>.*?)(?:你|您)?(?:以后|以後)?(?:能不能|可不可以|能否|可以)(?P<x>.+?)[？?]?$"
)
_GERUND = re.compile(r"^(\w+?)(?:ing)\b")


def standing_request(sentence: str) -> str | None:
    """A standing rule asked as a question ("Can you always reply in English from now on?",
    "Could you stop wrapping answers in tables?", "以后能不能都用英文回复？") as a directive."""
    s = sentence.strip()
    strong = re.search(
        r"\b(?:from now on|going forward|moving forward|in (?:the )?future|from here on|every time|whenever|stop|quit|"
        r"never|anymore|any more|please|me|my|us|our)\b|以后|以後|每次|别|別|不要|永远|永遠|一律|尽量|儘量|都|可以吗|可以嗎|"
        r"好吗|好嗎|行吗|行嗎", s, re.I)
    if not strong:
        return None  # "Can you always tell when …?" asks what the assistant can do
    m = _POLITE_ASK_EN.match(s)
    if m:
        x = m.group("x")
        if s.lower().startswith(("would you mind", "do you mind")):
            g = _GERUND.match(x)  # "would you mind keeping …" → "keep …"
            if g:
                stem = g.group(1)
                stem = stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] else stem
                x = stem + x[g.end() :]
        return x.rstrip(" ?？")
    m = _ASK_ZH.match(s)
    if m and has_cjk(s):
        x = (m.group("pre") or "") + (m.group("x") or "") if m.group("x") else (m.group("y") or "")
        if re.search(r"以后|以後", s) and not re.search(r"以后|以後", x):
            x = "以后" + x  # the standing word sat before 能不能
        return x.rstrip(" ?？")
    return None


# ----------------------------------------------------------------------------- corrections

_CORRECTION_EN = re.compile(
    r"^(?:(?:sorry|oops|wait|actually|correction|scratch that|my bad|no|err|erm|typo)(?:\s*[,:!.—–-])?\s+)+"
    r"(?:i meant|i mean|it's|it is|it should be|that should be|make that|that's|it was|"
    r"(?:it|that)(?:'s| has| was| is)?\s+(?:been\s+|now\s+)?(?:got\s+)?(?:pushed|moved|changed|bumped)(?:\s+back)?\s+to)"
    r"\s+(?P<new>.+?)"
    r"(?:,?\s*(?:not|rather than)\s+(?P<old>.+?))?[.!]?$|"
    r"^(?:it's|it is|that's|i meant|i mean)\s+(?P<new2>.+?),\s*not\s+(?P<old2>.+?)[.!]?$|"
    # a statement said again with the value it replaces, after words that take the first one back ("Scratch
    # that: invoices go to Ana, not Rob"). A bare "actually" or "no" does not: "Actually we use Poetry, not pip"
    # is as often news as a correction, and a correction whose old value no record holds is put right by shape.
    r"^(?:(?:hmm|hm|oh|ah)[,.]?\s+)?(?:(?:wait|no wait|sorry|oops|my bad|correction|scratch that|i got that wrong|"
    r"i was wrong|i misspoke)[,:!.—–-]?\s+){1,8}(?P<new3>[^,;]+?),?\s+not\s+(?P<old3>[^,;]{1,30}?)[.!]?$",
    re.I,
)
_CORRECTION_ZH = re.compile(
    r"^(?:(?:哦|噢|啊|哎|唉|呃|嗯|哎呀|哎哟|哎喲|啊呀|不好意思)?[，,]?\s*"
    r"(?:不对|不對|抱歉|更正|纠正|糾正|(?:更正|纠正|糾正)一下|"
    # "刚才那个不对", "我前面说的地址有误"
    r"(?:刚才|剛才|前面|上面)?(?:那个|那個|这个|這個)(?:不对|不對)|(?>我?(?:刚才|剛才|前面|上面)?(?:说|說|写|寫|给|給)的[^，,。]{0,6}?(?:有误|有誤|不对|不對))|"
    r"我?(?:刚才|剛才|刚刚|剛剛|前面|上面)?"
    r"(?:记错了|記錯了|写错了|寫錯了|打错了|打錯了|弄错了|弄錯了|搞错了|搞錯了|说错了|說錯了)|口误|口誤|等等|等下|等一下)"
    r"[，,：:!！。]?+\s*+)+"
    r"(?:应该是|應該是|其实是|其實是|是|(?:已经|已經)?(?:升到|升级到|升級到|换成|換成|改成|改到|改为|改為)了?)\s*"
    r"(?P<new>[^，,]+?)了?(?:[，,]?\s*(?:而)?不是(?P<old>[^，,。]+))?(?:[，,].*)?[。.!！]?$"
)
_NUMBER = re.compile(r"v?\d+(?:\.\d+)*[a-z]?")
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b(?-i:[A-Z][\w+#-]*)(?:\s(?-i:[A-Z][\w+#-]*))*")


def _narrowed(new: str, old: str, *, contrast: bool) -> str:
    """The part of ``new`` that takes the place of ``old``: a number for a number ("it's Node 20 we're on,
    not 18" → "20"). A whole statement said again ("Actually invoices go to Priya, not Tom") gives a name
    for a name, else as many closing words as ``old`` has ("the launch is on the 9th, not the 7th" →
    "the 9th"), so the record keeps its own words around the value."""
    old = old.strip()
    if _NUMBER.fullmatch(old):
        numbers = [m.group(0) for m in _NUMBER.finditer(new)]
        return numbers[-1] if len(numbers) == 1 else new
    if not contrast:
        return new
    if re.fullmatch(r"(?-i:[A-Z][\w+#-]*)(?:\s(?-i:[A-Z][\w+#-]*))?", old):
        names = [m.group(0) for m in _NAME.finditer(" " + new) if m.group(0) not in ("I", "I'm")]
        if len(names) == 1:
            return names[0].strip()
    return " ".join(new.split()[-len(old.split()):])


def correction_of(sentence: str) -> tuple[str, str | None] | None:
    """A value the user puts right ("sorry, I meant Postgres 15", "不对，应该是周四"): (new, old)."""
    m = _CORRECTION_EN.match(sentence.strip()) or _CORRECTION_ZH.match(sentence.strip())
    if not m:
        return None
    groups = m.groupdict()
    new = groups.get("new") or groups.get("new2") or groups.get("new3") or ""
    old = groups.get("old") or groups.get("old2") or groups.get("old3")
    if new.strip() and not old:
        old = _old_of_same_shape(new.strip(), sentence[m.end("new" if groups.get("new") else "new2"):])
        day = re.fullmatch(r"(\d{1,2})/(\d{1,2})", new.strip())
        if old is None and day:
            new = day.group(2)  # "不对，是 12/16": the day put right, so "12/15" becomes "12/16", never "12/12"
    elif new.strip() and old:
        new = _narrowed(new.strip(), old, contrast=bool(groups.get("new3")))
    return (new.strip(), old.strip() if old else None) if new.strip() else None


# A value with a shape a correction can swap: a weekday ("周三", "星期三", "礼拜三") or a number with its unit.
_SWAPPABLE = re.compile(r"(?:周|週|星期|礼拜|禮拜)[一二三四五六日天]|(?<!\d)\d+(?:\.\d+)?\s*(?:点|點|号|號|日|岁|歲|个|個|人)")


def _old_of_same_shape(new: str, rest: str) -> str | None:
    """The old value a correction names only after its new one ("说错了，是每周三下午两点，周二是合唱团"):
    the value of the same shape later in the sentence goes where the new one stands, so the phrase the
    earlier record holds ("每周二下午两点") is found and put right as a whole."""
    mine = _SWAPPABLE.search(new)
    if mine is None:
        return None
    kind = re.match(r"\d", mine.group(0)) is not None
    for other in _SWAPPABLE.finditer(rest):
        if (re.match(r"\d", other.group(0)) is not None) == kind and other.group(0) != mine.group(0):
            return new[: mine.start()] + other.group(0) + new[mine.end() :]
    return None


__all__ = ["accepts", "correction_of", "proposal_of", "standing_request"]
