"""The extractor's rules about the work, the rule registry, and remember-requests.

- :func:`rule_decision` → ``project`` — "we decided/agreed/chose to …", "let's go with …",
  "we're rewriting X in Go because …" / "we switched from X to Y because …" (a change, with
  its reason), "我们决定 …", "就用 …", "我们要把 X 换成 Y", "我们去年从 X 迁到了 Y"; the reason
  stays in the body's Why.
- :func:`rule_context` → ``project`` — what the work is about and how it is set up: "our
  main product is …", "this repo is a Django monolith", "we have three environments …", "our
  Python version is pinned to 3.11", "我们是做跨境电商的", "我们的测试环境每周日会被清空".
- :func:`rule_dated` → ``project`` (``user`` for a birthday or an anniversary itself) — a
  goal, or a deadline or event dated after the turn's day: a deadline or event word (due,
  ship, freeze, trip, exam, 截止, 上线, 比赛, 出差 …), "X is (planned for) <date>", "before
  <date>"/"…前要", plans ("we're flying to … on …"); an imperative with a date ("send the
  report by Friday") is a task for now, not a fact.
- :func:`rule_remember` — the fallback for a remember-request no other rule took.

Who the user is: :mod:`dreamd.models.offline.extract.identity`; how they want the work done:
:mod:`dreamd.models.offline.extract.rules`; what they like: :mod:`dreamd.models.offline.extract.preference`;
where things live: :mod:`dreamd.models.offline.extract.pointers`. :data:`RULES` names every rule; the
extractor tries them in that order.
"""

from __future__ import annotations

import re

from dreamd.models.offline.extract.audience import (
    about_the_work,
    is_wellbeing,
)
from dreamd.models.offline.extract.identity import WORK_NOUN, rule_identity
from dreamd.models.offline.extract.kinds import names_an_address
from dreamd.models.offline.extract.pointers import PATHLIKE, TOOLS, URL, rule_reference
from dreamd.models.offline.extract.preference import rule_preference
from dreamd.models.offline.extract.rules import (
    HOW,
    REMEMBER_HOW,
    TODAY,
    make_feedback,
    rule_feedback,
)
from dreamd.models.offline.extract.structure import (
    clause_reason,
    is_standing,
    opens_with_imperative,
)
from dreamd.models.offline.extract.types import Ctx, Found, Rule
from dreamd.models.offline.text import (
    PRONOUN_OBJECT,
    absolutize_dates,
    content_ok,
    future_dates,
    has_cjk,
    has_relative_date,
    sentence_case,
    split_reason,
    third_person,
    tidy,
)

# ----------------------------------------------------------------------------- decisions

