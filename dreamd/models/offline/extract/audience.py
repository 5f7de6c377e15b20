"""Who a directive is for and what it is about: the work, or the listener's life and mood.

A directive is a rule for the assistant only when it is about the work, what the assistant
produces or the user's affairs. Encouragement and wellbeing advice between people ("take
care of yourself", "别太累了", "don't be so hard on yourself") and advice about living
("always carry an umbrella", "never lend money to friends") never are, whatever their form:

- :func:`is_wellbeing` — the object is the listener's own self or mood: a reflexive
  ("yourself", "自己"), a mood or rest verb (worry, stress, give up, relax, 担心, 累, 熬夜,
  放弃), "be" + a feeling, or a compliment ("you're hilarious");
- :func:`is_life_advice` — nothing in it names the work, and it names a thing of everyday
  life (money, friends, your photos …) or opens with an everyday verb (carry, lend, tip …);
- :func:`about_the_work` — it names the work: code, tests, commits, answers, recipes, trips,
  an identifier or an acronym, the user, an instruction verb.

The word classes are semantic (mood verbs, reflexives, everyday objects), not sentences.
"""

from __future__ import annotations

import re

from dreamd.models.offline.extract.structure import imperative, opens_with_verb
from dreamd.models.offline.text import FUNCTION_WORDS

# ----------------------------------------------------------------------------- what a rule is about

_WORK_EN = re.compile(
    r"(?<![A-Za-z])[A-Za-z]+[-_./#:][\w]|(?<![\w-])--?[A-Za-z]|`|\d|\b(?:code|tests?|commits?|prs?|pull requests?|branch(?:es)?|merges?|deploy\w*|"
    r"releases?|builds?|ci|lint\w*|reviews?|docs?|documentation|comments?|functions?|class(?:es)?|apis?|endpoints?|"
    r"databases?|db|quer(?:y|ies)|sql|migrations?|schemas?|servers?|services?|logs?|logging|config\w*|repos?|"
    r"files?|scripts?|packages?|dependenc(?:y|ies)|librar(?:y|ies)|bugs?|issues?|tickets?|errors?|exceptions?|"
    r"answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|explanations?|suggest\w*|recommend\w*|plans?|recipes?|"
    r"meals?|menus?|e-?mails?|messages?|calendar|meetings?|schedul\w*|remind\w*|lists?|format\w*|bullets?|"
    r"markdown|emojis?|language|english|chinese|units?|prices?|currency|celsius|metric|verbose|concise|short|"
    r"brief|detailed|formal|casual|tone|hotels?|book\w*|restaurants?|travel|trips?|flights?|routes?|"
    r"itinerar(?:y|ies)|workouts?|exercises?|budget|spreadsheet|notes?|names?|naming|variables?|types?|"
    r"data|pii|privacy|security|compliance|gdpr|customers?|clients?|users?|production|prod|staging|secrets?|keys?|"
    r"renovation|kitchen|bathroom|permit|application|visa|passport|contract|lease|mortgage|loan|insurance|claim|"
    r"thesis|paper|manuscript|course|exam|refactor\w*|rewrite|project|product|launch|review|approval|legal|vendor|"
    r"modules?|changes?|reviewers?|infra\w*|cloud|network\w*|invoices?|sign-?offs?|signatures?|"
    r"passwords?|credentials|tokens?|regions?|clusters?|pods?|containers?|images?|tables?|columns?|"
    r"fields?|indexes|indices|cache|queues?|jobs?|tasks?|features?|flags?|screens?|pages?|ui|ux|charts?|"
    r"me|my|mine|myself|i|we|our|us|the user)\b",
    re.I,
)
_WORK_ZH = re.compile(
    r"代码|代碼|提交|测试|測試|接口|文档|文檔|部署|发布|發布|发版|發版|回答|回复|回覆|推荐|推薦|总结|總結|计划|計劃|菜谱|菜譜|"
    r"邮件|郵件|注释|註釋|分支|合并|合併|数据|數據|日志|日誌|配置|函数|函數|变量|變量|格式|中文|英文|工单|工單|酒店|餐厅|餐廳|"
    r"路线|路線|行程|机票|機票|预订|預訂|订|訂|安排|提醒|解释|解釋|说明|說明|建议|建議|我|用户|用戶|[A-Za-z]{2,}|\d|"
    r"审核|審核|审批|審批|法务|法務|许可|許可|评审|評審|合同|客户|客戶|供应商|供應商|预算|預算|装修|裝修|手续|手續|签证|簽證|"
    r"护照|護照|重构|重構|项目|項目|服务|服務|功能|系统|系統"
)


