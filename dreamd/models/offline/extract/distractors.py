"""What is not a fact: structural tests that tell a lasting statement from everything else a person says.

Each test reads the *form* of a clause, never a particular sentence: who it is addressed to
(second person, directive words), whose words they are (a speaker before a speech verb, a long
quote), when it holds (a moment marker, a past tense with no lasting result, an undated
intention, a supposition), what mood it is in (a feeling, an interjection, comfort, a wish or a
hedge, an exclamation), and whether it is a clause at all (a subject and a finite verb) or a
piece of code, a secret, a malfunction of the moment, a reason for another clause. The tables
:data:`TESTS_EN` and :data:`TESTS_ZH` name them; :func:`distractor` returns the first that holds.
A pointer (where something lives, who to ask) is a fact in the form of advice, so the tests of
form that would reject advice do not apply to it.

Three more layers read a whole sentence rather than a clause no rule took:

- :func:`not_memory` (:data:`SENTENCE_TESTS`) runs before every rule, so what it finds never
  becomes a record whichever rule would take it: advice between people (a label such as "my
  sister's advice:", a generic addressee, someone's advice told as speech, the user's own advice
  to others, "you should …" about nothing of the work), someone else's words (a speech verb
  before a colon, a quotation still open from an earlier sentence, advice the sentence before
  announced, text passed on from a page, output the user pastes), an episode told as past ("back
  when I was at …", a sentence led by a past time, what the speaker just did, an occasion that
  moved), advice the user gave a third person or hands to the listener, wisdom from experience,
  what is happening again, an intermittent fault, a number that is a secret, a condition with
  nothing under it, a question or an instruction bounded in time in the form of a statement,
  a one-off suggested for the moment (…吧 with 这周/今天), a tentative act or a hope (我再想想,
  "I'm sure it'll work out"), venting, care for the listener, the code on screen, someone busy
  right now;
- :func:`continues` tells a clause that goes on about the fact before it in the same sentence
  (one memory) from a clause with a subject of its own (two);
- :func:`restated` reads the value a correction puts right ("Apologies, that is wrong: it is
  …", "不对，…现在是 …"), so the stale record is fixed rather than kept beside a new one.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from dreamd.models.offline import markers as lex
from dreamd.models.offline.extract.audience import (
    about_the_work,
    does_it_yourself,
    is_everyday,
    is_wellbeing,
    names_the_work,
)
from dreamd.models.offline.extract.kinds import future_dates, is_pointer, subject_of
from dreamd.models.offline.extract.structure import ONE_OFF_EDIT, STANDING
from dreamd.models.offline.text import has_cjk

# ----------------------------------------------------------------------------- distractor tests

_MOMENT_EN = re.compile(
    r"\b(?:today|tonight|this morning|this afternoon|this evening|right now|just now|at the moment|atm|"
    r"so far|yet|anymore|any more|for a sec|for a bit|in a minute|again|this week|"
    r"for (?:\d+|a few|a couple of|an|a) (?:min|mins|minutes|hours?|secs?|seconds))\b",
    re.I,
)
_MOMENT_ZH = re.compile(
    r"今天|今晚|今早|刚才|剛才|刚刚|剛剛|这会儿|這會兒|一会儿|一會兒|马上|馬上|正在|又|还没|還沒|(?:这周|這週|本周|本週)(?![一二三四五六日天末])|这几天|這幾天|"
    r"这两天|這兩天|"
    # "先去倒杯咖啡", "阈值先设成 100": for now; "先说好…"/"先声明" announces what follows, for good
    r"(?:^|[，,我们們户]|[^\u4e00-\u9fff])先(?!说好|說好|声明|聲明|说明|說明|讲好|講好)"
)
# A state of mind, an interjection or an evaluation of the moment: "I'm so tired", "ugh", "好累".
_FEELING_EN = re.compile(
    r"^(?:i'm|i am|im|i feel|i felt|feeling|i was|we're|we are)\s+(?:so\s+|really\s+|a bit\s+|a little\s+|kinda\s+|"
    r"kind of\s+|pretty\s+|super\s+|very\s+|quite\s+|totally\s+|just\s+|still\s+|not\s+|too\s+)*"
    r"(?:tired|exhausted|excited|happy|glad|sad|upset|stressed|nervous|anxious|worried|bored|sorry|sure|confused|"
    r"stuck|lost|done|back|ready|busy|fine|ok|okay|good|great|grateful|thankful|proud|curious|impressed|annoyed|"
    r"frustrated|angry|scared|afraid|relieved|hungry|sleepy|sick|overwhelmed|swamped|thrilled|"
    r"looking|thinking|wondering|trying|hoping|going to|gonna|about to|off|here|in the middle)\b",
    re.I,
)
_INTERJECTION_EN = re.compile(
    r"^(?:hope|hoping|happy|merry|have a|enjoy|good (?:morning|night|luck)|welcome|bless)\b|"
    r"\b(?:thanks|thank you|thank god|thankfully|cheers|sorry|ugh|argh|sigh|lol|lmao|rofl|haha\w*|hehe|omg|wow|yay|"
    r"woohoo|whew|phew|oops|yikes|damn|meh|weird|annoying|ugh|hooray|congrats|congratulations|awesome|perfect|"
    r"amazing|cool|nice|great|brilliant|lovely|fantastic|wonderful|good job|well done|long story)\b|"
    r"[\U0001F300-\U0001FAFF\u2600-\u27BF]",
    re.I,
)
_FEELING_ZH = re.compile(
    r"(?:真的|真|好|很|太|有点|有點|挺|特别|特別|超|非常|都)(?:累|困|开心|開心|高兴|高興|紧张|緊張|烦|煩|难过|難過|饿|餓|"
    r"激动|激動|感动|感動|担心|擔心|焦虑|焦慮|崩溃|崩潰|无聊|無聊|倒霉|倒楣|厉害|厲害|棒|快|慢|好看|好吃|靠谱|靠譜|乱|亂)|"
    r"谢谢|謝謝|感谢|感謝|加油|辛苦|哈哈|嘿嘿|呵呵|唉|哎|哇|烦死|累死|太好了|不错|不錯|一团糟|一團糟|倒霉|倒楣|灰心|开心|開心"
)
# Comfort between people: "don't worry", "it'll be fine", "别担心", "会好起来的".
_ENCOURAGEMENT = re.compile(
    r"\b(?:don't worry|do not worry|no worries|it'll be (?:ok|okay|fine|alright)|you(?:'ve)? got this|hang in there|"
    r"take care|be kind to yourself|chin up|keep going|keep it up|stay (?:strong|positive))\b|"
    r"别(?:担心|擔心|着急|著急|灰心|难过|難過|怕)|別(?:擔心|著急|灰心|難過|怕)|没事|沒事|没关系|沒關係|会好的|會好的|"
    r"会好起来|會好起來|慢慢来|慢慢來|加油|保重",
    re.I,
)
# A wish, an intention for the moment, an opinion or a hedge: not yet a fact.
_WISH_EN = re.compile(
    r"^(?:i|we)\s+(?:would|'d|think|thought|guess|suppose|feel like|wonder|was wondering|hope|want|wanted|need|needed|"
    r"wish|mean|meant|could|might|may|should|will|'ll|am going to|'m going to|can't wait|just wanted|"
    r"just need|just want|don't know|dunno|have been meaning|'ve been meaning)\b|^(?:i'd|i'll|we'd|we'll|idk|imo|tbh|"
    r"maybe|perhaps|probably|hopefully|not sure|no idea)\b",
    re.I,
)
_WISH_ZH = re.compile(
    r"(?:^|我|我们|我們|[，,])(?:觉得|覺得|想|想要|希望|需要|要不|估计|估計|感觉|感覺|好像|也许|也許|大概|"
    r"不知道|不确定|不確定|在想)|看起来|看起來|看着|看著"
)
_DATED_PLAN = re.compile(
    r"^(?:i|we)(?:'ll|\s+will|'m going to|\s+am going to|'re going to|\s+are going to|\s+(?:want|plan|aim) to|"
    # "I want a beta out before <date>": a goal whose object is named, with its date
    r"\s+(?:want|plan|aim for|need)\s+(?:a|an|the|our|my|it|this|v?\d)\b)",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|might|not sure|i think|i guess|kinda|sort of|seems?|looks like|looks|apparently)\b",
    re.I,
)
_CONDITION = re.compile(
    r"^(?:if|when|whenever|unless|once|in case|as soon as|after|before|while)\b|^(?:如果|要是|假如|万一|萬一|等|当|當)", re.I
)
_CODE = re.compile(r"[{};=]|</?\w+>|\(\)|\w\(\w*\)|^\$ |=>|->|::|(?<!\w)\w+\.\w+\(|:\d+:\d+")
_EXCLAIM = re.compile(r"(?:!|！|~|～|:\)|:D)\s*$", re.I)
# A supposition anywhere in the clause: "…, if we ever go multi-region", "要是…的话".
_HYPOTHETICAL_EN = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|in case)\b.*\b(?:would|'d|might|could|will|'ll)\b|"
    r"\b(?:would|'d|might|could)\b.*\b(?:if|unless)\b",
    re.I,
)
_HYPOTHETICAL_ZH = re.compile(r"(?:如果|要是|假如|假设|假設|万一|萬一)[^。]*(?:会|會|就|的话|的話)|会不会|會不會")
# Someone else's words quoted at length: "'never trust a release on Friday'", “先上线再说”.
_QUOTE_SPAN = re.compile(r"[\"“「]([^\"“”「」]{1,300})[\"”」]")


def _quoted(clause: str) -> bool:
    """A span in quotes of four words or more, or six Chinese characters (linear: one pass)."""
    return any(len(m.group(1).split()) >= 4 or sum(map(has_cjk, m.group(1))) >= 6 for m in _QUOTE_SPAN.finditer(clause))
# Reported speech: someone else's words, however they are introduced.
_REPORTED_SPEECH = re.compile(
    r"\b(?:he|she|they|someone|people|everyone|everybody|my\s+[\w-]+|our\s+[\w-]+|the\s+[\w-]+|(?-i:[A-Z])[\w-]+)\s+"
    r"(?:always\s+|keeps?\s+|kept\s+|once\s+|used to\s+)?(?:says?|said|saying|tells?|told|telling|reckons?|claims?|swears?|"
    r"insists?|wrote|writes)\b|\baccording to\b|\bquote\b(?!\s*(?:#|no\.?\s*\d|number|ref|\d))|"
    # "X 说…" is speech; "说明" (explain), "先说好" (agree up front), "再说" (later) and "先告诉我" (an ask) are not
    r"[^\s，,。我你先再请請]{1,4}(?:(?:说|說|讲|講)(?!明|好|清楚|一下|服)|告诉我|告訴我)(?:过|過)?|据说|據說|听说|聽說|(?:写|寫)的",
    re.I,
)
# "<Name> says the benchtop goes in on the 16th": news of a dated plan passed on by whoever arranges it. The
# content is a fact when it is a statement (no modal, no advice) holding a date after the turn.
_REPORTED_PLAN = re.compile(
    r"^(?:(?-i:[A-Z])[\w-]+|(?:my|our|the)\s+[\w-]+)\s+(?:says|said|told (?:me|us)|tells (?:me|us)|confirmed)\s+(?:that\s+)?"
    r"(?P<content>(?:the|our|my|it|they|we|(?-i:[A-Z]))\S*\s.+)$",
    re.I,
)
_REPORTED_HEDGE = re.compile(r"\b(?:should|could|might|would|maybe|perhaps|probably|must|ought|if)\b", re.I)


def _reported(clause: str) -> bool:
    """Someone else's words, except news of a dated plan (:data:`_REPORTED_PLAN`)."""
    if not _REPORTED_SPEECH.search(clause):
        return False
    plan = _REPORTED_PLAN.match(clause)
    if plan is None or _REPORTED_HEDGE.search(plan["content"]):
        return True
    return not future_dates(plan["content"], dt.date(2000, 1, 1))


