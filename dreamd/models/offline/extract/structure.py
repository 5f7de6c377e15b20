"""Sentence structure for the offline extractor: lead-ins, standing markers, who is addressed.

The extractor's rules look at the *core* of a sentence: what is left after the discourse
lead-ins a person puts in front of a fact ("Hi! Before we start: …", "Heads up, from now on
…", "btw …", "先说一下规矩：…", "还有，…") and the filler after it ("…, by the way", "…，哈哈").
:func:`peel` strips those and reports what they signalled: a remember-request ("keep in
mind", "记住"), a standing lead ("from now on", "以后"), or reported speech ("my friend keeps
telling me: …"), which is someone else's words and never the user's rule.

Whether a directive is a lasting rule is decided from its shape, not from memorised
sentences:

- it is **standing** when it carries a marker of time-independence (always, never, every time,
  from now on, going forward, by default, 以后, 一律, 每次, 永远, 始终 …) or gives a reason;
- it is **temporary** when it is scoped to the moment (for now, just this once, this time, for
  this PR, 这次, 暂时, 先…吧);
- it is **wellbeing talk**, never a rule, when its object is the listener's own self or mood
  (a reflexive "yourself"/"自己", a mood or rest verb such as worry, stress, give up, cheer up,
  relax, 担心, 累, 熬夜, 放弃, or "be" + a feeling) — encouragement between people, whoever
  says it.

The word classes below are grammatical (discourse markers, frequency adverbs, reflexives,
mood verbs), so they generalise to sentences nobody wrote down.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamd.models.offline import markers as lex
from dreamd.models.offline.text import has_cjk

# ----------------------------------------------------------------------------- lead-ins

_EN_MARKER = (
    r"(?:so you know|you know what|you know|just so you know|hi|hey|hello|no wait|wait no|wait|hold on|no|nope|nah|ok(?:ay)?|so|well|oh|ah|also|and|but|plus|btw|by the way|fyi|actually|alright|"
    r"right|cool|great|thanks|thank you|yes|yeah|yep|sure|anyway|anyways|oh and|and also|oh also|"
    r"one more thing|one last thing|another thing|quick thing|quick note|quick context|some context|"
    r"context|heads up|just a heads up|for context|for the record|note|nb|ps|"
    r"side note|for what it's worth|to be clear|in general|generally speaking|first|first of all|for reference|fwiw|"
    r"second|secondly|third|thirdly|fourth|fifth|lastly|finally|next|next up|up next|last but not least|"
    r"before we start|before we begin|before you start|before we get going|important|reminder|"
    r"quick reminder)"
)
_EN_FILLER = (
    r"(?:so you know|just so you know|you know what|hi|hey|hello|ok(?:ay)?|so|oh|ah|also|and|but|btw|"
    r"by the way|fyi|actually|alright|anyway|anyways|oh and|and also|oh also|yeah|yes|yep|"
    r"heads up|one more thing|for the record|for reference|fwiw|first of all|finally|lastly)"
)
# Words that are fillers only before a clause: "next we …" but "Next week is the freeze", "right, the repo …" but
# "Right now the API …", "sure the …" but "Sure thing", "thanks, …" but "Thanks to the new CI, …".
_EN_FILLER_BEFORE_CLAUSE = (
    r"right\s+(?=now\b)|"  # "Right now the app is on 0.74": "now" still says it holds at present
    r"(?:well|plus|right|sure|cool|thanks|first|second|third|next)\s+(?=(?:the|a|an|i|i'm|we|we're|you|my|our|it|it's|"
    r"this|that|they|he|she|there|let's|please|always|never|don't|do not)\b)"
)
_EN_LEAD = re.compile(
    rf"^(?!(?:no|nope|nah)\s(?!wait\b))(?:{_EN_MARKER}\s*[,.!:;—–-]+(?![\w.])\s*|{_EN_FILLER}\s+(?=[a-z])|{_EN_FILLER_BEFORE_CLAUSE})|"
    r"^(?:no|nope|nah)\s*[,.!:;—–-]+\s*",
    re.I,
)
_EN_KEEP_IN_MIND = re.compile(
    r"^(?:(?:one more |another |a |quick |some )?(?:thing|note|fact)s?\s+(?:to\s+|for you to\s+)?"
    r"(?:keep in mind|remember|know|note)|(?:please\s+)?keep (?:this|that) in mind|"
    r"(?:please\s+)?remember this|(?:please\s+)?note this|for future reference|good to know|"
    r"(?:a |quick |friendly |one )?reminder|提醒一下|提醒你一下|提醒你|记一下|記一下)"
    r"\s*[:,.!—–\-：，！。]+\s*|"
    r"^the (?:main |one |first |big |only )?thing (?:you (?:need|have|ought) to|you should|to|i want you to) "
    r"(?:know|remember|keep in mind|understand)(?: about [\w\s-]{1,30}?)? is(?: that)?\s+",
    re.I,
)
_EN_REMEMBER = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:remember|keep in mind|don't forget|do not forget|"
    # "note" asks to remember only before "that"/"this" or a colon: "Note taking happens in Obsidian" is a fact
    r"never forget|(?:note|make a note|take note)(?=\s+(?:of\s+)?(?:that|this)\b|\s*[:,])|jot down)"
    r"(?:\s+(?:of\s+)?(?:that|this)\b)?\s*[:,]?\s*(?=\S)",
    re.I,
)
# "you should know (that) …", "I should mention …", "as you know, …", "before you suggest anything, …":
# the speaker introducing a fact to the listener, not part of it.
_EN_TELL_LEAD = re.compile(
    r"^(?:i think\s+|i guess\s+|i figured\s+)?(?:you should know|you should be aware|you might want to know|"
    r"i should (?:mention|tell you|say)|i (?:want|need) to (?:mention|tell you)|let me (?:mention|tell you)|"
    r"it's worth (?:mentioning|knowing)|worth knowing|for your information)(?:\s+that)?\s*[:,]?\s+|"
    r"^(?:as you (?:know|may know|might know)|before you (?:start|begin|suggest anything|answer|go on|dive in)|"
    r"in case (?:it matters|it helps|you need it|that matters)|just so you're aware|so you're aware)\s*[,:]\s*",
    re.I,
)
_EN_LABEL = re.compile(r"^(?P<label>[A-Za-z][\w' -]{0,50}?)\s*(?::|\s[-—–]|—)\s+(?P<rest>\S.*)$")
_SPEECH_WORD = re.compile(
    r"\b(?:says?|said|tells?|told|telling|keeps? saying|wrote|writes|quote|quoting|motto|"
    r"put it|like to say|always say)\b|说|說|告诉|告訴|常说|常說|写道|寫道",
    re.I,
)
_INLINE_QUOTE = re.compile(
    r"\b(?:says?|said|tells?|told|telling|wrote|writes|reads?|quotes?)\b[^\"“”「」']{0,20}[\"“「']|"
    r"(?:说|說|讲|講|提到|表示)(?:过|過|着|著|道)?[：:]?\s*[\"“「]|(?:写|寫)(?:着|著|道)[：:]?\s*[\"“「]|"
    r"(?:\b(?:that's|that is|this is)|[,;—–-]\s*(?:is|was|that's)?)\s+what\s+(?:my|our|his|her|their|the)\s+[\w-]+\s+"
    r"(?:always\s+|keeps?\s+|used to\s+|once\s+)?(?:says?|said|taught|told|tells?|saying|telling)\b|(?:这是|這是|都是)[^，,]{1,6}(?:说的|說的|教的|讲的|講的)",
    re.I,
)
_REPORTED_ADVICE = re.compile(
    r"\b(?:he|she|they|my \w+|(?-i:[A-Z])\w+)\s+(?:always\s+)?(?:says?|said|tells? me|told me|reckons|thinks|swears)\s+"
    r"(?:that\s+)?(?:i|we|you|one)\s+(?:should|must|need to|have to|ought to|shouldn't|mustn't)\b|"
    r"(?:他|她|他们|他們|[^，,。]{1,4})(?:说|說|讲|講|觉得|覺得)(?:我|我们|我們|你)?(?:应该|應該|要|得|必须|必須)",
    re.I,
)
_GROUP_VOCATIVE = re.compile(
    r"[,，]\s*(?:everyone|everybody|guys|folks|y'all|you all|all of you|team|people)\s*[.!！。]*$|^(?:大家|各位|同学们|同學們)",
    re.I,
)
_EN_TRAIL = re.compile(
    r"(?:[,;]?(?<!\s)\s++(?:by the way|btw|fyi|haha+|hehe|lol|lmao|thanks|thank you|please|just so you know|tbh|imo)|"
    # a vocative or an aside is set off by a comma: "…, my friend" is filler, "I live with my friend" is not
    r"(?:(?<!\s)\s++)?[,;]\s*+(?:my friend|buddy|pal|mate|dude|friend|my dear|dear|to be honest|honestly|for the record|if that helps|"
    r"you know|ok(?:ay)?)|(?:(?<!\s)\s++)?[,;]\s*+(?:keep (?:that|this) in mind|"
    r"remember that)(?:\s+(?:if|when)\b.*)?)[\s.!]*$",
    re.I,
)

_ZH_MARKER = (
    r"(?:先说一下规矩|先說一下規矩|先说一下|先說一下|先说明一下|先說明一下|先讲一下|先講一下|说一下|說一下|先说下|先說下|说下|說下|"
    r"提醒一下|提醒你一下|补充一下|補充一下|顺便说一下|順便說一下|顺便说一句|順便說一句|顺便提一下|順便提一下|"
    r"顺便|順便|另外|还有|還有|对了|對了|哦对了|哦對了|噢对了|其实|其實|然后|然後|首先|最后|最後|第一|第二|第三|第四|第五|"
    r"其次|再次|再者|"
    r"不对|不對|不是这样|不是這樣|好的|好|嗯|哦|噢|那|对|對|注意|重要|规矩|規矩|备注|備註|嗨|哈喽|哈囉|你好|先说好|先說好|"
    r"(?i:hello|hi|hey|ok|okay))"
)
_ZH_LEAD = re.compile(
    rf"^(?:{_ZH_MARKER}|(?:简单|簡單|先)?(?:跟你|和你|给你|給你|向你)?(?:说|說|讲|講|交代|介绍|介紹|提|补充|補充|强调|強調)(?:一下|下|一句|一点|一點)"
    r"(?:(?:我的|我)?(?:背景|情况|情況)|我自己)?吧?)(?:[，,：:！!。、～~ ]+)"
)
_ZH_LABEL = re.compile(r"^(?P<label>[^，,：:。！？]{1,12})[：:]\s*(?P<rest>\S.*)$")
_ZH_REMEMBER = re.compile(
    r"^(?:请|請|你)?(?:帮我)?(?:记住|記住|记一下|記一下|记下来|記下來|记好|記好|记得|記得|别忘了|別忘了|"
    r"不要忘记|不要忘記|不要忘了)(?:了)?[：:，,、\s]*(?=\S)"
)
_ZH_TRAIL = re.compile(r"[，,]?(?:(?<!\s)\s++)?(?:哈哈+|呵呵|嘿嘿|谢谢|謝謝|就这样|就這樣|记住了|記住了|记一下|記一下)[。.!！~～]*$")


@dataclass(frozen=True)
class Peeled:
    """A sentence without its lead-ins and trailing filler, and what the lead-ins said."""

    core: str
    remember: bool = False
    standing: bool = False
    reported: bool = False
    topic: str | None = None  # "Mobile app: we ship on Tuesdays": what the rest is about


def peel(sentence: str) -> Peeled:
    """Strip discourse lead-ins ("Hi!", "btw", "Before we start:", "还有，") and filler.

    A ``label: rest`` lead ("Before we start: …", "One more thing to keep in mind: …") is
    removed when ``rest`` is a clause of its own; a label holding a speech verb ("my friend
    keeps telling me: …") marks the rest as someone else's words.
    """
    s = sentence.strip()
    remember = standing = reported = False
    topic: str | None = None
    for _ in range(8):
        before = s
        m = _EN_KEEP_IN_MIND.match(s)
        if m:
            remember, s = True, s[m.end() :]
            continue
        m = _EN_LEAD.match(s) or _ZH_LEAD.match(s)
        if m and len(s) > m.end():
            s = s[m.end() :]
            continue
        m = _EN_REMEMBER.match(s)
        if m and not re.match(r"(?:remember|note)\s*,", s, re.I):
            remember, s = True, s[m.end() :]
            if re.match(r"(?:can|could|would|will)\s+you\b", sentence.strip(), re.I):
                s = s.rstrip(" ?？")  # "Could you note that I'm allergic to shellfish?": the ask is the note
            continue
        m = _EN_TELL_LEAD.match(s)
        if m and len(s) > m.end():
            s = s[m.end() :]
            continue
        m = _ZH_REMEMBER.match(s)
        if m:
            remember, s = True, s[m.end() :]
            continue
        m = _STANDING_LEAD.match(s)
        if m and len(s) > m.end():
            standing, s = True, s[m.end() :]
            continue
        m = _EN_LABEL.match(s) or _ZH_LABEL.match(s)
        if m and _clause(_ORDINAL.sub("", m.group("rest"))) and not _REFERENCE_LABEL.search(m.group("rest")):
            label = m.group("label")
            if _SPEECH_WORD.search(label) and not _LEAD_LABEL.match(label):
                reported = True
            elif re.search(r"keep in mind|remember|reminder|\bnote\b|\bnotes\b|\bprinciple\b|\bpolicy\b|记住|記住|记得|記得|"
                           r"规矩|規矩|提醒|提个醒|提個醒|备注|備註|[记記][一二两兩三四五六七八九十几幾]?(?:件|条|條|点|點)", label, re.I):
                remember = True
            elif not (_LEAD_LABEL.match(label) or _short_label(label) or _topic_label(label, m.group("rest")) or (
                _DIRECTIVE_AFTER.match(m.group("rest")) and not _MEANINGFUL_LABEL.search(label)
                and not re.search(r"[a-z][A-Z]", label))):
                break
            elif _TOPIC.match(label) and not _LEAD_LABEL.match(label) and not _NOT_TOPIC.search(label):
                topic = _TOPIC_LEAD.sub("", label).strip() or None  # a topic is content, not a lead-in
            s = m.group("rest")
            continue
        if s == before:
            break
    if _INLINE_QUOTE.search(s) or _GROUP_VOCATIVE.search(s) or _REPORTED_ADVICE.search(s):
        reported = True  # someone else's words, or words for a group rather than the assistant
    for trail in (_EN_TRAIL, _ZH_TRAIL):
        while True:
            m = trail.search(s)
            if not m or m.start() == 0:
                break
            s = s[: m.start()]
    s = _ORDINAL.sub("", s.strip(" ,，;；:：—–-"))
    if topic and topic.lower() in s.lower():
        topic = None
    if topic:
        s = _about_topic(s, topic)
        topic = None if topic.lower() in s.lower() else topic
    return Peeled(s, remember, standing, reported, topic)


# a topic label is a short noun phrase ("Mobile app", "Re the database", "关于数据库"), not a clause or a
# discourse lead ("so basically", "short version", "团队里有个习惯", "我之前吃过亏")
_TOPIC = re.compile(
    r"^(?:(?:re|regarding|about|as for|as to|on|for)\s+)?(?:(?:the|our|my)\s+)?[a-z][\w/.+-]*(?:\s+[\w/.+-]+){0,3}$|"
    r"^(?:关于|關於|对于|對於|至于|至於)?[\u4e00-\u9fffA-Za-z0-9]{1,6}$",
    re.I,
)
_NOT_TOPIC = re.compile(
    r"\b(?:is|are|was|were|'s|here|there|this|that|deal|thing|things|one|quick|update|note|so|ok|okay|i|we|you)\b|"
    r"[有是说說讲講下约約踩过過了吧啊呢哈]",
    re.I,
)
_TOPIC_LEAD = re.compile(r"^(?:re|regarding|about|as for|as to|on|for|关于|關於|对于|對於|至于|至於)\s*[:：]?\s*(?=\S)", re.I)
_EN_IT = re.compile(r"^(?:(?P<sg>it's|it is|it)|(?P<pl>they're|they are|they))\b\s*", re.I)


def _about_topic(core: str, topic: str) -> str:
    """The rest of "topic: rest" with the topic as its subject when the rest opens with a pronoun for
    it: "Re the database: it's Postgres 16" → "the database is Postgres 16"."""
    if has_cjk(core[:1]):
        return core  # the topic goes into the record with the user's words; the clause is left as said
    m = _EN_IT.match(core)
    if not m:
        return core
    verb = ("is " if m.group("sg") != "it" else "") if m.group("sg") else ("are " if m.group("pl") != "they" else "")
    return f"{topic} {verb}{core[m.end():]}".strip()


# a list item's number: "2. ", "b) ", "二、", "（3）", "③"
_ORDINAL = re.compile(
    r"^(?:(?:\d{1,2}|[a-z])[.)、](?![\d.])|[一二三四五六七八九十]{1,2}、|[（(]\s*(?:\d{1,2}|[一二三四五六七八九十]{1,2})\s*[)）]|[①-⑳])\s*(?=\S)"
)


_LEAD_LABEL = re.compile(
    rf"^(?:{_EN_MARKER}|{_ZH_MARKER}|.*\b(?:before|start|thing|note|context|reminder|heads up|fyi|btw|"
    r"rule|rules|mind|background|about me|intro|introduction|fun fact|update|info)\b.*|"
    r".*(?:先|规矩|規矩|提醒|补充|補充|一下|说下|說下|情况|情況|背景|一声|一聲|说声|說聲|提前).*)$",
    re.I,
)
_REFERENCE_LABEL = re.compile(r"^\S*(?:https?://|www\.)", re.I)


_MEANINGFUL_LABEL = re.compile(
    r"\b(?:decision|decided|agreed|agree|chose|settled|goal|deadline|due|docs?|url|link|repo|dashboard|wiki|"
    r"spec|runbook|tracker|board|path|file|config|rule|policy|todo|fixme|note to)\b|^(?:q|a)$|"
    r"error|exception|warn|fatal|panic|traceback|fail|debug|[_.\d/=<>()\[\]{}]|"
    r"决定|決定|定下|确定|確定|商定|同意|目标|目標|文档|文檔|地址|链接|鏈接|路径|路徑|截止|错误|錯誤|报错|報錯",
    re.I,
)


_CLAUSE_START = re.compile(
    r"^(?:i|i'm|we|we're|you|he|she|they|it|it's|this|that|there|my|our|your|his|her|their)\s+\w|^(?:我|我们|我們|你|他|她)(?!的情况|的情況|自己)",
    re.I,
)


_RULES_HEADER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|alright|right|first|a few|some|my|our|the|house|ground|basic|team|general|"
    r"couple of|few|two|three|four|five|a couple of|\d)[ ,]+)*(?:ground |house |basic |team |general )?(?:rules?|conventions?|guidelines?)"
    r"(?: (?:for|about) (?:you|this|the \w+))?[:.!]?$|"
    r"^(?:let's|let us|i want to|i'd like to|we need to)\s+(?:set|agree on|go over|lay down|establish)\s+(?:some|a few|"
    r"the|our)?\s*(?:ground |house |basic )?(?:rules|conventions|guidelines)\b[^.!?]{0,30}[.!:]?$|"
    r"^[^，,。]{0,12}?(?:规矩|規矩|规则|規則|约定|約定|规范|規範)(?:哈|啊|吧|如下)?[：:。！!]?$",
    re.I,
)


def announces_rules(sentence: str) -> bool:
    """A sentence that only announces rules ("ok so some ground rules.", "说几个规矩哈：…")."""
    head = re.split(r"[：:]", sentence.strip(), maxsplit=1)[0]
    return bool(_RULES_HEADER.match(head.strip()))


_DIRECTIVE_AFTER = re.compile(
    r"^(?:never|always|don't|do not|please|make sure|avoid|from now on)\b|^(?:以后|以後|永远|永遠|千万|千萬|不要|别|別|一律|每次|务必|務必)|"
    r"^[^，,。]{1,12}?(?:永远不要|永遠不要|一律|千万别|千萬別|一定要)",
    re.I,
)


def _topic_label(label: str, rest: str) -> bool:
    """A lowercase topic before a directive ("errors: always wrap them"), typed, not logged."""
    return label.islower() and len(label.split()) <= 2 and _DIRECTIVE_AFTER.match(rest) is not None


def _short_label(label: str) -> bool:
    """A short heading-like lead ("A bit about me:", "介绍一下我自己：") that names no content."""
    cjk = sum(1 for ch in label if "\u4e00" <= ch <= "\u9fff")
    short = len(label.split()) <= 5 if cjk == 0 else cjk <= 8
    camel = re.search(r"[a-z][A-Z]", label) is not None  # an identifier, not words
    # "I prefer small commits: …" and "Never commit to main — …" say something
    clause = _CLAUSE_START.match(label) is not None or _DIRECTIVE_AFTER.match(label) is not None or opens_with_verb(label)
    return short and not camel and not clause and not _MEANINGFUL_LABEL.search(label)


def _clause(text: str) -> bool:
    """Whether ``text`` reads as a clause of its own (three words or five CJK characters)."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = len(re.findall(r"[A-Za-z0-9]+", text))
    return cjk >= 5 or len(text.split()) >= 3 or (cjk >= 3 and cjk + latin >= 4)  # "不要用 var" too


# ----------------------------------------------------------------------------- standing / temporary

_STANDING_LEAD = re.compile(
    r"^(?:(?:from now on|going forward|moving forward|in (?:the )?future|from here on(?: out)?|"
    r"as a rule|by default|in general|as a general rule)\s*[,:]?\s+|"
    r"(?:以后|以後|今后|今後|从现在开始|從現在開始|从现在起|從現在起|从今以后|從今以後|往后|往後|从今天起|從今天起)(?!再)[，,：: ]*)",
    re.I,
)
STANDING = re.compile(
    r"\b(?:always|never|ever|every time|each time|whenever|from now on|going forward|moving forward|"
    r"under no circumstances|no matter what|at any cost|generally|as a team|house style|convention|everywhere|"
    r"(?:in|for|on|with|to)\s+(?:any|all|every|each)|prefer|preferably|wherever possible|whenever possible|"
    r"no more than|not more than|never more than|at most|at least|no longer than|keep (?:any|all|every|each|your|my) [\w -]{0,30}?(?:under|below|within) \S*\d|keep [\w-]+s (?:under|below|within) \S*\d|stop|no more|anymore|any more|"
    r"in (?:the )?future|from here on|by default|as a rule|any time|anytime|at all times|"
    r"without exception|in every|on every|for every|for all|all future|every (?:pr|commit|change|"
    r"migration|release|deploy|project|answer|reply|response|email|recipe|plan|question|bug|fix))\b|"
    r"以后|以後|今后|今後|从现在开始|從現在開始|一律|每次|每回|永远|永遠|始终|始終|总是|總是|一直|千万|千萬|"
    r"绝对|絕對|绝不|絕不|决不|決不|无论如何|無論如何|"
    r"任何时候|任何時候|所有|全部|凡是|优先|優先|尽量|儘量|尽可能|盡可能|少用|多用|默认|默認|从现在起|從現在起|不要再|别再|別再|不再|再也不要|"
    r"(?<!秒)(?<!分钟)(?<!分鐘)(?<!小时)(?<!小時)(?:最多|最少|至少|不超过|不超過|控制在)[^，,。]{0,3}?(?:\d|[一二两兩三四五六七八九十百千])|每天|每周|每週|每个|每個|都不要|都不能|都别|都別|都要|都用|都得|都必须|都必須|一定要|务必|務必|必须|必須|不准|禁止|统一|統一",
    re.I,
)
TEMPORARY = re.compile(
    r"\b(?:for now|right now|just this once|this once|this time|for the time being|temporarily|"
    r"for the moment|at the moment|for today|today only|for this (?:pr|task|ticket|commit|run|demo|one|"
    r"file|session|release|sprint|week|branch)|in this (?:pr|commit|file|one)|only for this|until i fix|"
    # "for this trip only", "just for this order": one occasion named, whatever it is
    r"(?:for|on|with) this(?: one)? (?!(?:project|repo|repository|codebase|app|service|team|client|company|site|product|"
    r"library|package|org|department)\b)[\w-]+(?: [\w-]+)? only|(?:in|for|during) this (?:conversation|chat|thread)|"
    r"until we fix|until further notice|yet|back in \w+|in an hour|in a bit|in a few minutes|right away|"
    r"later today|tonight|this afternoon|this evening|for the demo|brb|be right back|back soon|afk|gtg|"
    r"got to go|gotta go|when(?:ever)? you(?:'re| are) (?:ready|done|free|back)|when you (?:get|have) a (?:chance|minute|sec)|"
    r"if you (?:can|could|have time|get a chance))\b|以后再|以後再|改天|有空的时候|有空的時候|"
    r"这次|這次|这一次|這一次|暂时|暫時|临时|臨時|先不|现在先|現在先|这个版本先|這個版本先|先这样|先這樣|"
    r"回头再|回頭再|今天先|这回|這回|今晚|马上|馬上|一会儿|一會兒|先下班|先休息|休息一下|先撤|先走了|写死|寫死|"
    r"演示的时候|演示的時候|演示时|演示時|"
    r"先[^，,。]{1,8}起来|先[^，,。]{1,8}吧",
    re.I,
)


# A past-tense clause tells what happened; an edit from one name to another is one task, however wide.
PAST_STATEMENT = re.compile(
    r"^(?:[\w'-]+\s+){1,4}?(?:(?<!is )(?<!are )(?<!be )(?<!been )[a-z]{3,}ed|was|were|had|did|got|went|wrote|broke|"
    r"ran|came|took|made)\b",
    re.I,
)
ONE_OFF_EDIT = re.compile(
    r"^(?:please\s+)?(?:rename|replace|change|move|update|convert|switch|bump|upgrade|downgrade|migrate|swap)\s+"
    r"\S+(?:\s+\S+){0,3}?\s+(?:to|with|into|for)\s+\S+",
    re.I,
)
SPATIAL = re.compile(r"\b(?:everywhere|across the (?:codebase|repo|project)|in (?:all|every) (?:files?|places?))\b", re.I)


def is_standing(text: str) -> bool:
    return bool(STANDING.search(text))


HYPOTHETICAL = re.compile(
    r"^(?:if|suppose|supposing|imagine|what if|say)\b[^,]*,?.*\b(?:would|'d|might|could)\b|"
    # the speaker's own plan under a condition of their own: "If I get the job, I'm moving to Leeds"
    r"^(?:if|once|assuming|provided)\s+(?:i|we)\b[^,]{2,60},\s*(?:then\s+)?(?:i|we)(?:'m|'re|'ll|\s+am|\s+are|\s+will)\b|"
    r"^(?:in theory|theoretically|in principle|理论上|理論上)\b|"
    # a condition by inversion: "Should the vendor pull out, we'd …", "Were we to move, …"
    r"^(?:should|were|had)\s+(?:the|we|i|you|it|they|our|my|he|she)\b[^,]{2,60},\s*.*\b(?:would|'d|will|'ll|might|could)\b|"
    r"\b(?:would|'d)\s+(?:probably|maybe|likely)?\s*(?:use|go|pick|choose|switch|move)\b.*\bif\b|"
    r"^(?:假如|如果|要是|假设|假設)[^，,]*(?:的话|的話)?[，,].*(?:会|會|可能|大概|就)",
    re.I,
)


def is_hypothetical(text: str) -> bool:
    """"If we ever move to AWS, we'd use Terraform" / "如果…的话，我们会…": not a fact yet."""
    return bool(HYPOTHETICAL.search(text))


def is_temporary(text: str) -> bool:
    return bool(TEMPORARY.search(text))


# ----------------------------------------------------------------------------- imperatives

_IMPERATIVE_VERB_TEXT = """
    use run write add keep put make check ask include show explain answer reply respond format name favor apply sign
    invoice bill charge quote cite credit
    favour prioritize prioritise
    test commit push deploy review document log follow read open close tag label list mention cite
    link send email call schedule book remind suggest recommend give skip leave remove delete create
    update set start wait wrap split sort pin lock bump rebase merge squash rename stream cache batch
    retry mock stub patch comment annotate lint print return raise throw catch handle wrap move copy
    paste store save load fetch pull post reply prefix suffix tell let plan prepare convert
    translate summarize summarise describe cc notify ping message assign mark flag limit cap
    prioritise prioritize default stick go try avoid prefer write reuse refactor clean fix drop pass
    validate verify sanitize escape quote wrap measure profile benchmark time back up backup rotate
    encrypt sign lint type annotate pick choose select answer keep ignore treat assume respect
    run double-check confirm attach upload download install upgrade downgrade pin vendor bundle
    build compile release ship publish announce share note record track draft reference point
    number order group sort structure indent space capitalize capitalise use
"""
IMPERATIVE_VERBS: frozenset[str] = frozenset(_IMPERATIVE_VERB_TEXT.split())
"""Verbs that open an instruction ("write …", "include …"); an adjective or noun does not."""


def opens_with_imperative(text: str) -> bool:
    """An instruction opening: a verb followed by its object ("Send the report", "fix it")."""
    words = re.sub(r"^(?:please|pls|also|just)\s+", "", text.strip(), flags=re.I).lower().split()
    if len(words) < 2 or not opens_with_verb(words[0]):
        return len(words) == 1 and opens_with_verb(words[0])
    return re.match(
        r"(?:the|a|an|my|our|your|this|that|these|those|it|them|me|him|her|us|all|some|every|to|out|up|down|back|"
        r"over|in|on|off|everything|something|him|[\w-]+s)$", words[1].strip(",.")) is not None


def opens_with_verb(text: str) -> bool:
    """Whether ``text`` starts with a bare instruction verb (after "please")."""
    words = re.sub(r"^(?:please|pls|also|just)\s+", "", text.strip(), flags=re.I).split(" ", 1)
    return words[0].lower().strip(",.!:;") in IMPERATIVE_VERBS if words and words[0] else False


# what binds a rule to this moment or this thing: "先别提交", "今天别推", "这个函数别改", "那段别动"
NOW_OR_THIS_ZH = re.compile(
    r"先|刚|剛|马上|馬上|今天|今晚|明天|这次|這次|这回|這回|现在|現在|目前|暂时|暫時|(?:这|這|那)(?:个|個|些|段|次|里|裡|块|塊|份|条|條|几|幾|边|邊|两|兩)"
)
NEGATION_EN = re.compile(r"^(?:please\s+)?(?:don't|do not|dont|never|avoid|stop|quit|no more|no)\b", re.I)
"""A directive's opening negation ("don't", "never", "avoid" …)."""


def imperative(clause: str) -> str | None:
    """The verb phrase of an imperative clause — one that starts with a base-form instruction verb,
    optionally after a negation ("don't use testify" → "use testify") — or None."""
    rest = NEGATION_EN.sub("", clause.strip(), count=1).strip()
    return rest if opens_with_verb(rest) else clause.strip() if opens_with_verb(clause) else None  # "avoid X"


# ----------------------------------------------------------------------------- reasons by structure

_EN_CLAUSE_REASON = re.compile(
    r"^(?P<rule>.{8,}?)(?<!.{8}\s)\s*(?:;|—|–| - |,)\s*(?P<why>(?:it's|it is|that's|that is|they|it|we|our|my|i|"
    rf"this|there's|there is|the|{lex.OTHERWISE_EN_OPENING})\b.{{6,}})$",
    re.I,
)
_EN_NOUN_REASON = re.compile(
    rf"^(?P<rule>.{{8,}}?)(?<!.{{8}}\s)\s*(?:;|—|–| - |,)\s*(?P<why>(?!(?:so|then|and|but|which|that|{lex.REASON_EN}|or)\b)"
    r"[a-z][\w-]*(?: [\w-]+){0,2} (?:needs?|requires?|is|are|has|have|gets?|"
    r"depends|depend|relies|rely|uses|use|"
    r"can't|cannot|won't|don't|doesn't|isn't|aren't|uses?|breaks?|takes?|makes?|expects?|"
    r"reads?|checks?|audits?|bills?|charges?|finds?|thinks?|hates?|keeps?|confuses?|likes?|wants?|"
    r"complains?|struggles?|forgets?|misses?|fails?|crashes?|times? out)\b.{3,})$",
    re.I,
)
_ZH_CLAUSE_REASON = re.compile(
    r"^(?P<rule>.{4,}?)[，,；;]\s*(?P<why>(?:我|他|她|它|我们|我們|他们|他們|孩子|大家)[^，,；;]{2,14}$|"
    rf"(?:这是|這是|那是|{lex.OTHERWISE_ZH}|{lex.LEST_ZH}|方便|好让|好讓|"
    r"出了问题|出了問題|出问题|出問題|容易|会|會|毕竟|畢竟|之前|以前|上次|曾经|曾經|太|很难|很難).{1,}|"
    r"(?:很|非常|比较|比較|特别|特別|挺)[\u4e00-\u9fff]{1,6}|"
    r"[^，,；;]{0,12}(?:受影响|受影響|出问题|出問題|挂掉|掛掉|会挂|會掛|崩掉|出事|炸掉)|"
    r"[^，,；;]{1,8}(?:降了|降低了|提升了|提高了|快了|减少了|減少了|省了|少了)[^，,；;]{0,6}|"
    r"[^，,；;]{1,12}(?:依赖|依賴|需要|要求|规定|規定)(?:这个|這個|它|这些|這些)?)$"
)


def clause_reason(text: str) -> tuple[str, str | None]:
    """A reason given as a clause of its own after a directive.

    "Never pass -auto-approve; I want to read every plan myself", "…，这是公司规定",
    "…，方便我备课", "…, they never work with my shifts" (an independent clause with its own
    subject, after a comma or semicolon).
    """
    text = text.strip().rstrip("。.!！")
    m = _ZH_CLAUSE_REASON.match(text) or _EN_CLAUSE_REASON.match(text) or _EN_NOUN_REASON.match(text)
    if not m:
        return text, None
    why = m.group("why").strip(" .。!！")
    if opens_with_verb(why) or re.match(r"(?:i|we)(?:\s+(?:will|might|may|can)|'ll)\b", why, re.I):
        return text, None  # "…, I'll fix it later" is a plan, not a reason
    return m.group("rule").strip(" ,，;；"), why


__all__ = [
    "HYPOTHETICAL", "IMPERATIVE_VERBS", "NEGATION_EN", "NOW_OR_THIS_ZH", "ONE_OFF_EDIT",
    "PAST_STATEMENT", "SPATIAL", "STANDING", "TEMPORARY", "Peeled", "announces_rules",
    "clause_reason", "imperative", "is_hypothetical", "is_standing", "is_temporary",
    "opens_with_imperative", "opens_with_verb", "peel"
]