_CHANGE_VERBS = (
    r"moving|switching|migrating|rewriting|replacing|dropping|adopting|standardi[sz]ing|deprecating|"
    r"sunsetting|retiring|consolidating|porting|rebuilding|splitting|merging|phasing out"
)
_DECISION_EN: dict[str, re.Pattern[str]] = {
    "decided": re.compile(
        r"\b(?P<who>we|i|the team|team)(?:\s+have\s+|'ve\s+|\s+)(?:finally\s+|just\s+|all\s+|now\s+)?"
        r"(?:decided|agreed|chose|opted|settled|committed|picked|went with|ended up (?:with|going with|picking|choosing))"
        r"\s+(?:to\s+|on\s+|that\s+|for\s+)?(?P<what>.+)$",
        re.I,
    ),
    "lets": re.compile(
        r"^let'?s\s+(?P<verb>go\s+with|stick\s+with|switch\s+to|settle\s+on|standardi[sz]e\s+on|use)\s+"
        r"(?P<what>.+)$",
        re.I,
    ),
    "label": re.compile(r"^(?:the\s+)?(?:final\s+)?decision(?:\s+is)?\s*[:：-]\s*(?P<what>.+)$", re.I),
    "will": re.compile(
        r"^we(?:'ll| will| are going to|'re going to)\s+(?P<verb>go\s+with|stick\s+with|switch\s+to|"
        r"standardi[sz]e\s+on|move\s+to|migrate\s+to)\s+(?P<what>.+)$",
        re.I,
    ),
    "changing": re.compile(rf"^(?:we're|we are|the team is|the team's)\s+(?P<verb>{_CHANGE_VERBS})\s+(?P<what>.+)$", re.I),
    "planning": re.compile(
        r"^(?:we're|we are|we)\s+(?P<verb>planning to|plan to|intend to|are going to)\s+(?P<what>.{6,})$", re.I
    ),
    "changed": re.compile(
        r"^(?:we|the team)(?:\s+have|'ve)?\s+(?:recently\s+|just\s+|finally\s+)?(?P<verb>switched|moved|migrated|replaced|"
        r"dropped|adopted|standardi[sz]ed|deprecated|retired|ported|rewrote|upgraded|downgraded|consolidated)\s+"
        r"(?P<what>.+)$",
        re.I,
    ),
}
_DECISION_ZH: dict[str, re.Pattern[str]] = {
    "dropped": re.compile(
        r"^[^，,。]{0,6}?(?P<who>我们|我們|团队|團隊|公司)[^，,。]{0,6}?(?P<what>(?:不再|停止|放弃|放棄)(?:支持|维护|維護|使用|提供).+)$"
    ),
    "planning": re.compile(
        r"^(?P<who>我们|我們|我和[^，,。]{1,4}|我跟[^，,。]{1,4}|团队|團隊)(?:已经|已經)?(?:打算|计划|計劃|准备|準備|决定要|決定要)"
        r"(?P<what>.{3,})$"
    ),
    "decided": re.compile(
        r"^(?P<who>我们|我們|团队|團隊|大家|我|公司|领导|領導)?[^，,。的]{0,8}?(?:已经|已經|最终|最終|最后|最後)?"
        r"(?<!的)(?:决定|決定|确定|確定|商定|定下来|定下來)(?:了)?[，,：: ]*(?P<what>.+)$"
    ),
    "just-use": re.compile(r"^(?:好的?|行|那)?[，, ]*(?:就用|就选|就選|就定)(?P<what>.+?)吧?$"),
    "changing": re.compile(
        r"^(?P<who>我们|我們|团队|團隊|公司)[^，,把]{0,8}?(?P<what>(?:把|从|從).+?(?:换成|換成|迁移到|遷移到|迁到|遷到|换到|換到|切到|切换到|切換到|升级到|升級到|改成|改用|替换成|替換成|重写|重寫|拆成|合并到|合併到).+)$"
    ),
}


_ZH_WHEN_FIRST = re.compile(r"^(?:上个月|上個月|上周|上週|去年|今年|最近|前阵子|前陣子|前几天|前幾天|刚刚|剛剛)[，,]?(?=我们|我們|团队|團隊|公司)")


def rule_decision(s: str, ctx: Ctx) -> Found | None:
    for kind, pat in _DECISION_EN.items():
        m = pat.search(s) if kind == "decided" else pat.match(s)
        if not m:
            continue
        if ctx.role != "user" and not (kind == "decided" and m.group("who").lower() in ("we", "the team", "team")):
            return None
        what, reason = split_reason(m.group("what"))
        if reason is None and kind in ("changing", "changed", "decided"):
            what, reason = clause_reason(what)
        if kind == "lets" and m.group("verb").lower() == "use" and reason is None:
            return None  # "let's use a loop here" is task chatter; a reason makes it a decision
        if kind in ("lets", "will", "changing", "changed", "planning"):
            what = f"{m.group('verb')} {what}"
        what = tidy(re.sub(r"^(?:to|on|that)\s+", "", what, flags=re.I))
        if not content_ok(what) or PRONOUN_OBJECT.match(what):
            return None
        head = re.split(r"[,;]", what)[0]
        if kind == "changed" and m.group("verb").lower() == "adopted" and not (about_the_work(head) or TOOLS.search(head)):
            return None  # "we just adopted a rescue greyhound": the family's news, not a decision on the work
        fact = f"Decided on {ctx.day.isoformat()}: {third_person(what)}"
        desc = f"Decision: {third_person(what)}"
        return Found("decision", "project", "decision", what, fact, desc, reason=reason, how=HOW["decision"])
    s = _ZH_WHEN_FIRST.sub("", s)  # "上个月我们刚把日志系统从 ELK 换成了 Loki"
    for kind, pat in _DECISION_ZH.items():
        m = pat.search(s) if kind == "decided" else pat.match(s)
        if not m:
            continue
        if ctx.role != "user" and not (kind == "decided" and m.group("who")):
            return None
        what, reason = split_reason(m.group("what"))
        if reason is None:
            what, reason = clause_reason(what)
        if not content_ok(what):
            return None
        fact = f"{ctx.day.isoformat()} 决定：{third_person(what)}"
        return Found("decision", "project", "decision", what, fact, f"决定：{third_person(what)}",
                     reason=reason, how=HOW["decision"])
    return None