# What is broken right now is a passing state, not a memory.
_MALFUNCTION = re.compile(
    r"\b(?:is|are|keeps?|kept)\s+(?:broken|crashing|failing|timing out|erroring|flaky|red|down|stuck)\b|"
    r"\b(?:crash(?:es|ed)|fails|failed|breaks|throws|threw|times out|timed out|overheats?)\b|"
    r"\breturns? (?:a |an )?(?:500|502|503|404|error|null|nothing|garbage)\b|"
    r"\b(?:always|often|usually|keeps?|sometimes|randomly)\s+(?:time out|crash|fail|break|hang|freeze)\b|"
    # "jobs keep getting OOM-killed": a fault that recurs, told by its passive
    r"\bkeeps?\s+(?:on\s+)?getting\s+(?:[\w]+-)?[a-z]+(?:ed|en)\b|"
    r"(?-i:\b\w+(?:Error|Exception)\b)|\btraceback\b|\bsegfault\b|"
    r"报错|報錯|挂了|掛了|崩了|崩溃|崩潰|复现|復現|出错|出錯",
    re.I,
)
_SECRETISH = re.compile(
    r"\b(?:api[ _-]?keys?|tokens?|passwords?|passwd|secrets?|credentials?)\b[^.]{0,30}\b(?:is|are|=|:)\s+"
    r"(?!(?:in|on|at|under|inside|stored|kept|saved|the|a|an|my|our|taped|written)\b)\S|"
    r"://[^/\s:@]+:[^/\s@]+@|(?:密码|密碼|口令|密钥|密鑰)(?:是|为|為|:|：|=)\s*(?!在)\S",
    re.I,
)
_ZH_QUESTION_WORD = re.compile(r"什么|什麼|哪|怎么|怎麼|多少|几[个個点點]|为啥|為啥|咋")

# Past tense: the clause tells what happened, unless its verb leaves a lasting state behind.
_PAST_EN = re.compile(
    r"\b(?:was|were|did|didn't|had|went|got|came|took|made|saw|met|told|said|left|broke|fell|ran|lost|won|ate|"
    r"bought|forgot|chose|gave|found|thought|knew|wrote|drove|flew|sold|sent|spent|paid|built|kept|felt|heard|"
    r"began|brought|caught|taught|sat|stood|told|understood|wore|woke|"
    r"(?!(?:called|named|labelled|labeled|titled|based|located|stored|kept|used|hosted|shared|pinned|tagged)\b)[a-z]{3,}ed)\b",
    re.I,
)
_PAST_TIME_EN = re.compile(
    r"\b(?:last (?:summer|winter|spring|autumn|fall|year|month|week|night|time|weekend)|yesterday|ago|back then|"
    r"when i was|as a kid|as a child|growing up|used to)\b",
    re.I,
)
_PRESENT_EN = re.compile(
    r"\b(?:am|is|are|'m|'s|'re|has|have|'ve|do|does|don't|doesn't|isn't|aren't|can|can't|cannot|usually|"
    r"often|since (?:\d|then|last|early|mid|late)|still|now|these days|every|each|lives|sits|runs|goes|uses|keeps|"
    r"works|owns|handles|needs|takes|makes|gets|comes|stays|holds|covers|hosts|get|go|come|live|run|land|lands|"
    r"arrive|arrives)\b",
    re.I,
)
_CHANGE_OF_STATE = re.compile(
    r"\b(?:moved|relocated|started|joined|switched|became|married|got married|adopted|changed|retired|quit|"
    r"graduated|migrated|upgraded|dropped|replaced|hired|promoted|transferred|enrolled|signed up|"
    r"bought a (?:house|car|flat)|"
    # a life or a project history: still true of the person or the work now
    r"(?:was|were) born|grew up|studied|founded|co-founded|launched|shipped|built|released|introduced|"
    r"worked (?:at|as|for|on)|spent (?:\w+ )?(?:years|decades|months)|used to (?:be|work|live|teach)|"
    # a life event that leaves a state behind: a job, a diagnosis, a child
    r"got (?:a |the |my |our )?(?:new )?(?:job|offer|place|promotion|degree|visa|licen[cs]e|diagnosis|puppy|dog|cat)|"
    r"got (?:hired|diagnosed|engaged|divorced|promoted|accepted|certified|pregnant|a divorce)|(?:was|were) diagnosed|"
    r"had (?:a|our|my|his|her|their) (?:baby|son|daughter|kid|child|twins))\b",
    re.I,
)
_PAST_ZH = re.compile(
    r"(?<![为為除算])了(?!解)|(?:[\u4e00-\u9fff])过(?!来|來|去|敏|夜|年|节|節)|(?:[\u4e00-\u9fff])過(?!來|去|敏|夜|年|節)|"
    r"小时候|小時候|那时候|那時候|当时|當時|以前|去年|前年|上次|昨天|前天|那次|那天|发现|發現|后来|後來|结果|結果|最后|最後"
)
_CHANGE_ZH = re.compile(
    r"搬到|搬去|搬家|搬过来|搬過來|换了|換了|转到|轉到|调到|調到|入职|入職|加入|开始|開始|升级|升級|迁到|遷到|改成|改到|改为|改為|"
    r"换到|換到|挪到|调整到|調整到|换成|換成|"
    r"不再|结婚|結婚|退休|毕业|畢業|现在|現在|目前|"
    # a state that started and still holds: laid off, stuck waiting
    r"被裁|失业|失業|离职|離職|辞职|辭職|卡住|卡在"
)
# "每次改了 X 都要跑 Y": 了 inside a habit or a rule is not a past episode.
_RULE_HABIT_ZH = re.compile(r"每次|每當|每当|一旦|只要|都要|都得")
_ZH_TIME_CLAUSE = re.compile(r"(?:的时候|的時候|时候|時候|之前|之后|之後)$")  # "…的时候": the condition of another clause
_ZH_IMPERATIVE_PART = re.compile(
    r"^(?:直接|搜|搜索|点|點|去|打开|打開|保持|多|少|注意|记得|記得|加|改|修|删|刪|看|写|寫|查|跑|换|換|给|給|帮|幫|把|解释|解釋|说明|說明|整理|列|做|试|試|"
    r"用|别|別|不要|不用|不必|请|請|麻烦|麻煩|放|发|發|拿|买|買|找)"
)
_EN_DIRECTIVE_ANYWHERE = re.compile(r"\b(?:please|pls|don't|do not|dont|let's|make sure)\b", re.I)
# 请 is "please" unless it is "invite/hire" (想请几个朋友, 请了个阿姨, 请假): then it is a verb of the statement
_ZH_ASK_OR_DIRECTIVE = re.compile(
    r"别|別|不要|不用|不必|(?<![想要邀申聘宴])[请請](?![了过過个個到来來假客教几幾])|帮|幫|一下|麻烦|麻煩|就行|就好|就能|即可"
)
_SECOND_PERSON_EN = re.compile(r"\b(?:you|your|you're|yours|u|ur)\b", re.I)
_ZH_YOU_ANYWHERE = re.compile(r"你|您")
_DETERMINER = re.compile(
    r"^(?:the|a|an|our|my|his|her|their|its|every|each|all|no|some|most|both|either|neither|any|one|two|three|"
    r"several|many|few|we|i|he|she|they|nobody|everyone|everybody|none)\b|^[\d$€£]",
    re.I,
)
_PERSON_PRONOUN_START = re.compile(
    r"^(?:i|we|they|he|she|i'm|im|we're|they're|he's|she's|i've|we've|they've|i'd|we'd|nobody|everyone|everybody)\b", re.I
)
_AUX = (
    r"(?:am|is|are|'m|'s|'re|was|were|has|have|'ve|had|do|does|did|don't|doesn't|didn't|can|can't|cannot|will|won't|"
    r"would|could|should|must|isn't|aren't|wasn't|weren't|hasn't|haven't)"
)
# "bug reports go to …", "deploys happen on Tuesdays": a plural noun and a plural verb
_PLURAL_SUBJECT_VERB = re.compile(
    r"^(?:[\w'-]+\s+){0,2}[\w-]+s\s+(?:always\s+|usually\s+|only\s+|all\s+)?(?:go|come|live|sit|run|happen|need|get|take|"
    r"use|have|stay|start|end|expire|renew|ship|move|belong|cost|arrive|land)\b",
    re.I,
)
# "Oliver owns billing", "Dana in finance handles refunds": a person's name and a verb in -s
_NAME_VERB = re.compile(
    r"^(?-i:[A-Z][a-z]+)(?:\s+(?-i:[A-Z][a-z]+))?(?:\s+(?:in|on|from|at)\s+(?:the\s+)?[\w-]+(?:\s+team)?)?\s+"
    r"(?:(?:also|usually|always)\s+)?(?!(?:is|was|has|does)\b)[a-z]{2,}s\b"
)
# "staging runs in us-east-1", "whole thing moves to X end of Q1": a bare noun phrase (no determiner) whose verb in
# -s is followed by a preposition of place, time or direction. An adverb first ("also runs on …") has no subject.
_BARE_NP_VERB = re.compile(
    r"^(?!(?:also|still|just|only|really|usually|always|never|sometimes|then|now|so|and|but|or|many|much|it|this|that|"
    r"there|here|what|which|who)\b)[\w'./&+#-]+(?:\s+[\w'./&+#-]+)?\s+(?:(?:all|always|usually|only|also)\s+)?"
    r"(?!(?:thanks|is|was|has|does|this|its|his|as|us|yes|plus|less|unless|always|perhaps)\b)[a-z]{2,}s\s+"
    r"(?:in|on|at|to|into|onto|from|through|via|under|over|with|behind|every)\b",
    re.I,
)
# "For weather I check …", "At work we use …": a short phrase of topic before the speaker as subject, no comma.
_TOPIC_THEN_SELF = re.compile(
    r"^(?:for|in|on|at|with|about|outside|during)\s+(?![^,]*\b(?:opinion|view|experience|mind|head|dreams?|case|theory)\b)"
    r"(?:[\w'-]+\s+){1,3}(?:i|we)\s+[a-z]",
    re.I,
)
_ASIDE = re.compile(r"(?<!\s)\s*\([^()]{1,80}\)")
_LEADING_PHRASE = re.compile(
    r"^(?:for|about|regarding|as for|in|on|at|with|during|outside|inside|across|within|if|when|whenever|once)\b"
    r"[^,]{2,50},\s*(?=\S)",
    re.I,
)
_AUX_SOON = re.compile(rf"^(?:[\w'./&+#`-]+\s+){{0,6}}?{_AUX}\b|^[\w'./&+#`-]+(?:'s|'re)\b", re.I)
_FINITE_AFTER_NP = re.compile(
    r"^\S+\s+(?:[\w'./&+#`-]+\s+){0,2}?(?!(?:its|this|his|hers|ours|yours|theirs|us|as|was|plus|less)\b)[a-z]{2,}(?:s|ed)\b",
    re.I,
)
_FUTURE_EN = re.compile(r"\b(?:will|'ll|going to|gonna|shall)\b", re.I)
# "this file", "that bug", "这段代码": the thing on screen now, not something lasting.
_DEICTIC_THING_EN = re.compile(
    r"\b(?:this|that|these|those)\s+(?!(?:repo|repository|project|codebase|app|service|team|company|product|"
    r"year|quarter|month|week|sprint|term|semester|season|summer|winter|spring|autumn|fall)s?\b)[a-z]",
    re.I,
)
_DEICTIC_THING_ZH = re.compile(
    r"(?:这|這|那)(?:个|個|段|篇|次|条|條|里|裡|边|邊|些|块|塊|份)(?!项目|項目|仓库|倉庫|服务|服務|产品|產品|团队|團隊|公司|季度|月|周|週)|"
    # "她每次都这样": a predicate that only points back
    r"(?:这样|這樣|那样|那樣)[了啊吧的呢]?\s*$"
)