CJK_RULE = re.compile(r"[\u4e00-\u9fff]")


_LIFE = re.compile(
    r"\b(?:your|yourself|people|friends?|others|money|umbrella|car|cars|house|heart|gut|instincts?|dreams?|"
    r"parents|kids|family|partner|photos|wallet|keys|tips?|tipping|strangers|sunscreen|water|sleep|diet|"
    r"grocer(?:y|ies)|shopping|supermarket|receipts?|bed|hungry|angry|coffee|salt|sugar|breakfast|dinner|lunch|"
    r"gym|shoes|clothes|mattress|landlord|rent|bills|cash|savings|debt|credit cards?|relationships?|dates?|"
    r"marriage|love|life|health|doctor|dentist|pets?|dogs?|cats?)\b|"
    r"^(?:carry|lend|borrow|tip|trust|follow|stretch|save|invest|exercise|eat|drink|sleep|marry|buy|rent|drive|"
    r"wear|visit|call|hug|forgive|travel|go (?:to bed|shopping|grocery))\b|"
    # everyday life in Chinese: money, food, sleep, home, family, going out
    r"钱|錢|存款|超市|空腹|吃饭|吃飯|喝水|睡觉|睡覺|熬夜|早睡|煤气|煤氣|出门|出門|雨伞|雨傘|钱包|錢包|结婚|結婚|"
    r"恋爱|戀愛|朋友|父母|孩子|身体|身體|医生|醫生|房租|房东|房東|逛街|网购|網購|外卖|外賣|做人|过日子|過日子",
    re.I,
)


def is_life_advice(rule: str) -> bool:
    """Advice about living, between people ("always carry an umbrella", "never lend money to
    friends"), as opposed to a rule about the work: nothing in it names the work, and it
    names a thing of everyday life or opens with an everyday verb."""
    return not about_the_work(rule) and _LIFE.search(rule.strip()) is not None


_OUTPUT_VERB = re.compile(
    r"(?:show|display|give|write|list|format|answer|reply|respond|quote|present|print|suggest|recommend|explain|"
    r"summari[sz]e|include|mention|cite|label|express|convert)\b",
    re.I,
)
_ADVERB_HEAD = re.compile(r"^(?:please\s+)?(?:(?:always|never|don't|do not|dont|ever|just|only)\s+)+", re.I)


def about_the_work(rule: str) -> bool:
    """Whether a directive is about the work, the assistant's output or the user's affairs.

    "Always carry an umbrella in London" or "出门一定要带伞" is advice about life, between
    people; a rule for the assistant names something it produces or handles.
    """
    bare = _ADVERB_HEAD.sub("", rule.strip())  # "always show amounts in pounds": a verb of what the assistant produces
    return names_the_work(rule) or opens_with_verb(rule) or (bare != rule.strip() and _OUTPUT_VERB.match(bare) is not None)


def names_the_work(text: str) -> bool:
    """Whether a text names a thing of the work (code, documents, bookings, the user …), an
    identifier or an acronym; unlike :func:`about_the_work`, an instruction verb alone does not count."""
    camel = re.search(r"[a-z][A-Z]|\b[A-Z]{2,}\b", text) is not None  # identifiers and acronyms (VPC, SQL)
    zh = _WORK_ZH.search(text) is not None and CJK_RULE.search(text) is not None
    return bool(camel or zh or _WORK_EN.search(text))


def is_everyday(text: str) -> bool:
    """Whether a text names a thing of everyday life (money, food, sleep, family, shopping …)."""
    return _LIFE.search(text.strip()) is not None


# ----------------------------------------------------------------------------- who is addressed