# ----------------------------------------------------------------------------- context

_CONTEXT_EN = re.compile(
    r"^(?:our|my)\s+(?:main\s+|core\s+|flagship\s+)?(?:product|company|startup|business|app|service|platform|"
    r"customers?|users?|clients?|stack|codebase)\s+(?:is|are|does|do|sells?|builds?|makes?|serves?|runs? on|"
    r"targets?|mostly)\b.+$|^(?:this|the)\s+(?:repo|repository|project|codebase|service|app)\s+is\s+(?:a|an|our)\b.+$|"
    r"^we\s+(?:ship|distribute|sell|publish|release|deploy|host|run|build|generate|regenerate|format|lint|test|bundle|"
    r"compile|package)\s+(?:.{2,40}?\s+)?(?:through|via|on|to|in|with|"
    r"using)\s+.+$|"
    r"^(?:it's|it is)\s+(?:a|an|the|our)\s+(?:[\w-]+\s+){0,3}(?:site|service|app|application|library|tool|repo|"
    r"monorepo|cli|api|backend|frontend|website|platform|sdk|plugin|bot|dashboard)\b.*$|"
    r"^we\s+(?:have|run|maintain|support|operate)\s+(?:only\s+)?(?:two|three|four|five|six|\d+|several|multiple)\s+"
    r"(?:environments?|regions?|clusters?|services|databases|apps|products|teams|stages|tiers)\b.*$",
    re.I,
)
_SETTING_EN = re.compile(
    r"^our\s+[\w .-]{2,40}?\s+(?:is|are)\s+(?:(?:pinned|locked|set|fixed|capped|limited|frozen)\s+(?:to|at)|"
    r"(?:still\s+)?on)\s+\S*\d|"
    r"^our\s+[\w .-]{2,40}?\s+(?:is|are|runs?|uses?|runs on)\s+(?:on\s+)?[A-Z][\w.+#-]*(?:\s+(?-i:[A-Z])[\w.+#-]*)?\s+v?\d|"
    r"^(?:[^,]{0,40},\s*+)*(?-i:[A-Z]{2,}[a-z]?)\s+(?:is|=)\s+v?\d+(?:\.\d+)+|"
    r"^the\s+(?:frontend|backend|api|app|site|service|database|db|cluster|stack|server|mobile app)\s+(?:is|runs on|uses)\s+"
    r"(?-i:[A-Z])[\w.+#-]*\s+v?\d",
    re.I,
)
_SETTING_ZH = re.compile(
    r"^(?:我们|我們)的[^，,。]{1,20}?(?:固定在|锁定在|鎖定在|定在|限制在|都是|统一为|統一為|用的是|是\s*[A-Za-z][\w.+#-]*\s*v?\d|"
    r"是\s*v?\d+(?:\.\d+)+)|"
    r"^(?!我(?![们們]))[^，,。？?]{1,12}?(?:(?:用的是|采用的是|採用的是)\s*|(?:跑在|部署在)[^，,。？?]{0,6}?)[A-Za-z][\w.+#-]*"
)
_CONTEXT_ZH = re.compile(
    r"^(?:我们|我們|我们公司|我們公司|公司|我们团队|我們團隊)(?:是|主要是)?做.{2,20}?的|"
    r"^(?:我们|我們)的(?:产品|產品|用户|用戶|客户|客戶|业务|業務|系统|系統)(?:是|主要|都|大多|基本)|"
    r"^(?:这个|這個|本)(?:仓库|倉庫|项目|項目|服务|服務|应用|應用|系统|系統|站点|站點|网站|網站)(?:是|主要是)|"
    r"^(?:我们|我們)(?:的[^，,。]{1,10})?(?:通过|透過|在|用)[^，,。]{1,24}(?:发布|發布|上架|分发|分發|部署|托管|销售|銷售)|"
    r"^(?:我们|我們)(?:有|维护|維護|支持|跑着|跑著)(?:两|兩|三|四|五|六|\d|几|幾)(?:套|个|個|组|組)(?:环境|環境|集群|服务|服務|数据库|數據庫|区域|區域)|"
    r"^(?:我们|我們)的?[^，,。]{1,10}?每(?:周|週|天|月|个|個|晚)[^，,。]{1,16}|"
    r"^(?:我们|我們)(?:团队|團隊|组|組)?每(?:周|週|天|月)[一二三四五六日天]?(?:都)?(?:发版|發版|上线|上線|部署|发布|發布|例会|例會|"
    r"周会|週會|站会|站會|复盘|複盤|封版|迭代|值班)|"
    r"^(?:我们|我們)(?:主要)?(?:给|給|为|為)[^，,。]{2,12}?做[^，,。]{2,12}|"
    r"^(?:我们|我們)(?:是|就是)(?:一个|一個|一家)[^，,。]{0,12}(?:团队|團隊|公司|工作室|小组|小組|创业公司|創業公司)"
)
_OWNS_EN = re.compile(
    r"^(?:the|our)\s+[\w\s./-]{2,30}?\s+(?:owns|is the (?:single )?source of truth for|is the only (?:thing|service) that writes)\s+.+",
    re.I,
)