# "at least it runs now", "we always end up …", "至少": a verdict on how things went, not a fact.
_EVALUATION_EN = re.compile(r"\b(?:at least|end up|ends up|ended up|no matter what)\b", re.I)
_EVALUATION_ZH = re.compile(r"至少|总算|總算|终于|終於|居然|竟然")
# "ask her", "问他": who that is was said elsewhere, if at all.
_ASK_PRONOUN = re.compile(r"\b(?:ask|ping|contact|email|call|talk to)\s+(?:him|her|them)\b|(?:问|問|找|联系|聯繫)(?:他|她|它)", re.I)
# A clause that gives the reason for, or the consequence of, the one before it is not a fact of its own.
_REASON_CONJUNCTION = re.compile(
    rf"^(?:{lex.REASON_EN}|{lex.OTHERWISE_EN_OPENING}|{lex.PURPOSE_EN}|as|cause|cuz)\b|^(?:{lex.REASON_ZH}|{lex.OTHERWISE_ZH}|{lex.LEST_ZH}|方便|{lex.PURPOSE_ZH})",
    re.I,
)
# "the meeting is about 30 minutes": one occasion, undated, is not a lasting fact.
_ONE_EVENT_EN = re.compile(
    r"^the\s+(?:meeting|call|trip|party|game|match|movie|film|show|demo|talk|interview|dinner|lunch|event|"
    r"session|flight|drive|walk|hike|visit)\s+(?:is|was|will be)\b",
    re.I,
)


# "They are excel files", "it's on the second floor": what "they" are was said before, if at all.
_VAGUE_SUBJECT_EN = re.compile(r"^(?:it|they|these|those|this|that)(?:'s|'re|\s+is|\s+are|\s+was|\s+were)\b", re.I)


def _past_en(clause: str, moved: bool = False) -> bool:
    """A past form and no present one, or a past time; a change of state only when ``moved``."""
    told = (_PAST_EN.search(clause) and not _PRESENT_EN.search(clause)) or _PAST_TIME_EN.search(
        clause
    )
    return bool(told) and (moved or not _CHANGE_OF_STATE.search(clause))


def told_past(clause: str) -> bool:
    """The clause's event is before the turn, so a date it names is the last such day: a change of
    state counts (it happened then), a habit does not."""
    if has_cjk(clause):
        return bool(_PAST_ZH.search(clause)) and not _RULE_HABIT_ZH.search(clause)
    return _past_en(clause, moved=True)


def _fragment_en(clause: str) -> bool:
    """No subject + finite verb: "Never seen this before", "Stay positive", "monorepo, pnpm", "Help me
    understand X" (an imperative has no subject). A pronoun subject makes a clause; a noun phrase
    does when a finite verb follows it — an auxiliary anywhere in its first words, or, after a
    determiner, a verb in -s/-ed ("the cron job runs at 2am")."""
    clause = re.sub(r"^(?:so|and|then|and then|and so)\s+(?=\S)", "", clause, flags=re.I)  # "…, so the lab hires …"
    clause = _LEADING_PHRASE.sub("", clause)  # "For anything billing-related, Priya … is the person to ask"
    clause = _ASIDE.sub("", clause)  # "our accountant Rui (rui@…) answers …": an aside is not the subject's verb
    if _PERSON_PRONOUN_START.match(clause) or subject_of(clause) == "self" or _TOPIC_THEN_SELF.match(clause):
        return False
    if _AUX_SOON.match(clause) or _PLURAL_SUBJECT_VERB.match(clause) or _NAME_VERB.match(clause) or _BARE_NP_VERB.match(clause):
        return False
    return not (_DETERMINER.match(clause) and _FINITE_AFTER_NP.match(clause))


def _undated_future(clause: str) -> bool:
    """"we'll get there eventually": a plan without a date is not yet a fact."""
    return _FUTURE_EN.search(clause) is not None and not future_dates(clause, dt.date(2000, 1, 1))