_REFLEXIVE = re.compile(
    r"\b(?:yourself|yourselves|your (?:health|body|mind|heart|chin|head up|spirits?|feelings?|best self)|"
    r"(?:you're|you are) (?:so |really |truly |the )?(?:doing|not alone|stronger|amazing|great|awesome|hilarious|funny|"
    r"the best|brilliant|wonderful|a star|a legend|a lifesaver|incredible|kind|sweet))\b|自己|身体|身體|心情|开心|開心",
    re.I,
)
_MOOD_EN = re.compile(
    r"^(?:ever\s+)?(?:give up|quit on|lose (?:hope|heart|faith|sleep)|worry|stress|panic|fret|sweat|"
    r"despair|freak out|beat (?:yourself|you) up|overthink|overwork|burn (?:yourself )?out|feel|cheer up|"
    r"keep (?:going|smiling|your|it up|pushing|at it)|stay (?:positive|strong|safe|calm|healthy|hydrated|"
    r"motivated|focused|warm|cool|happy)|smile|relax|rest|chill|breathe|hang in|be (?:too |so |very )?"
    r"(?:hard|sad|afraid|scared|shy|nervous|down|discouraged|upset|angry|happy|proud|brave|kind|gentle|"
    r"patient with (?:yourself|you))|take (?:care|it easy|a break|breaks|some time off)|"
    r"get (?:some )?(?:rest|sleep)|have fun|enjoy (?:yourself|the|your|it|life)|laugh|drink (?:water|more water)|"
    r"eat (?:well|something|properly)|hydrate|"
    r"stop (?:learning|trying|believing|dreaming|growing|smiling|being you|exploring)|believe in|dream big|"
    r"forget to (?:smile|laugh|breathe|have fun|enjoy|rest|relax|live)|look on the bright side|"
    r"lose sight of (?:your|what)|be afraid to|doubt yourself|"
    r"(?:so |too |very |always |more than )?(?:happy|glad|grateful|thankful|excited|proud|here for you|"
    r"there for you|welcome|ready|available|around|free))\b",
    re.I,
)
_MOOD_ZH = re.compile(
    r"^(?:你|您)?(?:也|都|还|還)?(?:要|得)?(?:记得|記得)?(?:太|那么|那麼|这么|這麼|过度|過度|多|按时|按時|早点|早點|好好)?"
    # the listener's body: eat, sleep, rest, drink water, dress warm ("记得按时吃饭哦", "早点休息吧")
    r"(?:(?:吃饭|吃飯|睡觉|睡覺|睡个好觉|睡個好覺|睡|喝水|喝点水|喝點水|穿暖|穿暖和|歇一歇|歇歇|歇会|歇會)(?=[吧啊哦呀哈]|[，,。！!~～]|$)|"
    r"累|辛苦|担心|擔心|着急|著急|难过|難過|想太多|放弃学习|放棄學習|"
    r"伤心|傷心|灰心|放弃|放棄|熬夜|生气|生氣|害怕|紧张|緊張|焦虑|焦慮|在意|加油|保重|休息|注意身体|"
    r"注意身體|照顾好|照顧好|开心|開心|放松|放鬆|慢慢来|慢慢來|泄气|洩氣)"
)
_ZH_YOU_MUST = re.compile(r"^(?:你|您)(?:也|都|还|還)?(?:要|得|可以|一定|别|別|不要)")


def does_it_yourself(text: str) -> bool:
    """"never apply anything yourself": a reflexive closing an imperative after its object says who does
    the work, not that the listener's self is the object ("take care of yourself", "treat yourself"); in
    Chinese 自己 before the work it does ("别自己去删 namespace"), not the object ("照顾好自己")."""
    zh = re.search(r"自己(?!的)", text)
    if zh:
        return names_the_work(text[zh.end() :])
    said = imperative(text.rstrip(" .!"))
    words = said.split() if said else []
    return (len(words) >= 3 and _REFLEXIVE.fullmatch(words[-1]) is not None
            and words[-2].lower() not in FUNCTION_WORDS and not _REFLEXIVE.search(" ".join(words[:-1])))


def is_wellbeing(directive: str) -> bool:
    """True when a directive's object is the listener's own self or mood, not the work."""
    text = directive.strip()
    if (_REFLEXIVE.search(text) and not does_it_yourself(text)) or _MOOD_EN.match(text) or _MOOD_ZH.match(text):
        return True
    zh = re.sub(r"^(?:别|別|不要|千万别|千萬別|永远不要|永遠不要)", "", text)
    return (zh != text and bool(_MOOD_ZH.match(zh))) or (
        bool(_ZH_YOU_MUST.match(text)) and bool(_MOOD_ZH.search(text[:8]))
    )


__all__ = ["about_the_work", "does_it_yourself", "is_everyday", "is_life_advice", "is_wellbeing", "names_the_work"]