_ROUTINE_EN = re.compile(
    r"^(?:(?:our|the)\s+)?(?P<subj>[\w-]+(?:\s+[\w-]+){0,2}?)\s+(?:is|are|happens?|happen|runs?|run|go(?:es)? out)\s+"
    r"(?:at\s+\d{1,2}(?::\d{2})?\s*(?:am|pm)?\s+)?(?:every|each|daily|weekly|nightly|on\s+(?:mondays|tuesdays|wednesdays|"
    r"thursdays|fridays|saturdays|sundays|weekdays))\b",
    re.I,
)


_ROUTINE_WE = re.compile(
    r"^we\s+(?:always\s+|usually\s+|normally\s+)?(?:cut|ship|deploy|do|hold|have|run|tag|publish)\s+(?P<subj>(?:[\w-]+\s+){0,2}?"
    r"[\w-]+)\s+(?:on\s+(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays)|every\s+\w+|daily|weekly)\b",
    re.I,
)


def _team_routine(s: str) -> bool:
    """"standup is at 9:30 every day", "deploys go out on Tuesdays", "we cut releases on Tuesdays": how
    the team's week runs."""
    m = _ROUTINE_EN.match(s) or _ROUTINE_WE.match(s)
    return m is not None and WORK_NOUN.search(m.group("subj")) is not None


def rule_context(s: str, ctx: Ctx) -> Found | None:
    """What the work is about: "our main product is a B2B invoicing API", "我们是做跨境电商的"."""
    if ctx.role != "user" or not (_CONTEXT_EN.match(s) or _CONTEXT_ZH.match(s) or _SETTING_EN.match(s)
                                  or _SETTING_ZH.match(s) or _team_routine(s) or _OWNS_EN.match(s)):
        return None
    fact, reason = split_reason(s)
    if not content_ok(fact):
        return None
    fact = sentence_case(third_person(fact))
    if TOOLS.search(fact) and not re.search(r"\d", fact):
        # "我们的 CI 用的是 GitHub Actions": where the work happens is a pointer
        return Found("reference", "reference", "ref", fact, fact, fact, how=HOW["reference"])
    return Found("context", "project", "project", fact, fact, fact, reason=reason, how=REMEMBER_HOW)


# ----------------------------------------------------------------------------- dates