Test = Callable[[str], object]
TESTS_EN: dict[str, Test] = {
    "code": _CODE.search,
    "second person": _SECOND_PERSON_EN.search,
    "addressed": _EN_DIRECTIVE_ANYWHERE.search,
    "secret": _SECRETISH.search,
    "reported": _reported,
    "momentary": _MOMENT_EN.search,
    "encouragement": _ENCOURAGEMENT.search,
    "feeling": _FEELING_EN.match,
    "interjection": _INTERJECTION_EN.search,
    "exclamation": _EXCLAIM.search,
    "wish": lambda c: _WISH_EN.match(c) and not (_DATED_PLAN.match(c) and future_dates(c, dt.date(2000, 1, 1))),
    "hedge": _HEDGE.search,
    "condition": _CONDITION.match,
    "hypothetical": _HYPOTHETICAL_EN.search,
    "quoted": _quoted,
    "malfunction": _MALFUNCTION.search,
    "fragment": _fragment_en,
    "deictic": _DEICTIC_THING_EN.search,
    "undated future": _undated_future,
    "past event": _past_en,
    "one-off edit": ONE_OFF_EDIT.match,
    "reason": _REASON_CONJUNCTION.match,
    "evaluation": _EVALUATION_EN.search,
    "unresolved pronoun": _ASK_PRONOUN.search,
    "one event": _ONE_EVENT_EN.match,
    # "… and I need to reply": what happened, closed by the speaker's task of the moment (a bare verb, no object)
    "task now": re.compile(
        r"\b(?:and|so|but)\s+(?:i|we)\s+(?:need|have|want|got|gotta)\s+(?:to\s+)?[a-z]+(?:\s+(?:back|up|out|asap|today|now|soon))?[.!]?$",
        re.I,
    ).search,
    "vague subject": _VAGUE_SUBJECT_EN.match,
}
"""The English distractor tests, by name; the first that holds names the clause's kind."""
TESTS_ZH: dict[str, Test] = {
    "second person": _ZH_YOU_ANYWHERE.search,
    "addressed": _ZH_ASK_OR_DIRECTIVE.search,
    "request": lambda c: any(_ZH_IMPERATIVE_PART.match(p.strip()) for p in re.split(r"[，,；;]", c)),
    "secret": _SECRETISH.search,
    "reported": _REPORTED_SPEECH.search,
    "question": _ZH_QUESTION_WORD.search,
    "momentary": _MOMENT_ZH.search,
    "deictic": _DEICTIC_THING_ZH.search,
    "encouragement": _ENCOURAGEMENT.search,
    "feeling": _FEELING_ZH.search,
    "exclamation": _EXCLAIM.search,
    "wish": _WISH_ZH.search,
    "condition": lambda c: _CONDITION.match(c) or _ZH_TIME_CLAUSE.search(c),
    "hypothetical": _HYPOTHETICAL_ZH.search,
    "quoted": _quoted,
    "malfunction": _MALFUNCTION.search,
    "past event": lambda c: told_past(c) and not _CHANGE_ZH.search(c),  # told_past reads 了
    "evaluation": _EVALUATION_ZH.search,
    "reason": _REASON_CONJUNCTION.match,
    "unresolved pronoun": _ASK_PRONOUN.search,
}
"""The Chinese distractor tests, by name."""


def mostly_chinese(text: str) -> bool:
    """Chinese when CJK characters outnumber Latin words ("我们用 Postgres 15" is Chinese; a list of
    words in several scripts with one Chinese word is not)."""
    return sum(map(has_cjk, text)) > len(re.findall(r"[A-Za-z]+", text))


_POINTER_SAFE = frozenset({"second person", "condition", "vague subject"})
_LABELLED = re.compile(r"^[^:：]{2,60}(?::\s+|：\s*)\S")  # "API docs: https://…", "接口文档：…"


def distractor(clause: str) -> str | None:
    """Which kind of non-fact the clause is, or None when it reads as a lasting statement.

    Each test is about the clause's form (second person, a speech verb, a tense, a mood marker,
    an interjection, a question word), never about a particular sentence. A pointer ("if you
    need prod access, Marta grants it", "API docs: docs.example/api") is a fact in the form of
    advice to whoever needs it, so the tests of form (addressed, conditional, verbless) do not
    apply to it.
    """
    tests = TESTS_ZH if mostly_chinese(clause) else TESTS_EN
    pointer = is_pointer(clause)
    safe = _POINTER_SAFE | {"fragment"} if pointer and _LABELLED.match(clause) else _POINTER_SAFE if pointer else frozenset()
    return next((name for name, test in tests.items() if name not in safe and test(clause)), None)


# ----------------------------------------------------------------------------- whole sentences

# "my sister's advice: …", "my advice to anyone: …", "老王的忠告：…": advice between people, whoever gives it
# (the rule of a team, a client, a boss or a house the user belongs to is theirs: "the team's rule: …").
_ADVICE_LEAD = re.compile(
    r"^[^:：]{0,40}?(?:\b(?!(?:here|there|that|it|what|let|he|she|who|this|"
    r"team|company|firm|project|office|house|household|repo|department|org|school|client|customer|library|lab|"
    r"boss|manager|lead|cto|ceo|supervisor)'s)[\w-]+'s|\b(?:his|her|their))\s+"
    r"(?:[\w-]+\s+)?(?:advice|idea|tip|motto|mantra|philosophy|rule of thumb|rule|take|theory|wisdom)\b[^:：]{0,20}[:：]|"
    r"\b(?:advice|tips?|word of warning|words of wisdom|pro tip)\s+(?:to|for)\s+(?:anyone|everyone|everybody|people|others|"
    r"other [\w-]+|new [\w-]+|any [\w-]+)\b[^:：]{0,20}[:：]|"
    r"^[^：:，,。]{0,10}(?:的)?(?:建议|忠告|经验之谈|經驗之談|名言|口头禅|口頭禪|座右铭|座右銘|人生信条|人生信條)[：:]|"
    # a lead that offers wisdom to whoever listens: "the best advice I ever got:", "word to the wise,", "听我一句，"
    r"^(?:the |my |one |a )?(?:best|only|golden|first|biggest|hardest) (?:advice|tip|rule|lesson)\b[^:：,]{0,30}[:：,]|"
    r"^(?:my advice(?: is)?|word to the wise|words of wisdom|take it from me|if you ask me|trust me|pro tip|life lesson|"
    r"lesson learned|(?:a |one |the )?(?:good|golden|simple|basic|first) rules? (?:in|of|for|to live by)(?: life)?|"
    r"(?:my |just my )?two cents|rule of thumb\b(?! for (?:you|u|the assistant))[^:：]{0,40})\s*[:：,-]|"
    r"^(?:过来人|過來人|听我一句|聽我一句|听我的|聽我的|我的建议是|我的建議是|给你个建议|給你個建議|说句实话|說句實話|"
    r"要我说|要我說|依我看|照我说|照我說|在我看来|在我看來)",
    re.I,
)
# Advice said to or for people at large: "people should really …", "everyone should learn …", "大家都要…",
# or wisdom about how things go: "the trick with toddlers is …", "a good rule in life: …", "带娃的诀窍是…".
_GENERIC_ADVICE = re.compile(
    r"^[^，,。：:]{1,10}的(?:诀窍|訣竅|秘诀|秘訣|窍门|竅門)(?:是|就是|在于|在於)|"
    r"^(?:people|everyone|everybody|one|nobody|no one|you all)\s+(?!(?:\S+\s+){0,2}?(?:on|in|at|here|who)\b)"
    r"(?:\w+\s+)?(?:should|must|needs? to|ought to|has to|have to|shouldn't|mustn't)\b|"
    r"^(?:大家|人人|每个人|每個人)(?:都)?(?:应该|應該|要|得|必须|必須)",
    re.I,
)
# Someone else's advice told as speech without quotes: "my dad always told me to never …", "X used to
# say never …", "我妈总跟我说出门一定要…", "朋友劝我别…".
_TOLD_ADVICE = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:[\w-]+\s+){0,2}?(?:always\s+|often\s+|once\s+|used to\s+|keeps?\s+|kept\s+)?"
    r"(?:says?|said|saying|tells? me|told me|telling me|tells? us|told us|reminds? me|warned me|warns me)\s+"
    r"(?:that\s+)?(?:to\s+)?(?:always|never|don't|do not|not to|you should|you must|i should|we should)\b|"
    r"\b(?:my|our|his|her|their)\s+(?:[\w-]+\s+){0,2}?(?:always\s+|often\s+|keeps?\s+)?"
    r"(?:recommends?|recommending|suggests?|suggesting|advises?|advising|reckons)\s+(?:that\s+)?(?:i\s+|we\s+|you\s+)?"
    r"(?:always|never|not|to|should|\w+ing)\b|"
    r"\b(?:my|our|his|her|their)\s+(?:[\w-]+\s+){0,2}?(?:always\s+|really\s+)?swears?\s+by\b|"
    # a person's saying, its verb closing the lead: "我爸常念叨，…", "老师总说：…" (not the speaker's own "我说，…")
    r"^(?:我的?)?[^，,。：:我你您跟和对對]{1,5}(?:常|总|總|老|一直|经常|經常|总是|總是)?(?:念叨|唠叨|嘮叨|说|說|讲|講)(?:过|過)?[，,：:]|"
    r"\bthat's what i (?:always |usually )?(?:tell|say to)\b|\bis what i (?:always |usually )?(?:tell|say to)\b|"
    r"^[^，,。]{1,8}(?:总|總|老|常|一直|经常|經常)?(?:跟我|和我|对我|對我)(?:说|說|讲|講)|^[^，,。]{1,8}(?:劝我|勸我|叫我别|叫我別|让我别|讓我別)|"
    r"(?:念叨|唠叨|嘮叨|催)着?(?:让我|讓我|叫我|要我)|"
    r"(?:有人|别人|別人|人家|他们|他們)(?:跟我)?(?:说|說|讲|講)(?:过|過)?[^，,。]{0,4}(?:不要|别|別|要|一定|千万|千萬|应该|應該)",
    re.I,
)
# Someone else's words by another verb, or named as such: "my landlord texted: '…'", "his exact words were '…'", "原话是“…”".
_WORDS_OF = re.compile(
    r"\b(?:texted|emailed|messaged|posted|commented|replied|tweeted|wrote back|announced)\s*[:：]|"
    r"\b(?:exact |very |own )?words were\b|原话|原話|(?:群里|群裡|邮件里|郵件裡|信里|信裡)[^，,。]{0,6}(?:说|說|写|寫|发了|發了)|"
    r"(?:发|發|回复|回覆|留言|批注)(?:了|道)?[：:]?\s*[“「]|(?:说|說|讲|講)(?:了|道)?[：:]\s*[“「]",
    re.I,
)
# Text from a page or a document the user passes on: "here's the README section: '…'", "from the wiki: …",
# "网上有篇文章说…", "这是网页上的原文：…" — only what the user says or accepts becomes memory.
_PASSED_ON = re.compile(
    r"^(?:here's |here is |this is )?(?:(?:copied |quoting |quoted )?from |according to )?(?:the |a |an |this |that |some |our )?"
    r"(?:[\w-]+ )?(?:readme|page|web ?page|article|docs|documentation|wiki|website|site|blog(?: post)?|post|forum|thread|"
    r"manual|guide|tutorial|stack ?overflow(?: answer)?)(?: section| page| entry)?(?: (?:i|we) (?:found|read|saw))?"
    r"(?: says?| reads?| said)?\s*[:：](?!\s*\S*(?:https?://|www\.))|"
    r"(?:网页|網頁|网上|網上|文章|博客|帖子|原文|页面|頁面|教程|论坛|論壇)[^，,。]{0,8}(?:说|說|写|寫|[：:])|"
    r"(?:文档|文檔)(?:里|裡|上)(?:说|說|写着|寫著)|"
    # "there's a line in the contract: …", "文档里有一句：…": a line of some text, passed on
    r"\bthere(?:'s| is) (?:a|one|this) (?:line|sentence|passage|paragraph|bit)\b[^:：]{0,40}[:：]|"
    r"有(?:一句|一段|这么一句|這麼一句|句话|句話|一行)(?:话|話)?[^，,。：:]{0,4}[：:]",
    re.I,
)
# Output the user pastes, announced by what they saw: "Got this in the logs: …", "here's the compiler output: …",
# "终端里报了这个：…" — what a program printed, not what the user states.
_PASTED_OUTPUT = re.compile(
    r"^(?:got|getting|seeing|i see|i get|i'm getting|i am getting|here's|here is|this is|found|saw|it says|it said)\b[^:：]{0,40}"
    r"\b(?:logs?|console|terminal|output|error|errors|traceback|stack ?trace|linter|compiler|stderr|stdout)\b[^:：]{0,20}[:：]|"
    r"^(?:日志|日誌|控制台|终端|終端|输出|輸出)(?:里|裡|上)?[^：:，,。]{0,8}[：:]",
    re.I,
)
# A sentence announcing that advice follows: "My physio gave me one tip.", "我爸跟我说过一句话。"
_ADVICE_NEXT = re.compile(
    r"\b(?:gave|told|taught|passed on)\s+(?:me|us)\s+(?:one|a|some|the|this|his|her|their|a good|a great)?\s*(?:\w+\s+)?"
    r"(?:tip|advice|rule|lesson|piece of advice|saying|trick)s?\b[^.!?]*[.:!]?\s*$|"
    r"(?:跟我|对我|對我|和我|教我)(?:说|說|讲|講)?过?(?:一句话|一句話|一句|几句|幾句|一个道理|一個道理)[。：:！!]?\s*$|"
    # "My advice?" / "Here's my tip." asked or announced on its own before the advice
    r"(?:^|[.!?]\s+)(?:(?:here's|here is)\s+)?(?:my|one|a|some)\s+(?:advice|tip|piece of advice|two cents)\s*[?:.!]\s*$",
    re.I,
)
# An episode of the past told as such: "Back when I was at the bank, …", "In my old job, …".
_EPISODE = re.compile(
    r"^(?:back when|back in (?:the day|\d{4})|back then|when i was (?:at|in|with|a|an|still)|in my (?:last|old|previous|first) "
    r"(?:job|team|company|role|startup)|at my (?:last|old|previous|first) (?:job|company|place)|that (?:day|time|night|week))\b|"
    r"^(?:[^，,。]{0,8}[，,]\s*){0,2}(?:那天|那次|那回|那会儿|那會兒|那时候|那時候|当时|當時|上次|上回)",
    re.I,
)
# Someone else's opinion: "my partner thinks I work too much", "我妈觉得我太瘦了".
_OPINION_OF = re.compile(
    r"^(?:my|our|his|her|their)\s+(?:[\w-]+\s+){0,2}?(?:thinks|reckons|feels|believes|worries)\b|"
    r"^(?!我(?:们|們)?(?:觉得|覺得|认为|認為))[^，,。你您]{1,6}(?:觉得|覺得|认为|認為)(?:我|咱)|"
    # "我老公觉得在家办就行": what someone close to the user thinks, about anything
    r"^我(?:的)?(?!们|們)[^，,。你您我]{1,4}(?:觉得|覺得|认为|認為)",
    re.I,
)
# A state of the moment: "I'm starving", "I'm so tired" (what the speaker is, the identity rules say; how they feel now is not).
_STATE_NOW = re.compile(
    r"^(?:i'm|i am|im|i feel|feeling)\s+(?:so\s+|really\s+|a bit\s+|a little\s+|kinda\s+|pretty\s+|super\s+|very\s+|"
    r"absolutely\s+|completely\s+|totally\s+|just\s+)*(?:tired|exhausted|starving|hungry|sleepy|knackered|wiped|shattered|"
    r"bored|stressed|frustrated|annoyed|fed up|relieved|thrilled|overwhelmed|swamped|fried|done for the day|"
    r"dreading|not looking forward to|nervous about|gutted|buzzing)\b",
    re.I,
)
# A supposition by its mood: "…的话，…", "等孩子上小学了，我可能会…", "ideally we'd have …", "in an ideal world …".
_SUPPOSED_ZH = re.compile(
    r"^[^，,。]{1,20}(?:的话|的話)[，,]|^等[^，,。]{1,15}了[，,][^。]*(?:可能|也许|也許|大概|或许|或許)|"
    r"^(?:ideally|in an ideal world|in a perfect world),?\s+(?:we|i|they|it|the \w+)(?:'d|\s+would)\b|^(?:理想情况下|理想情況下)",
    re.I,
)
# A directive in the form advice takes between people: "you should always carry cash abroad",
# "买二手车一定要…", "钱包一定要看好"; it is advice about living unless it names the work (offline_audience).
_ADVICE_FORM = re.compile(
    r"^you (?:should|must|have to|need to|gotta|got to|ought to)\b|(?:^|[，,])[^，,。]{0,12}(?:一定要|千万|千萬|务必|務必|一定得|永远要|永遠要)",
    re.I,
)
# The user's own advice to others: "I always tell my students to …", "我常跟我老婆说，…".
_TELLS_OTHERS = re.compile(
    r"^(?:i|we)\s+(?:always\s+|often\s+|keep\s+|usually\s+)?(?:tell|told|telling|advise|advised|remind)\s+"
    r"(?!you\b|u\b)(?:my|our|every|all|the|them|him|her|people|new)\b|"
    r"^我(?:们|們)?(?:一直|常|总|總|老|经常|經常|都|也)?(?:跟|和|对|對)(?!你|您)[^，,。]{1,6}(?:说|說|讲|講)|"
    r"^我(?:们|們)?(?:一般|通常|平时|平時|一直|常|总|總|老|经常|經常|都|也)?(?:劝|勸|教|告诫|告誡)(?!你|您)[^，,。]{1,6}?"
    r"(?:先|要|别|別|不要|多|少|一定|千万|千萬)",
    re.I,
)
# A question in the form of a statement: "I can't decide between …", "I need to figure out why …", "纠结要不要…".
_OPEN_QUESTION = re.compile(
    r"^(?:i|we)\s+(?:still\s+|just\s+)?(?:can't|cannot|can not|couldn't)\s+(?:decide|choose|figure out|work out|tell)\b|"
    r"^(?:i|we)\s+(?:need|have|want|'m trying|am trying|are trying|'re trying)\s+to\s+(?:figure out|work out|find out|understand|decide (?:between|whether|if|which|what|how))\b|"
    r"^(?:纠结|糾結|拿不定主意|还没想好|還沒想好|没想好|沒想好|不知道(?:该|該|要))",
    re.I,
)
# An instruction bounded in time: "for the next couple of days, …", "until Monday, …", "出差这几天，…".
_BOUNDED = re.compile(
    r"^(?:for the next\b|until (?:\w+day|tomorrow|next \w+|the end of (?:the )?(?:day|week|month)|i'm back|i am back|"
    r"we're back|[A-Z]\w+ is back|further notice)\b|while (?:i'm|i am|we're|we are) (?:away|travelling|traveling|out|off|"
    r"on leave|on holiday|on vacation)\b)|^(?:出差|休假|请假|請假)?(?:这几天|這幾天|这两天|這兩天|接下来(?:几|两|兩)天|接下來(?:幾|兩)天)",
    re.I,
)
# A sentence led by an instruction for now: "Don't bother with X today, I've got …", "你先别提交，我…".
_FOR_NOW_LEAD = re.compile(
    r"^(?:don't|do not|no need to|skip|hold off|forget)\b[^,;]*\b(?:today|tonight|for now|right now|this time|yet)\b[^,;]*[,;]|"
    r"^[^，,。]{0,4}先(?:别|別|不要|不用|不)[^，,。]{0,10}[，,]",
    re.I,
)
# The code on screen: "the function on line 40 should …", "第 40 行应该…".
_ON_SCREEN = re.compile(r"\b(?:on |at )?lines? \d+\b|第\s*\d+\s*行", re.I)
# A fault that comes and goes: "the map jitters whenever …", "偶尔丢数据", "时不时闪退".
_INTERMITTENT = re.compile(
    r"\b(?:jitters?|glitch(?:es|ing)?|flicker(?:s|ing)?|stutters?|lags? (?:when|whenever|on|every))\b|"
    r"(?:偶尔|偶爾|时不时|時不時|有时候|有時候|经常|經常|总是|總是)[^，,。]{0,8}(?:卡|丢|丟|崩|闪退|閃退|白屏|黑屏|超时|超時|没反应|沒反應)|"
    r"闪退|閃退|卡住不动|卡住不動|不动了|不動了",
    re.I,
)
# Account and card numbers (14 digits or more: a phone number with its country code has at most 13), a
# password given without "is": what a transcript may hold but memory must not.
_NUMBER_SECRET = re.compile(
    r"(?<![\d.])(?:\d[ -]?){13,}\d(?![\d.])|\b(?:password|passwd|passcode|pin)\s+(?!(?:is|are|to|for|of|in|on|manager|"
    r"reset|policy|rotation|rules?)\b)(?=\S*\d)\S{4,}",
    re.I,
)
# A condition with nothing that holds under it: "假如以后要做多租户", "if we ever go serverless".
_BARE_CONDITION = re.compile(
    r"^(?:if|suppose|supposing|in case|假如|如果|要是|万一|萬一|假设|假設)(?:\b|(?=[\u4e00-\u9fff]))[^,，;；]*$", re.I
)
# Someone at the table right now: "we're waiting for the pizza", "我们在等外卖", "我现在在调登录流程".
_OCCUPIED_NOW = re.compile(
    r"^(?:we're|we are|i'm|i am)\s+(?:just\s+)?(?:waiting for|heading|grabbing|having (?:lunch|dinner|breakfast)|eating|"
    r"stepping out|in a meeting|on a call)\b|^(?:我|我们|我們)(?:现在|現在)?(?:在|正在)(?:等|吃|调|調|看|跑|改|开会|開會|路上)|"
    r"^(?:我|我们|我們)(?:现在|現在)在(?:高铁|高鐵|火车|火車|飞机|飛機|地铁|地鐵|公交|车|車|机场|機場|医院|醫院)",
    re.I,
)