_DEADLINE_WORDS = re.compile(
    r"\b(?:deadline|due|ship|ships|shipping|release|launch|launches|freeze|demo|cutoff|"
    r"cut-off|go-live|goes live|milestone|submission|handoff|hand-off|deliver|delivery|expires?|renewal|"
    r"appointment|interview|exam|test date|wedding|trip|flight|conference|workshop|recital|competition|"
    r"tournament|match|surgery|check-up|checkup|visit|move-in|closing|audit|review meeting|offsite|"
    r"birthday|anniversary|graduation|ceremony|party|concert|vacation|holiday|course|class|lesson|"
    r"filing|payment|rent|renews?|dinner|lunch|hosting|reunion|meetup|gathering|visiting|"
    r"remind me|due date|kickoff|kick-off|retro|standup|sync|presentation|talk|onsite|starts?|begins?|"
    r"kicks off|sprint|iteration|visits|sunset|sunsets|deprecation|end-of-life|eol|cutover|migration date)s?\b|"
    r"截止|上线|上線|发布|發布|交付|演示|提交|冻结|凍結|里程碑|发版|發版|比赛|比賽|考试|考試|面试|面試|婚礼|婚禮|"
    r"出差|旅行|旅游|旅遊|航班|会议|會議|复诊|複診|体检|體檢|预约|預約|生日|纪念日|紀念日|到期|续费|續費|"
    r"开学|開學|毕业|畢業|搬家|手术|手術|演出|聚会|聚會|复盘|複盤|评审|評審|答辩|答辯|完成|写完|寫完|做完|搞定|"
    r"提醒我|续约|續約|年会|年會|分享|汇报|匯報|见面|見面|拜访|拜訪|出发|出發|回国|回國|回家|开始|開始|启动|啟動|"
    r"迭代|冲刺|衝刺|开工|開工|下线|下線|停用|废弃|廢棄|切换|切換|到货|到貨|产检|產檢|复查|複查|看病|看牙|拔牙|打针|打針",
    re.I,
)
_BEFORE_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}\s*(?:之前|以前|前)|\b(?:by|before|no later than|until)\s+\d{4}-\d{2}-\d{2}", re.I
)
_PLANNED = re.compile(
    r"\d{4}-\d{2}-\d{2}[^，,。]{0,6}?(?:我们|我們|我|大家|团队|團隊)?(?:要|得|需要|准备|準備|计划|計劃|打算|安排)|"
    r"(?:我们|我們|我|大家|团队|團隊)[^，,。]{0,6}?(?:要|得|需要|准备|準備|计划|計劃|打算|安排)[^，,。]{0,6}?\d{4}-\d{2}-\d{2}|"
    r"^(?:我们|我們|团队|團隊|公司|我)[^，,。\d]{0,4}?\d{4}-\d{2}-\d{2}\s*(?:(?:到|至|-|~)\s*\d{4}-\d{2}-\d{2}\s*)?"
    r"(?:就|要|会|會)?[\u4e00-\u9fff]{2}|"
    r"\b(?:we|i)\s+(?:have to|need to|must|are scheduled to|am scheduled to|plan to)\b.*\d{4}-\d{2}-\d{2}|"
    r"\d{4}-\d{2}-\d{2}.*\b(?:we|i)\s+(?:have to|need to|must|are scheduled to|plan to)\b|"
    r"\b(?:i'm|i am|we're|we are)\s+(?:flying|traveling|travelling|heading|going|leaving|driving|moving|visiting|"
    r"starting|hosting|meeting|attending|presenting|speaking|giving|taking)\b.*\d{4}-\d{2}-\d{2}|"
    r"^(?:we|i)\s+(?:see|visit|meet|have|fly to|leave for|host|start)\b.{2,40}?\bon\s+\d{4}-\d{2}-\d{2}|"
    r"\b(?:i'll|i will|we'll|we will|i'm|i am|we're|we are)\s+(?:be\s+)?(?:away|off|out of office|out|on leave|on holiday|"
    r"on vacation|on (?:\w+ )?leave|in [A-Z][\w-]+)\b.{0,30}?\b(?:from|on|until|till|between)\s+(?:the\s+)?\d{4}-\d{2}-\d{2}",
    re.I,
)
_SCHEDULED = re.compile(
    r"^(?:the|our|my|his|her|their)\b.{2,60}?\b(?:is|are|will be|happens|takes place|starts|ends|begins|falls)\s+"
    r"(?:(?:planned|scheduled|set|booked|slated|due|pencilled|penciled|moved|pushed)\s+(?:for|to)\s+|on\s+|in\s+|at\s+|"
    r"due\s+)?(?:the week of\s+)?\d{4}-\d{2}-\d{2}|"
    r"^(?:(?:the|our|my|his|her|their)\b.{2,60}?|[\w'’-]+(?: [\w-]+){0,3})\s+(?:is|are|will be)\b.{0,25}?\d{4}-\d{2}-\d{2}|"
    r"^my\s+(?:wife|husband|partner|son|daughter|kids?|mom|mum|mother|dad|father|sister|brother|parents|friend|"
    r"boss|manager|in-laws)\b.{0,60}?\b(?:visits?|arrives?|comes?|flies|leaves?|lands?|returns?|starts?|moves?)\b"
    r".*\d{4}-\d{2}-\d{2}|"
    r"^我(?:的)?(?:妹妹|姐姐|哥哥|弟弟|妈妈|媽媽|爸爸|父母|老婆|老公|儿子|兒子|女儿|女兒|孩子|朋友|同学|同學)"
    r"[^，,。]{0,6}?\d{4}-\d{2}-\d{2}|"
    r"^[^，,。]{2,20}?(?:是|在|定在|安排在)\s*\d{4}-\d{2}-\d{2}|"
    r"^.{4,80}?,\s*(?:it's|it is|which is)\s+(?:on\s+)?\d{4}-\d{2}-\d{2}",
    re.I,
)
_ZH_IMPERATIVE = re.compile(r"^(?:请|請)?(?:把|给|給|发|發|写|寫|做|改|查|看|帮|幫|提醒我|记得|記得)")
_PERSONAL_DATE = re.compile(
    r"\b(?:birthday|anniversary)\b(?!\s+(?:trip|party|dinner|celebration|getaway|vacation|holiday|plans?))|"
    r"(?:生日|纪念日|紀念日|结婚[^，,。]{0,6}周年|結婚[^，,。]{0,6}週年)(?!旅行|旅游|聚会|聚會|派对|派對|晚宴|晚餐)|"
    # the speaker's role or duty until a date ("I'm a contractor on this until March", "on-call 轮到我，到 15 号"):
    # who the user is for a while, not an event of the work
    r"^(?:i'm|i am|im)\s+(?:a|an|the)\s+[\w -]{2,30}?\b(?:until|till|through|thru)\b|"
    r"^(?:i'm|i am|im)\s+(?:the\s+)?on[- ]?call\b|(?:轮到|輪到)我|^我(?:值班|轮值|輪值)",
    re.I,
)
_GOAL_EN = re.compile(
    r"^(?:our|the|my)\s+(?:main\s+|primary\s+|overall\s+)?goal\s+(?:\w+\s+){0,3}?is\s+(?:to\s+)?(?P<what>.+)$", re.I
)
_GOAL_ZH = re.compile(r"(?:我们的|我們的|项目的|項目的|主要)?目[标標](?:是|就是)(?P<what>.+)$")
_PAST_CUE = re.compile(r"\b(?:was|were|did|had|went|ago|last)\b|了$|过了|過了", re.I)