# The user's advice to someone else, told after what happened to them: "…, I told him not to panic",
# "师弟问 OOM，我跟他说别慌": the speaker's words to a third person, not a rule for the assistant.
_TOLD_THIRD = re.compile(
    r"[,;—–]\s*(?:and\s+|so\s+)?(?:i|we)\s+(?:told|tell|advised|reminded|warned)\s+(?:him|her|them|my\s+[\w-]+|our\s+[\w-]+)\s+"
    r"(?:to|not to|that|never|always|just)\b|"
    r"[，,；;]\s*(?:我|我们|我們)(?:就|也|还|還|都)?(?:跟|和|对|對|劝|勸|叫|让|讓)(?!你|您)[^，,。]{1,6}?(?:说|說|讲|講|别|別|不要)",
    re.I,
)
# What the assistant itself works on, when advice is handed to it: code, identifiers, a tool's name.
_CODE_WORDS = re.compile(r"[A-Za-z]{2,}|代码|代碼|接口|提交|部署|测试|測試|数据库|數據庫|脚本|腳本")
# Advice handed to the listener: "劝你一句", "奉劝", "take my advice", "a word of advice for you".
_ADVICE_TO_YOU = re.compile(
    r"(?:劝|勸)(?:你|您)|奉劝|奉勸|(?:劝|勸)一句|"
    r"\btake my advice\b|\b(?:a |one |some |my )?(?:piece of |word of |bit of )?advice (?:for|to) you\b|"
    r"\blet me give you (?:a |one |some )?(?:tip|advice|piece of advice)\b",
    re.I,
)
# A sentence opening with a time in the past and telling only what happened then: "last month the cluster was
# down and I lost a run", "昨天又被叫去开会了". A change that still holds ("last year we moved to Go") is a fact.
_PAST_LEAD_EN = re.compile(
    r"^(?:last (?:week|month|year|night|time|weekend|summer|winter|spring|autumn|fall|quarter|sprint|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|the other day|earlier (?:today|this week)|"
    r"(?:a|an|one|two|three|four|five|six|a few|a couple of|\d+) (?:days?|weeks?|months?|years?) ago)\b",
    re.I,
)
_PAST_LEAD_ZH = re.compile(r"^(?:上周|上週|上个月|上個月|上礼拜|上禮拜|昨天|昨晚|前天|前几天|前幾天|前阵子|前陣子)")
# A tentative act of the moment, by the reduplicated verb after 再/先 ("我再想想", "先看看", "再考虑考虑").
_TENTATIVE_ZH = re.compile(r"(?:再|先)(?P<v>[\u4e00-\u9fff]{1,2})(?P=v)(?:吧|啊|哈|呢)?\s*(?:[，,。.!！~～…]|$)")
# A belief about how things will turn out: "我相信我能找到更好的", "I'm sure it'll work out".
_BELIEF = re.compile(
    r"(?:^|[，,])\s*(?:我|我们|我們)?(?:相信|坚信|堅信)[^，,。]{0,8}(?:会|會|能|可以|一定)|"
    r"^(?:i|we)(?:\s+(?:believe|trust|know|bet)|'m sure|\s+am sure|'re sure|\s+are sure)\s+(?:that\s+)?(?:i|we|you|it|things|everything)"
    r"\b[^.]*\b(?:will|'ll|can|could)\b",
    re.I,
)
# A one-off request suggested for a moment: a clause ending in 吧 in a sentence that names the moment
# ("周三的红烧肉换掉吧，这周老公出差"), with no standing marker.
_SUGGESTED_ZH = re.compile(r"(?<![\u4e00-\u9fffA-Za-z0-9])[\u4e00-\u9fffA-Za-z0-9]{2,}吧(?:[，,。.!！~～]|$)")


def _one_off_zh(sentence: str) -> bool:
    return (
        _SUGGESTED_ZH.search(sentence) is not None
        and (_MOMENT_ZH.search(sentence) is not None or re.search(r"(?:周|週|星期)[一二三四五六日天]的", sentence) is not None)
        and STANDING.search(sentence) is None
    )


# What the speaker just did, told in the past: "I tried clearing the cache and it still …", "we restarted the
# pod and …". A decision, a change that still holds or a life history ("we decided …", "I moved to …") is a fact.
# (not "wrote"/"built"/"made": what the speaker created is still theirs, "I wrote the original parser")
_SELF_PAST = re.compile(r"^(?:i|we)\s+(?:just\s+|already\s+|also\s+|finally\s+)?(?:[a-z]{3,}ed|ran|got|went|did|took|put|set|tried|"
                        r"sent|gave|saw|broke)\b", re.I)
_DECIDED = re.compile(
    r"\b(?:decided|agreed|chose|settled|picked|opted|went with|signed|committed to|standardi[sz]ed|created|founded|designed|"
    r"wrote|authored|inherited|maintained|owned|led|ran (?:the|a|our))\b",
    re.I,
)
# One occasion that happened: "the meeting got moved, so …", "the call was cancelled".
_EVENT_PAST = re.compile(
    r"^the\s+(?:meeting|call|standup|stand-up|sync|demo|interview|appointment|flight|train|delivery|class|session|game|"
    r"match|party|dinner|lunch)\s+(?:got|was|were)\s+(?:moved|cancell?ed|postponed|pushed|rescheduled|delayed|called off)\b",
    re.I,
)
# The speaker's plan for the thing on screen: "I'll review it tomorrow", "we're going to merge this tonight".
_PLAN_FOR_IT = re.compile(
    r"^(?:i|we)(?:'ll|\s+will|'m going to|\s+am going to|'re going to|\s+are going to)\s+(?:\w+\s+){1,2}?(?:it|this|that|them)\b",
    re.I,
)


# Venting about what someone keeps doing: "my manager keeps asking for estimates", "领导老让我估工期".
_VENTING = re.compile(
    r"^(?:my|our|his|her|their|the)\s+(?:[\w-]+\s+){0,2}?keeps\s+(?:on\s+)?"
    r"(?!(?:getting|growing|improving|expanding|changing|evolving|shrinking|increasing|rising)\b)(?!(?:anything|everything|something|nothing)\b)"
    r"[a-z]{2,}ing\b|老(?:是)?(?:让|讓|叫|要|催|问|問|找)(?:我|我们|我們)",
    re.I,
)
# A short evaluation of the moment: "周一真难熬", "这天气太热了" (真/太 + a predicate closing the sentence).
_EVALUATION_NOW_ZH = re.compile(
    r"^(?P<about>[^，,。]{0,8})(?:真|太)[\u4e00-\u9fff]{1,3}[了啊呀吧]?[。！!~～]*$"
)


def _vented(core: str) -> bool:
    """A sentence opened by a bare sigh of one word ("唉，…", "ugh, …"; not "long story short, …")
    or closed by an evaluation naming nothing ("…，真是够了"; "…，性能差太多" judges a reason),
    around a part of the moment or an episode: venting."""
    # the spaces before a mark are taken from the first of them only: linear in a pasted run
    parts = [p for p in re.split(r"(?:(?<!\s)\s+)?[，,。.!！;；]\s*", core) if p]
    if len(parts) < 3:
        return False
    closing = _EVALUATION_NOW_ZH.match(parts[-1])
    sigh = len(parts[0].split()) == 1 and distractor(parts[0]) in ("feeling", "interjection")
    framed = parts[1:] if sigh else parts[:-1] if closing and not closing["about"] else []
    return any(map(distractor, framed))


# "我之前在上家做过…": an episode at a previous job, as "in my last job, …" — unless the sentence goes on to
# what holds now ("…，现在在做风控").
_PREVIOUS_JOB_ZH = re.compile(
    r"^(?:我|我们|我們)?(?:之前|以前|原来|原來)?在(?:上家|上一家|前公司|前东家|前東家|老东家|老東家|之前的公司|以前的公司|上一份工作)"
)


def _previous_job(core: str) -> bool:
    return _PREVIOUS_JOB_ZH.match(core) is not None and re.search(r"现在|現在|目前|如今|今年|现任|現任", core) is None


def _just_did(core: str) -> bool:
    clause = re.split(r",\s*|(?<!\s)\s+(?:and|but|so)\s+", core.rstrip(".!"), maxsplit=1)[0]  # what was done, before what followed
    return bool(
        (_SELF_PAST.match(clause) and _past_en(clause) and not _DECIDED.search(clause)) or _EVENT_PAST.match(clause)
    )


# "…, trust me": wisdom from the speaker's experience, advice between people unless it names the work.
_TRUST_ME = re.compile(r"[,;—–-]\s*(?:trust me|take it from me|believe me|相信我|听我的|聽我的)[.!。！]*$", re.I)


def _advice_to_you(sentence: str, core: str) -> bool:
    """Advice handed to the listener, unless it is about what the assistant works on ("劝你一句：别用 MongoDB 存账单")."""
    if _ADVICE_TO_YOU.search(sentence) is None:
        return False
    rest = _ADVICE_TO_YOU.sub("", core)
    return _CODE_WORDS.search(rest) is None if mostly_chinese(rest) else not names_the_work(rest)


def _care(core: str) -> bool:
    """Care for the listener leading a sentence that says nothing of the speaker ("早点休息吧，明天再战",
    "Get some sleep, tomorrow's another day"); "别担心，我们用的是 Postgres 16" still states a fact after it."""
    clauses = [c.strip() for c in re.split(r"[，,；;]", core.rstrip("。.!！~～")) if c.strip()]
    short = bool(clauses) and (len(clauses[0]) <= 8 if mostly_chinese(clauses[0]) else len(clauses[0].split()) <= 5)
    return short and is_wellbeing(clauses[0]) and not any(
        re.match(r"(?:我|我们|我們|i\b|i'm|we\b|we're|my\b|our\b)", c, re.I) for c in clauses[1:]
    )


def _verbless_now(core: str) -> bool:
    """"Lovely weather here today": no clause, and a word for the moment — a remark, not a fact."""
    return (
        not mostly_chinese(core) and len(core.split()) <= 6 and _MOMENT_EN.search(core) is not None
        and _fragment_en(core.rstrip(".!?")) and not future_dates(core, dt.date(2000, 1, 1))
    )


_AHEAD_ZH = re.compile(r"明年|下个月|下個月|下周|下週|以后|以後|将来|將來|今后|今後|打算|计划|計劃|准备|準備")


def _past_lead(core: str) -> bool:
    """A sentence led by a past time that tells only what happened then — nothing that holds now or lies
    ahead ("昨天刚定下来，明年一月上线新版" is a plan)."""
    if future_dates(core, dt.date(2000, 1, 1)):
        return False
    if _PAST_LEAD_EN.match(core):
        return _past_en(core)
    rest = _PAST_LEAD_ZH.sub("", core)
    return (_PAST_LEAD_ZH.match(core) is not None and _PAST_ZH.search(rest) is not None
            and _CHANGE_ZH.search(core) is None and _AHEAD_ZH.search(core) is None)


_IMPERATIVE_ADVICE = re.compile(
    r"^(?:always|never|don't|do not|don't ever|never ever)\b|^(?:永远不要|永遠不要|千万别|千萬別|千万不要|千萬不要|一定要|记得|記得)",
    re.I,
)


# What the assistant produces: "always show amounts in pounds", "never round the totals".
_OUTPUT = re.compile(
    r"\b(?:show|display|give|write|list|format|answer|reply|respond|round|convert|quote|express|present|print|"
    r"suggest|recommend|remind)\b|显示|顯示|列出|回答|回复|回覆|推荐|推薦|提醒",
    re.I,
)


def _life_advice(core: str) -> bool:
    """A directive in the form of advice (always/never/you should/一定要) that names nothing of the
    work, read with and without its head ("Always show amounts in pounds" names "show …")."""
    m = _ADVICE_FORM.search(core)
    if m is None:
        return False
    rest = core[m.end() :].strip(" ,，")
    rest = re.sub(r"^(?:always|never|ever|just|really|also)\s+", "", rest, flags=re.I)
    return not (about_the_work(core) or about_the_work(rest) or _CODE.search(core) or "%" in core)


def _open_quote(before: str) -> bool:
    """Whether the turn's text before a sentence leaves a quotation open ("the reporter wrote:
    "Your library is broken. Please fix it." — the second sentence is still the reporter's)."""
    curly = before.count("“") + before.count("「") - before.count("”") - before.count("」")
    opened = len(re.findall(r'(?:^|[\s:：(])"(?=\S)', before))
    closed = len(re.findall(r'(?<=\S)"(?=$|[\s.,;:!?)])', before))
    return curly > 0 or opened > closed  # an inch mark ('a 27" screen') opens nothing


SENTENCE_TESTS: dict[str, Callable[[str, str, str], object]] = {
    "advice": lambda sentence, core, before: _ADVICE_LEAD.search(sentence)
    or (_TRUST_ME.search(sentence) and not names_the_work(_TRUST_ME.sub("", core)) and not is_pointer(_TRUST_ME.sub("", core)))
    or _advice_to_you(sentence, core)
    or _TOLD_THIRD.search(sentence)
    or _GENERIC_ADVICE.match(core)
    or _TOLD_ADVICE.search(core),
    "reported": lambda sentence, core, before: _WORDS_OF.search(sentence) or _PASSED_ON.search(sentence)
    or _PASTED_OUTPUT.match(sentence.strip()),
    "life advice": lambda sentence, core, before: _life_advice(core)
    or _TELLS_OTHERS.match(core)
    or (_IMPERATIVE_ADVICE.match(core) and is_everyday(core) and not names_the_work(core) and not _OUTPUT.search(core)
        and not does_it_yourself(core)),  # "never run the migration yourself": the assistant does the work
    "quoted": lambda sentence, core, before: _open_quote(before) or _ADVICE_NEXT.search(before),
    "past event": lambda sentence, core, before: _EPISODE.match(core) or _past_lead(core) or _just_did(core)
    or _previous_job(core),
    # "Keep it punchy", "make this shorter": how to do the item at hand, with no standing marker
    "instruction for the thing on screen": lambda sentence, core, before: re.match(
        r"^(?:please\s+)?(?:keep|make|write|do|leave|format|shorten|tone down|tighten)\s+(?:it|this|that|them)\b", core, re.I)
    and not STANDING.search(core),
    "plan for the thing on screen": lambda sentence, core, before: _PLAN_FOR_IT.match(core) and (
        re.search(r"\b(?:today|tonight|tomorrow|later|in a bit|in an hour|after lunch|this (?:afternoon|evening|morning))\b", core, re.I)
        or not (future_dates(core, dt.date(2000, 1, 1)) or re.search(
            r"\b(?:next|this coming|coming) (?:week|month|quarter|year|sprint|release|term|semester)\b|\bq[1-4]\b|"
            r"\b(?:by|before|after|until|end of)\b", core, re.I))),
    "momentary": lambda sentence, core, before: (re.search(r"\bagain\b", core, re.I)
    and not re.search(r"\bnever\b[^.]*\bagain\b|^(?:i|we|i'm|we're|i've|we've)\b", core, re.I))
    or _verbless_now(core),
    "malfunction": lambda sentence, core, before: _INTERMITTENT.search(core),
    "secret": lambda sentence, core, before: _NUMBER_SECRET.search(sentence),
    "hypothetical": lambda sentence, core, before: _BARE_CONDITION.match(core.rstrip("?？。. "))
    or _SUPPOSED_ZH.search(core),
    "busy": lambda sentence, core, before: _OCCUPIED_NOW.match(core) or _STATE_NOW.match(core),
    "encouragement": lambda sentence, core, before: _care(core),
    "opinion": lambda sentence, core, before: _OPINION_OF.match(core),
    "venting": lambda sentence, core, before: _VENTING.search(core)
    or _EVALUATION_NOW_ZH.match(core) or _vented(core),
    "question": lambda sentence, core, before: _OPEN_QUESTION.match(core),
    "temporary": lambda sentence, core, before: _BOUNDED.match(core) or _FOR_NOW_LEAD.match(core)
    or (mostly_chinese(sentence) and _one_off_zh(sentence)),
    # "国庆想带老婆回一趟青岛": a wish with its subject left out after a time word, not yet a fact
    "wish": lambda sentence, core, before: re.match(
        r"^[^，,。我你他她们們]{1,4}(?<![理思感回设設猜梦夢幻联聯构構])想(?:要)?(?!法|起|到|必|象|像|不)[\u4e00-\u9fff]", core)
        and not STANDING.search(core) and not future_dates(core, dt.date(2000, 1, 1)),  # a dated goal is a plan
    # a guess leading the sentence: "我感觉是 fixture 的顺序问题，但…", "I suspect it's the cache, but …"
    "guess": lambda sentence, core, before: re.match(
        r"^(?:我|我们|我們)?(?:感觉|感覺|估计|估計|猜|怀疑|懷疑)|^(?:i (?:guess|suspect|reckon|bet)|my guess is)\b", core, re.I),
    "tentative": lambda sentence, core, before: _TENTATIVE_ZH.search(core)
    or (_BELIEF.search(core) and not STANDING.search(core)),
    "on screen": lambda sentence, core, before: _ON_SCREEN.search(core)
    or re.match(r"^(?:this|that) one(?:'s|\s+is|\s+was|\s+has)\b", core, re.I),
}
"""Tests on a whole sentence, before any rule reads it: whose words these are and whom they are
for (advice between people, someone else's words, a quotation still open), whether it holds beyond the moment (a
fault that comes and goes, someone busy right now), numbers that are secrets, and a condition
with nothing under it. (A laugh closing a sentence and a moment word in its first clause were
tried too: on unseen sessions they took real facts, "…, he handles the music lol".)"""