def rule_dated(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    m = _GOAL_EN.match(s) or _GOAL_ZH.search(s)
    if m:
        what, reason = split_reason(m.group("what"))
        if not content_ok(what):
            return None
        fact = ("目标：" if has_cjk(what) else "Goal: ") + third_person(what)
        return Found("goal", "project", "goal", what, fact, fact, reason=reason, how=HOW["goal"])
    if not has_relative_date(s) or opens_with_imperative(s) or _ZH_IMPERATIVE.match(s):
        return None  # "Send the report to Priya by Friday" is a task for now, not a fact
    resolved = absolutize_dates(s, ctx.day)
    if not future_dates(s, ctx.day) or _PAST_CUE.search(s):
        return None
    if not (_DEADLINE_WORDS.search(s) or _BEFORE_DATE.search(resolved) or _PLANNED.search(resolved)
            or _SCHEDULED.match(resolved)):
        return None
    reason = split_reason(s)[1] or clause_reason(s)[1]
    fact = re.split(r"[,;，；]\s*(?:so\b|and\b|help me|please|remind me|提醒我|帮我|幫我|記得|记得|到时候|到時候)", s)[0]
    if not content_ok(fact):
        return None
    personal = bool(_PERSONAL_DATE.search(s))
    return Found("deadline", "user" if personal else "project", "date" if personal else "deadline", fact,
                 sentence_case(third_person(fact)), sentence_case(third_person(fact)),
                 reason=reason, how=HOW["deadline"])


def rule_feedback_or_address(s: str, ctx: Ctx) -> Found | None:
    """A standing directive, typed ``reference`` when it names the address of the place it sends the work
    ("代码评审统一走 gerrit.corp.internal/…", "only pull images from registry.example.com/team"): what a
    note-taker keeps from it is where that place is (nearly every dev label of the shape says so)."""
    found = rule_feedback(s, ctx)
    if found is not None and names_an_address(found.fact):
        found.type, found.name_prefix, found.how = "reference", "ref", HOW["reference"]
    return found


# ----------------------------------------------------------------------------- registry

RULES: dict[str, Rule] = {
    "identity": rule_identity,
    "reference": rule_reference,
    "feedback": rule_feedback_or_address,
    "preference": rule_preference,
    "decision": rule_decision,
    "dated": rule_dated,
    "context": rule_context,
}
"""Every rule by name, in the order a sentence is tried; the first that matches wins."""


_ZH_STANDING_DIRECTIVE = re.compile(
    r"一定要|务必|務必|必须|必須|总是|總是|每次|永远不要|永遠不要|不要|别(?![的人])|別(?![的人])|禁止|一律|统一|統一"
)
_ZH_NEG_WORDS = ("永远不要", "永遠不要", "千万不要", "千萬不要", "不要", "别", "別", "不准", "禁止", "请勿", "請勿")


def rule_remember(s: str, ctx: Ctx) -> Found | None:
    """A sentence the user asked to have remembered: the named rules first, then a note.

    ``s`` is the peeled core ("remember that" already gone; ``ctx.remember`` says it was there).
    """
    if ctx.role != "user" or not ctx.remember or not content_ok(s):
        return None
    rest = tidy(s)
    bare = re.sub(r"^to\s+", "", rest, flags=re.I)
    if is_wellbeing(bare) or (TODAY.search(rest) and not is_standing(rest)):
        return None  # "don't forget to smile today!" is a kind word, not a memory
    if re.match(r"^(?:请|請)?(?:把|将|將)", rest) and not is_standing(rest):
        return None  # "记得把这个分支推上去": one thing to do to one thing, a task for now
    for rule in RULES.values():
        found = rule(rest, ctx)
        if found:
            found.priority = 0
            return found
    to = re.match(r"^to\s+(?P<x>.+)$", rest, re.I)
    if _ZH_STANDING_DIRECTIVE.search(rest) and has_cjk(rest):
        fact, reason = split_reason(rest)
        negative = any(n in fact for n in _ZH_NEG_WORDS)
        found = make_feedback(tidy(fact), fact, "avoid" if negative else "always", negative, reason)
    elif to:
        x, reason = split_reason(to.group("x"))
        found = make_feedback(sentence_case(x), x, "", False, reason)
    elif re.search(r"\b(?:i|my|me|i'm)\b", rest, re.I) or rest.startswith("我"):
        fact = sentence_case(third_person(rest)) if not has_cjk(rest[:2]) else third_person(rest)
        if not has_cjk(rest[:2]) and not fact.lower().startswith("user"):
            fact = f"About the user: {fact[0].lower()}{fact[1:]}"
        found = Found("remember", "user", "user", rest, fact, fact, how=HOW["preference"])
    elif URL.search(rest) or PATHLIKE.search(" " + rest):
        found = Found("remember", "reference", "ref", URL.sub(" ", rest), sentence_case(rest),
                      sentence_case(rest), how=HOW["reference"])
    else:
        fact, reason = split_reason(rest)
        found = Found("remember", "project", "", fact, sentence_case(fact), sentence_case(fact),
                      reason=reason, how=REMEMBER_HOW)
    found.priority = 0
    return found


__all__ = ["RULES", "URL", "rule_dated", "rule_decision", "rule_reference", "rule_remember"]