def not_memory(sentence: str, core: str, before: str = "") -> str | None:
    """Which kind of non-memory a whole sentence is, or None.

    ``sentence`` is what the user typed, ``core`` the same without lead-ins and filler (and
    without the ask of a question), ``before`` the turn's text before the sentence. Unlike
    :func:`distractor`, which judges one clause no named rule took, this judges the sentence
    before every rule: what it finds is never a memory, whatever rule would take it.
    """
    return next((name for name, test in SENTENCE_TESTS.items() if test(sentence, core, before)), None)


# ----------------------------------------------------------------------------- a clause that goes on

_BACK_EN = re.compile(r"^(?:it|its|it's|they|their|they're|he|his|he's|she|her|she's|this|that|these|those|there)\b", re.I)
_BACK_END_EN = re.compile(r"\b(?:it|that|them|him|her)[.!]?$", re.I)
# "索引是 …", "项目名叫 …" (a property of what came before), "主要写 …" (no subject: the one before), "他在 …", "归她管".
_GOES_ON_ZH = re.compile(
    # "…，项目名 seg-kidney", "…，用户名 runner_01": a name or number of the thing before, said without a verb
    r"^[^，,。\s]{0,3}(?:名|名字|号|號|账号|賬號|编号|編號)\s*[：:]?\s*[A-Za-z0-9]|"
    r"^[^，,。\s]{1,4}(?:是|叫|為|为)|^(?:主要|日常|平时|平時|平常|负责|負責|专门|專門|还要|還要|还得|還得|也|都)|[他她它]"
)
_SO_BEFORE = re.compile(r"(?:\bso|\bwhich means|\bhence|所以|因此|于是|於是)[\s,，]*$", re.I)


def continues(clause: str, sentence: str) -> bool:
    """Whether a clause goes on about the fact of the clause before it in the same sentence, so
    the two are one memory: in Chinese a clause after a comma carries on its topic ("日志都在
    Kibana 上看，索引是 app-logs-*", "我是做移动端的，主要写 Kotlin"); in English a consequence
    ("I'm on night shifts, so I sleep during the day") or a clause whose subject or object points
    back ("…, he's at the garage on Mill Road", "…, and I can't miss it"). An English clause with
    a subject of its own ("…, I shop at the corner market") is a fact of its own."""
    if mostly_chinese(clause):
        return bool(_GOES_ON_ZH.search(clause))
    at = sentence.find(clause)
    before = sentence[:at] if at > 0 else ""
    return bool(_SO_BEFORE.search(before) or _BACK_EN.match(clause) or _BACK_END_EN.search(clause.strip()))


def gives_reason(clause: str) -> bool:
    """Whether a Chinese clause about the speaker after a rule in the same sentence is that rule's
    reason ("回复尽量简短，我都是用手机看的", "菜谱里别放香菜，我和老公都不吃"), not a fact of its own: a
    habit or an intention the rule is made for. A lasting state ("…，我膝盖不好") is a fact of its own."""
    return mostly_chinese(clause) and _ZH_HABIT_WORD.search(clause) is not None


_ZH_HABIT_WORD = re.compile(r"一般|都是|都不|都没|都沒|平时|平時|通常|经常|經常|总是|總是|习惯|習慣|(?:我|我们|我們)要")


_ZH_NEGATIVE = re.compile(r"^(?:别|別|不要|千万别|千萬別|千万不要|千萬不要|禁止|不准|不許|不许|少)")


def other_side(rule: str, then: str) -> bool:
    """Whether a Chinese directive after another in the same sentence says the same rule from the
    other side ("新代码一律用协程，别再引 RxJava", "直接给结论，别铺垫"): a do followed by a don't is one
    rule. (In English two directives in one sentence are as often two rules: "we use tabs, and
    never commit generated code".)"""
    return (
        mostly_chinese(rule) and mostly_chinese(then)
        and not _ZH_NEGATIVE.match(rule) and _ZH_NEGATIVE.match(then) is not None
    )


# ----------------------------------------------------------------------------- a value put right

_WRONG_LEAD = re.compile(
    r"^(?:(?:哦|噢|啊|呃|哎|唉|不好意思|抱歉)?[，,]?\s*(?:不对|不對|更正|纠正|糾正|(?:更正|纠正|糾正)一下|说错了|說錯了|口误|口誤|"
    r"我?(?:刚才|剛才|刚刚|剛剛|前面|上面)?(?:记错了|記錯了|写错了|寫錯了|打错了|打錯了|弄错了|弄錯了|搞错了|搞錯了))"
    r"[了啊]?[，,：:！!。\s]*)+|"
    r"^(?:(?:sorry|apologies|oops|my bad|correction|scratch that)[,:!.]?\s*)+(?:(?:no|nope|that(?:'s| is| was) (?:wrong|not right|"
    r"outdated|old)|i was wrong|i misspoke|i got that wrong|scratch that|wrong)[,:!.—–-]*\s*)*|"
    r"^(?:that(?:'s| is| was) (?:wrong|not right|outdated)|no wait|wait no|actually,? no|no,? actually)[,:!.—–-]*\s*|"
    r"^(?:(?:hmm|hm|um|uh|oh)[,.]?\s*)?(?:no|nope)[,.]?\s*(?:i got that wrong|i was wrong|i misspoke|that's wrong|that was wrong)"
    r"[,:!.—–-]*\s*",
    re.I,
)
# A name put right: "Correction: we moved to BigQuery last month" (a capitalised word after the first).
_NAME_VALUE = re.compile(r"(?<=\s)(?-i:[A-Z][\w.+#-]*[A-Za-z0-9])(?=[\s,.;!]|$)")
_VALUE = re.compile(r"(?<![\w.])(?:(?-i:[A-Z][\w+#-]*)\s)?v?\d+(?:\.\d+)*(?:[a-z]|am|pm|gb|mb|kb|ms)?(?!\w|\.\d)")
_VALUE_ZH = re.compile(r"(?:现在是|現在是|已经是|已經是|应该是|應該是|其实是|其實是|是|到|成|为|為)\s*([A-Za-z][\w+#-]*\s?)?v?(\d+(?:\.\d+)*[a-z]?)")


def restated(sentence: str) -> tuple[str, None] | None:
    """The value a sentence puts right when it opens by saying the earlier one was wrong
    ("Apologies, that is wrong: it is 19c.", "sorry, Postgres 16, we moved in June", "不对，上个月
    升级过，现在是 3.5", "更正：已经升级到 2.4"): the first version or number after the marker.
    A bare "sorry" counts only when a value follows at once ("sorry, Redis 7, …"), so an apology
    ("sorry, 3 more questions") corrects nothing. What it corrects is found by shape
    (:meth:`dreamd.models.offline.extract.pipeline._Answer.correct`)."""
    s = sentence.strip()
    m = _WRONG_LEAD.match(s)
    if not m or m.end() == 0:
        return None
    rest, lead = s[m.end() :], m.group(0)
    alone = _VALUE.match(rest)
    if re.fullmatch(r"(?:(?:sorry|apologies|oops|my bad)[,:!.]?\s*)+", lead, re.I) and not (
        alone and re.match(r"(?:(?<!\s)\s++)?(?:[,;.!]|$)", rest[alone.end() :])
    ):
        return None
    if mostly_chinese(rest):
        z = _VALUE_ZH.search(rest) or re.search(r"()(?<!\d)(\d+(?:\.\d+)+)", rest)
        return ((z.group(1) or "") + z.group(2), None) if z else None
    v = _VALUE.search(rest)
    if v is None and not re.fullmatch(r"(?:(?:sorry|apologies|oops|my bad)[,:!.]?\s*)+", lead, re.I):
        names = [n for n in _NAME_VALUE.findall(" " + rest) if n not in ("I", "I'm")]
        return (names[-1], None) if names else None
    return (v.group(0), None) if v else None


__all__ = ["SENTENCE_TESTS", "TESTS_EN", "TESTS_ZH", "continues", "distractor", "gives_reason", "mostly_chinese", "not_memory", "other_side", "restated"]
