"""Which type a stated fact is, decided from the clause's structure (the labelling guide's definitions).

The guide (``benchmarks/quality/README.md``) defines the four types by what a fact is *about*:

- ``reference`` — where something lives or who to ask: the clause names a place (a URL, a path,
  a ``#channel``, a tool, "in/under/on <container>") as the location of its subject, or a person
  as the one who handles a topic;
- ``project`` — decisions, deadlines, goals and the state of the work: a dated event or plan,
  or a clause whose subject is collective or impersonal (we/our/the team/the service/a system)
  and which is about the work;
- ``user`` — who the user is and their situation: a clause whose subject is the speaker ("I",
  "my", "我"), with their family, home, body and routines (a clause naming neither the speaker
  nor the work is not typed at all);
- ``feedback`` — a standing rule for the assistant: a directive (imperative, "you should …",
  a "we always/never …" convention) — decided by :mod:`dreamd.models.offline.extract.rules`, which also
  checks that the rule is standing. A convention said as a *description* is recognised here by its
  predicate: a contrast ("we use X here, not Y"), a binding of every instance ("every commit
  message carries …"), the one way of a kind of work ("migrations are X only") or a passive
  prohibition ("… are not to be booked").

A pointer is decided by what the predicate says (where a thing is kept or arrives, who handles
it: "X是<人>负责的", "告警都进…群", "traced in Jama"), never by the mere presence of a name, so a
state of the work that mentions a tool stays ``project``, and what the work goes through ("部署统一走
GitLab CI", "设备走 Zigbee 网关") is a convention or the setup, not a place to look (only a process system,
"走 OA 流程", is).

The decision reads the subject of the clause and its predicate, not which phrase rule fired, so
a sentence nobody wrote a rule for still gets the type a labeller would give it.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from dreamd.models.offline import markers as lex
from dreamd.models.offline.extract.audience import about_the_work
from dreamd.models.offline.extract.pointers import HOST_OR_HANDLE, PATHLIKE, TOOLS, URL
from dreamd.models.offline.extract.structure import opens_with_verb
from dreamd.models.offline.text import RECURRING, has_cjk
from dreamd.models.offline.text import future_dates as dated_after

Subject = Literal["self", "group", "you", "deictic", "other"]

_PERSONAL_EN = re.compile(
    r"\b(?:wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|son|daughter|kids?|children|child|baby|"
    r"toddler|mom|mum|mother|dad|father|parents?|sister|brother|siblings?|grand(?:ma|pa|mother|father|parents?)|"
    r"aunt|uncle|cousin|niece|nephew|in-laws?|family|dog|cat|puppy|kitten|pets?|house|home|flat|apartment|"
    r"place|garden|neighbou?rs?|landlord|roommates?|flatmates?|club|choir|band|gym|church|household|"
    r"he|she|they|him|her|them|his|their)\b",
    re.I,
)
_PERSONAL_ZH = re.compile(
    r"老婆|老公|妻子|丈夫|对象|對象|男朋友|女朋友|儿子|兒子|女儿|女兒|孩子|宝宝|寶寶|妈妈|媽媽|爸爸|父母|爸妈|爸媽|"
    r"姐姐|妹妹|哥哥|弟弟|爷爷|爺爺|奶奶|外婆|外公|家里|家裡|家人|狗|猫|貓|房东|房東|室友|邻居|鄰居|他|她|他们|他們|她们|她們"
)

_EN_ADVERBIAL = re.compile(
    r"^(?:(?:these days|nowadays|lately|currently|right now|at the moment|this (?:year|quarter|month|week|term|semester)|"
    r"for (?:work|context)|at work|at home|in general|usually|normally|also|basically|honestly|actually|oh|and|but|so|"
    rf"{lex.REASON_EN}|as of (?:now|today)|(?:on|at|in) [\w-]+|(?:last|next|every) [\w-]+|yesterday|tomorrow)\s*,?\s+)+",
    re.I,
)
# Nouns that make "my X" about the work or a group the speaker belongs to, not the speaker.
_GROUP_NOUN = (
    r"team|company|startup|org|organi[sz]ation|department|dept|squad|group|project|repo|repository|codebase|app|"
    r"service|product|platform|stack|system|pipeline|cluster|site|website|api|backend|frontend|database|db|"
    r"server|client|clients|customers?|users|business|lab|school|class"
)
_EN_SELF = re.compile(r"^(?:i|i'm|i've|i'd|i'll|im|ive|me|myself|my|mine)\b", re.I)
_EN_MY_GROUP = re.compile(rf"^my\s+(?:[\w-]+\s+)?(?:{_GROUP_NOUN})\b", re.I)
_EN_GROUP = re.compile(
    r"^(?:we|we're|we've|we'd|we'll|our|ours|us|the team|the company|everyone|everybody|nobody|all of us|"
    r"(?:the|this|that|each|every|all|any|no)\s+(?:[\w./-]+\s+){0,3}?[\w./-]+)\b",
    re.I,
)
_EN_YOU = re.compile(r"^(?:you|you're|you've|you'd|you'll|your|yours|u|ur)\b", re.I)
_EN_DEICTIC = re.compile(r"^(?:it|it's|its|this|that|that's|these|those|there|there's|here|here's|which|what)\b", re.I)

_ZH_TOPIC_LEAD = re.compile(r"^(?:[^，,。我你他她它这這那]{1,6}[，,])?")
_ZH_SELF = re.compile(r"^我(?![们們])")
_ZH_MY_GROUP = re.compile(
    r"^我(?:的)?(?:公司|团队|團隊|组|組|部门|部門|项目|項目|仓库|倉庫|服务|服務|产品|產品|系统|系統|客户|客戶)"
)
_ZH_GROUP = re.compile(r"^(?:我们|我們|咱们|咱們|大家|团队|團隊|公司|项目|項目|这个项目|這個項目|本项目|本項目)")
_ZH_YOU = re.compile(r"^(?:你|您)")
_ZH_DEICTIC = re.compile(r"^(?:(?:这|這|那)(?:是|样|樣|就|也|都|还|還|太|真|挺|个是|個是|个就|個就)|它)")
_ZH_TIME_BEFORE_SELF = re.compile(r"^[^，,。我你他她它]{1,3}(?=我(?![们們]))")


def subject_of(clause: str) -> Subject:
    """Who or what the clause is about, from its first words after time and discourse adverbials."""
    text = clause.strip().lstrip("\"'“‘(（")
    if has_cjk(text[:3]):
        text = _ZH_TOPIC_LEAD.sub("", text, count=1) if not _ZH_SELF.match(text) else text
        text = _ZH_TIME_BEFORE_SELF.sub("", text, count=1)  # "周末我一般…", "平时我…"
        if _ZH_MY_GROUP.match(text) or _ZH_GROUP.match(text):
            return "group"
        if _ZH_SELF.match(text):
            return "self"
        if _ZH_YOU.match(text):
            return "you"
        if _ZH_DEICTIC.match(text):
            return "deictic"
        return "other"
    text = _EN_ADVERBIAL.sub("", text)
    if _EN_MY_GROUP.match(text):
        return "group"
    if _EN_SELF.match(text):
        return "self"
    if _EN_YOU.match(text):
        return "you"
    if _EN_DEICTIC.match(text):
        return "deictic"
    if _EN_GROUP.match(text):
        return "group"
    return "other"


# ----------------------------------------------------------------------------- pointers

# "is/are" locates only when an adverb or a participle stands before the place ("the runbooks are all in
# Notion", "decisions are recorded in …"): "filenames are kebab-case in this repo" scopes a property, it says
# where nothing is; "live"
# after a form of "be" is the adjective ("has been live in production").
_EN_LOCATED = re.compile(
    r"\b(?:(?:is|are)\s+(?:(?:all|also|now|still|currently|usually|mostly|always|both|just)\s+)?"
    r"(?:(?!(?:need|seed|feed|speed|bed|red|shed)\b)[a-z]+(?:ed|en|wn)\s+(?:[\w-]+\s+){0,3}?)?|"
    r"(?:(?<!\bbeen )(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bgo )(?<!\bwent )(?<!\bgoes )lives?|sits?|kept|keep|"
    r"stored|store|saved|hosted|documented|tracked|filed|listed|defined|configured|"
    r"managed|written down|pinned|posted|found|located|go|goes|sent|shipped|published)\s+(?:[\w-]+\s+){0,4}?)"
    r"(?:in|on|under|at|inside|to)\s+(?:the\s+|our\s+|my\s+|a\s+)?(?P<where>[^,;.]{2,60})",
    re.I,
)
_CONTAINER_EN = re.compile(
    r"\b(?:repo|repository|folder|directory|dir|drive|bucket|wiki|channel|doc|docs|sheet|spreadsheet|notebook|email|"
    r"e-mail|mailbox|"
    r"drawer|cabinet|binder|board|tracker|vault|page|file|account|inbox|calendar|dashboard|space|workspace|"
    r"portal|shelf|safe|host|bastion|vpn|proxy|gateway|fridge|closet|wardrobe|cupboard|desk|study|attic|garage|"
    r"basement|glovebox|glove box|wallet|envelope|locker|box|tin|jar|hook)\b",
    re.I,
)
_PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b(?-i:[A-Z][a-z]*[A-Z0-9]\w*|[A-Z][a-z]{2,}(?:\s+[A-Z][a-z]+)*)\b")
_STORED = re.compile(
    r"\b(?:lives?|kept|keep|stored|store|saved|hosted|documented|tracked|traced|recorded|logged|filed|managed|go|goes|sent|"
    r"published)\b",
    re.I,
)
_IS_TOOL = re.compile(
    r"\b(?:ci|cd|docs|documentation|tickets|issues|logs|source of truth|tracker|wiki|runbooks?|monitoring|alerts|"
    r"alerting|paging|dashboards?|feature flags?|flags|secrets|passwords|notes|calendar|chat|comms)\b[^,;.]{0,25}?\s+"
    r"(?:is|are|lives?|sits?)\s+(?:in\s+|on\s+)?(?-i:[A-Z])",
    re.I,
)
_ASK_SOMEONE_EN = re.compile(
    r"(?:^|[,;:]\s*|\b(?:just|then|always|please)\s+)(?:ask|ping|contact|talk to|reach out to|email|message|call|go to)\s+"
    r"(?!(?:him|her|them|me)\b)(?-i:[A-Z@#])|"
    # "Priya is our DBA; ask her for anything schema-related": the person named before, then who to ask for what
    r"^(?-i:[A-Z][a-z]+)\b[^;]{2,60}[;,]\s*(?:just\s+|always\s+)?(?:ask|ping|contact|talk to|go to)\s+(?:him|her|them)\s+"
    r"(?:for|about|with|if|when|whenever)\b|"
    r"^(?-i:[A-Z][a-z]+)(?:\s+(?-i:[A-Z][a-z]+))?\s+(?:handles|owns|manages|maintains|is in charge of|"
    r"is responsible for|looks after|takes care of|knows (?:everything|all) about|covers)\b|"
    r"\b(?:is|are)\s+(?:the\s+)?(?:one|person|people|go-to(?: person)?|owner|owners|contact|point of contact|"
    r"gatekeeper|approver|maintainer)s?\s+(?:who|for|to ask|of|on)\b|"
    r"^(?-i:[A-Z][a-z]+)(?:\s+(?-i:[A-Z][a-z]+))?\s+(?:is|'s)\s+(?:the|our)\s+(?:\w+\s+)?(?:pm|po|product owner|"
    r"product manager|project manager|tech lead|team lead|lead|manager|admin|owner|maintainer|contact|point person)\b|"
    r"^my\s+(?:[\w-]+\s+)?(?:accountant|doctor|gp|dentist|lawyer|vet|mechanic|plumber|electrician|physio|"
    r"therapist|agent|advisor|adviser|banker|broker|pharmacist|trainer|tutor|hairdresser|barber)\s+is\s+"
    r"(?:(?:dr|mr|mrs|ms)\.?\s+)?(?-i:[A-Z])",
    re.I,
)
_ZH_LOCATED = re.compile(
    r"(?<![卡困等停])(?:在|放在|存在|存放在|记在|記在|收在|挂在|掛在|托管在|部署在|维护在|維護在|打到|发到|發到|存到)\s*"
    r"(?P<where>[^，,。；;]{1,30}?)"
    r"(?:(?:里|裡|上|中|内|內)(?:面|边|邊|头|頭)?(?:看|找|查|搜)?(?:[，,。；;]|$|就|能|可以)|"
    r"(?:仓库|倉庫|目录|目錄|文件夹|文件夾|群|频道|頻道|文档|文檔|表格|网盘|網盤|相册|相冊|抽屉|抽屜|后台|後台)(?:里|裡|中|上)?)"
    r"|(?:打到|发到|發到|存到|放到)\s*[A-Za-z]"
    # "接口文档在 Apifox", "数据都同步在佳明 Connect": a record of something (documents, data, accounts, files) kept
    # in a named tool, the name closing the clause ("公司在 Berlin" is where a company is, not a pointer)
    r"|^(?![我你他她])[^，,。；;]{0,8}?(?:文档|文檔|数据|數據|资料|資料|账|賬|记录|記錄|代码|代碼|日志|日誌|配置|文件|照片|"
    r"笔记|筆記|表格|合同|发票|發票|截图|截圖|设计稿|設計稿|素材|录音|錄音|视频|視頻)[^，,。；;]{0,3}?"
    r"(?:都|也|全|统一|統一)?(?:在|放在|存在|同步在|托管在|记在|記在)\s*"
    r"[^，,。；;\s]{0,6}\s*[A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*)?\s*(?=[，,。；;]|$)"
)
_ZH_ASK_SOMEONE = re.compile(
    r"(?:问题|問題|的事|有事|不懂|不会|不會|出错|出錯|挂了|掛了)[^，,。]{0,6}?(?:就|直接|可以|请|請|先)?(?:找|问|問|联系|聯繫|@)\s*(?!我|他|她|它)\S|"
    r"由[^，,。]{1,6}(?:负责|負責|接手|对接|對接)|"
    # "开发票找我的会计小林", "报销问财务": a task and the person who handles it
    r"^(?![我你他她])[^，,。]{2,10}?(?:就|直接|请|請|可以|都|先)?(?:找|问|問|联系|聯繫)\s*(?:我的|我们的|我們的)?[^，,。]{0,4}?"
    r"(?:会计|會計|律师|律師|医生|醫生|老师|老師|经理|經理|财务|財務|同事|助理|秘书|秘書|运维|運維|客服|物业|物業|HR\b|"
    r"(?:小|阿)[\u4e00-\u9fff]{1,2}(?=[，,。；;]|$)|(?-i:[A-Z][a-z]+)\b)|"
    r"^(?:我的)?(?:会计|會計|医生|醫生|律师|律師|牙医|牙醫|家庭医生|中介|理发师|理髮師|教练|教練)(?:是|叫)|"
    r"(?:看|查|去|打开|打開)\s*[^，,。]{0,24}(?:面板|仪表盘|儀表板|看板|文档|文檔|日志|日誌|wiki|页面|頁面|表格|群)"
)

# Who handles a topic or where things arrive, said descriptively ("接口是阿杰负责的", "对接的是小王",
# "陈医生是他的家庭医生", "缺货找他", "告警都进飞书的…群", "崩溃都看 Sentry"): the predicate names a
# person or a place, not a state of the work.
_ZH_HANDLER = re.compile(
    r"是[^，,。是]{1,6}(?:负责|負責|在管|对接|對接)的|(?:负责|負責|对接|對接)的(?:人)?是\s*[^，,。\s]|"
    r"是[^，,。]{0,4}的(?:家庭医生|家庭醫生|主治医生|主治醫生|会计|會計|律师|律師|对接人|對接人|负责人|負責人)|"
    r"(?:问题|問題|缺货|缺貨|有事|出错|出錯|挂了|掛了)[^，,。]{0,6}?(?:就|直接|先|可以)?(?:找|问|問|联系|聯繫)(?:他|她)(?![们們])|"
    r"(?:都|统一|統一)(?:看|查|进|進)\s*[A-Za-z][\w-]+|(?:都|统一|統一|会|會)(?:进|進)[^，,。]{1,16}(?:群|频道|頻道)|"
    r"(?:会|會)(?:用)?(?:微信|邮件|郵件|短信|钉钉|釘釘|飞书|飛書|[A-Za-z]{3,})\s*(?:发|發|转|轉)(?:给|給)?我|"
    r"(?:是|当|當)[^，,。]{0,12}(?:群主|负责人|負責人|对接人|對接人|联系人|聯繫人)|"
    r"从[^，,。]{1,6}(?:那里|那裡|那儿|那兒|家)(?:拿|买|買|进|進|订|訂)"
)

# Where a person is ("I'm in Lisbon", "our new place is in …", "my sister Ana lives in Porto"): the
# speaker, their home, or a relative, not a pointer.
_PERSON_LOCATED = re.compile(
    r"^(?:i|i'm|im|we|we're|my family|our family|(?:my|our)\s+(?:new\s+)?(?:place|home|house|flat|apartment|office)|"
    r"(?:my|our|his|her)\s+(?:[\w-]+\s+)?(?:wife|husband|partner|son|daughter|kids?|mom|mum|mother|dad|father|"
    r"parents|sister|brother|grand(?:ma|pa|mother|father|parents)|aunt|uncle|cousin|niece|nephew|in-laws|"
    r"friend|boyfriend|girlfriend|fianc[ée]e?)(?:\s+(?-i:[A-Z])[\w-]*)?\s+(?:lives?|is|are|moved|stays?))\b"
    r"(?!.*\bkeep\b)",
    re.I,
)


_CONTACT = re.compile(
    r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+|(?<![\d-])(?:\+?\d[\d ]{7,}\d|\d{3}-\d{3,4}-\d{4})(?![\d-])|"
    r"\b(?:email|e-mail|phone|number|extension|handle|channel|contact)\s+(?:is|are)\b|"
    r"\b(?:go|goes|come|comes|arrive|arrives|land|lands|end up|ends up|(?:are|is|get|gets) (?:filed|submitted|requested|"
    r"posted|logged|tracked|reported|sent))\s+(?:all\s+)?(?:through|via|in|into|to)\s+(?:the\s+|our\s+)?(?-i:[A-Z])|"
    r"电话|電話|邮箱|郵箱|微信号|微信號|联系方式|聯繫方式|工单系统|工單系統|(?:走|通过|通過)\s*[「『“\"]?(?:OA|[\u4e00-\u9fff]{1,6}[」』”\"]?(?:系统|系統|流程|平台|平臺))|"
    r"(?<![\w:])[A-Za-z]:\\[^\s,;，。]+",
    re.I,
)


def names_an_address(clause: str) -> bool:
    """Whether the clause names a URL or a host ("gerrit.corp.internal", "registry.example.com/team")."""
    return bool(URL.search(clause) or HOST_OR_HANDLE.search(clause))


# The name a thing goes by inside a tool ("项目名叫 shop-web", "用户名 runner_k", "the index is called app-logs"):
# what to look up there, so part of the pointer
_ID_IN_TOOL = re.compile(
    r"^(?:[^，,。]{0,6}的)?(?:项目|項目|仓库|倉庫|账号|賬號|帐号|帳號|用户|用戶|索引|空间|空間|频道|頻道|群)名(?:字)?(?:叫|是|为|為)?\s*"
    r"[A-Za-z0-9][\w.@-]*\s*$|"
    r"^(?:the\s+)?(?:project|repo|repository|account|user|index|workspace|space|channel|bucket)\s*name\s+is\s+\S+$|"
    r"^(?:the\s+)?(?:project|repo|repository|index|workspace|space|bucket)\s+is\s+called\s+\S+$",
    re.I,
)


def is_pointer(clause: str) -> bool:
    """Whether the clause says where something lives or who to ask (a ``reference``)."""
    if _ID_IN_TOOL.match(clause.strip().rstrip("。.")) or URL.search(clause) or PATHLIKE.search(" " + clause) or HOST_OR_HANDLE.search(clause) or _CONTACT.search(clause):
        return True
    if has_cjk(clause):
        return bool(_ZH_LOCATED.search(clause) or _ZH_ASK_SOMEONE.search(clause) or _ZH_HANDLER.search(clause))
    if _ASK_SOMEONE_EN.search(clause) or _IS_TOOL.search(clause):
        return True
    m = _EN_LOCATED.search(clause)
    if not m or _PERSON_LOCATED.match(clause):
        return False  # "I'm in Lisbon", "our new place is in …": where a person is, not a pointer
    where = m.group("where")
    named = _STORED.search(clause) is not None and _PROPER.search(" " + where) is not None
    return bool(_CONTAINER_EN.search(where) or TOOLS.search(where) or named)


# ----------------------------------------------------------------------------- dates

# A personal day, or the speaker's own duty for a while ("on-call 轮到我", "I'm on call until Friday")
_PERSONAL_DAY = re.compile(
    r"\b(?:birthday|anniversary|born)\b|生日|纪念日|紀念日|出生|结婚[^，,。]{0,6}周年|結婚[^，,。]{0,6}週年|"
    r"(?:轮到|輪到)我|^我(?:值班|轮值|輪值)|^(?:i'm|i am|im)\s+(?:the\s+)?on[- ]?call\b",
    re.I,
)


# A time ahead that names no one day ("明年 9 月", "春节前要…", "by next spring"): a dated plan all the same
_LOOSE_FUTURE = re.compile(
    r"明年|下个月|下個月|下半年|(?:年底|年初|月底|春节|春節|国庆|國慶|寒假|暑假|开学|開學)(?:前|之前|以前)(?:要|得|必须|必須)?|"
    r"\b(?:by|before|until)\s+(?:next|the end of)\s+(?:year|month|spring|summer|autumn|fall|winter|term|semester)\b",
    re.I,
)
_TAIL_INSTRUCTION = re.compile(r"(?:,\s*+|(?<!\s)\s++)(?:but|so)\s++(?:please\s++|pls\s++)?(?P<rule>[a-z'].{4,})$", re.I)
_NEGATIVE_HEAD = re.compile(r"(?:don't|dont|do not|never|avoid)\s+\w", re.I)
_WEEKDAY_HOLDS = re.compile(r"^(?:周|週|星期|礼拜|禮拜)[一二三四五六日天](?:是|有|要|都)")
# "every Friday", "Tuesdays …", "每周五", and a bare weekday opening a clause as its subject ("周二是合唱团",
# "星期四有组会": what that weekday holds each week)
_RECURRING_OR_WEEKDAY = re.compile(f"{RECURRING.pattern}|{_WEEKDAY_HOLDS.pattern}", re.I)


def future_dates(text: str, day: dt.date) -> list[dt.date]:
    """The dates after ``day`` the text names once relative dates are resolved against ``day``;
    a weekday in a recurring phrase ("every Friday") names no one date."""
    return dated_after(text, day, weekdays=_RECURRING_OR_WEEKDAY.search(text) is None)


# ----------------------------------------------------------------------------- the decision

_WORK_ACTIVITY = re.compile(
    r"^(?:i'm|i am|im)\s+(?:currently\s+|still\s+|now\s+)?(?:working on|migrating|rewriting|refactoring|building|"
    r"porting|shipping|finishing|wrapping up|leading|prototyping|implementing|upgrading|replacing|moving|"
    r"preparing|planning|aiming|trying to (?:ship|finish|get))\b|"
    r"^我(?:现在|現在|目前|正在|在)?(?:在)?(?:做|写|寫|重构|重構|迁移|遷移|开发|開發|搞|赶|趕|准备|準備)(?:的)?[^，,。]{0,8}"
    r"(?:项目|項目|迁移|遷移|重构|重構|上线|上線|版本|功能|模块|模塊|接口|系统|系統)",
    re.I,
)


_PLAN_OR_GOAL = re.compile(
    r"\b(?:goal|goals|target|aim|plan|plans|planning|roadmap|milestone|okr|okrs|decided|decision|agreed|waiting on|"
    r"waiting for|blocked on|blocked by)\b|目标|目標|打算|计划|計劃|准备|準備|决定|決定|卡在|在等|"
    r"^(?!我|你|您)[^，,。：:]{1,8}?(?:那边|那邊|方面)?(?:要求|规定|規定)(?!是|：|:)",
    re.I,
)
_WORK_WORD = re.compile(
    r"\b(?:code|repo|service|api|server|database|db|deploy\w*|release|sprint|ci|pipeline|prod|staging|team|"
    r"client|customer|project|product|app|feature|ticket|bug|pr|merge|branch|build|on-?call|standup|meeting|"
    r"infra\w*|version|upgrade|migration|freeze|stack|framework|library|test|lint\w*|schema|endpoint|cluster|"
    r"backend|frontend|config\w*|runtime|sdk|cloud|region|vendor|contract|budget|roadmap|launch|office|work|"
    r"shop|store|business|shipping|warehouse|inventory|invoic\w+|suppliers?|studio|firmware|equipment|"
    r"machines?|tools?|setup|hardware|software)s?\b|"
    r"(?<=\s)(?-i:[A-Z][\w.+#-]*[A-Z0-9][\w.+#-]*|[A-Z]{2,})\b|"
    r"代码|代碼|服务|服務|接口|部署|发布|發布|上线|上線|项目|項目|团队|團隊|客户|客戶|需求|版本|测试|測試|数据库|數據庫",
    re.I,
)


# A team convention said as a description of how the work is done ("we use X here, not Y", "every
# commit message carries …", "deploys are CI only, …", "我们统一用 X，不用 Y", "<things> are <style> in this repo"): the predicate
# contrasts the one way with the others or binds every instance of a kind in the house, so it is a standing rule for the assistant, not the state of the work.
_CONVENTION = re.compile(
    r"^(?:we|the team|our team|here we)\s+(?:only\s+|always\s+|just\s+)?(?!(?:were|was|had|did)\b)"
    rf"(?:[a-z]+(?<!ed)|sticks? (?:to|with)|go(?:es)? with)\s+[^,;.]{{1,40}}?\s*(?:,|-|–|—)?\s*(?:{lex.OTHER_WAY_EN})\s+\w|"
    r"^(?:every|each|all|any|anything)\s+(?:[\w-]+\s+){0,3}?(?:\([^)]{1,40}\)\s+)?(?:carries|carry|must|has to|have to|needs to|"
    r"need to|requires?|needs|go(?:es)? through|stays?|gets?)\b|"
    r"^(?:[\w-]+\s+){0,2}[\w-]+s\s+(?:are|must be|should be)\s+[^,;.]{1,30}?\s+(?:in this (?:repo|repository|codebase|"
    r"project)|across the (?:repo|codebase))\b|"
    r"^(?:我们|我們|团队|團隊)(?:这边|這邊|这里|這裡)?(?:都|统一|統一|一律|只)用[^，,。]{1,20}[，,]\s*(?:不用|别用|別用|不要用|不许用|不許用)",
    re.I,
)
# A Chinese clause whose dropped subject is the speaker and whose predicate is where they live or
# work ("刚从杭州搬到成都", "住在高新区附近", "在一家做游戏的公司写 Go"): the speaker's situation.
_ZH_DROPPED_SELF = re.compile(
    r"^(?:刚|剛|刚刚|剛剛|现在|現在|目前|之前|以前)?(?:从[^，,。]{1,8}搬到|搬到|搬去|住在|租在|"
    r"在一家[^，,。]{0,14}(?:公司|单位|單位|医院|醫院|学校|學校|工厂|工廠|店)|"
    r"在[^，,。]{1,10}(?:上班|工作|读研|讀研|读博|讀博|读书|讀書|上学|上學))"
)
# "deploys are CI only, …", "migrations are alembic only": the one way a kind of work is done (only a
# rule when the clause is about the work: "the pool is members only" is not).
_ONLY_WAY = re.compile(r"^(?:[\w-]+\s+){1,3}(?:are|is)\s+(?:[\w`.-]+\s+){1,3}only\s*(?:[,;:-]|$)", re.I)
# A named person's or a relative's condition or medicine ("Mia has asthma and uses her inhaler before
# PE", "他对青霉素过敏"): their situation, even when an acronym ("ADHD", "GP", "PE") looks like the work.
_HEALTH = re.compile(
    r"\b(?:asthma|adhd|autis\w*|diabet\w*|allerg\w*|coeliac|celiac|epilep\w*|dementia|alzheimer\w*|"
    r"meds|medication|inhaler|insulin|prescri\w+|dosage|diagnos\w+|\w+(?:pril|olol|statin|dipine|pezil|formin))\b|"
    r"过敏|過敏|哮喘|糖尿病|高血压|高血壓|多动症|多動症|吃药|吃藥|用药|用藥",
    re.I,
)
_NAMED_OR_KIN = re.compile(
    r"^(?:(?-i:[A-Z][a-z]+)\s+(?:has|had|takes|took|is|was|gets|uses)\b|(?:my|our|his|her)\s+(?:[\w-]+\s+)?"
    r"(?:wife|husband|partner|son|daughter|kids?|mom|mum|mother|dad|father|sister|brother|gp|doctor)\b)|"
    r"^(?:他|她|孩子|儿子|兒子|女儿|女兒|老婆|老公|妈妈|媽媽|爸爸|宝宝|寶寶)",
    re.I,
)
_NOT_TO_BE = re.compile(r"\b(?:is|are)\s+(?:not|never)\s+to\s+be\s+[a-z]+(?:ed|en|wn|ne)\b", re.I)
_SPEAKER = re.compile(r"\b(?:i|i'm|i've|me|my|mine|myself)\b|我(?![们們])", re.I)


_BARE_SPAN = re.compile(
    r"^(?:一直|一直要)?(?:到|至|直到)\s*[^，,。；;]{1,14}?(?:号|號|日|月底|月初|年底|为止|為止)?\s*[。.]?$|"
    r"^(?:until|till|through)\s+[\w ,-]{1,30}[.]?$",
    re.I,
)
_ZH_BARE_CONDITION = re.compile(r"(?:的时候|的時候|时候|時候|(?<=[\u4e00-\u9fff])[时時])\s*[，,。：:]?$")
_PRONOUNS = re.compile(r"\b(?:me|my|mine|myself|i|we|our|ours|us)\b|我们|我們|我", re.I)


def about_work(clause: str) -> bool:
    """Whether the clause names something of the work (code, systems, the team's process) or the
    user's affairs the assistant handles — with the speaker's pronouns and bare numbers left out,
    which say who and how many, not what ("一个 7 岁一个 10 岁" is about children, not the work)."""
    plain = re.sub(r"\d+(?:[.,:]\d+)*", " ", _PRONOUNS.sub(" ", clause))  # a number alone is not the work
    return bool(_WORK_WORD.search(clause)) or about_the_work(plain)


def statement_type(clause: str, day: dt.date) -> str | None:
    """The type of a declarative clause (``None`` when the subject makes it no lasting fact).

    Order follows specificity: a dated event or plan is ``project`` (a birthday or anniversary
    is a personal fact, ``user``); a pointer is a ``reference`` whoever the subject is ("my notes
    live in Obsidian"); a goal, a plan or a decision is ``project``; then the subject decides —
    the speaker → ``user`` (unless they describe the work they are doing, the state of the
    work), their household → ``user``, a group or a thing → ``project`` when the clause is about
    the work. A clause that names neither the speaker nor the work ("the bakery opens at 8"),
    one about the listener ("you …", unless it says where to find something) or one pointing at
    the moment ("this …", "it …") states no lasting fact and gets no type.
    """
    if _ZH_BARE_CONDITION.search(clause.strip()) or _BARE_SPAN.match(clause.strip()):
        # "跟我讲德语的时候", "一直到 12 月 20 号": a condition or a time span split from its clause states
        # nothing by itself
        return None
    subject = subject_of(clause)
    if subject == "you":
        # "you can reach me on Slack at @kira", "you'll find the keys in the blue tin": a pointer
        return "reference" if is_pointer(clause) else None
    if subject == "deictic":
        # "It lives in the infra repo." after "We use Terraform.": where it lives, or when, is still
        # a fact (the record carries the sentence the pronoun points back to); anything else about
        # "it"/"this" is about the moment
        if is_pointer(clause) and re.match(r"^(?:it|it's|its|它)", clause.strip(), re.I):
            return "reference"
        return None
    bare = clause.strip()
    tail = _TAIL_INSTRUCTION.search(bare)
    if tail and (opens_with_verb(tail.group("rule")) or _NEGATIVE_HEAD.match(tail.group("rule"))):
        return "feedback"  # "C is fine but go slow on the cmake stuff": what the clause asks for is how to work
    if (subject in ("group", "other") and (_CONVENTION.match(bare) or _CONVENTION.match(_EN_ADVERBIAL.sub("", bare)))
            and about_work(bare)):
        return "feedback"  # a convention of the work ("we eat pizza, not pasta" is no rule for the assistant)
    if subject in ("group", "other") and _ONLY_WAY.match(bare) and about_work(bare):
        return "feedback"
    if _NOT_TO_BE.search(bare) and not future_dates(bare, day):
        return "feedback"  # "Fridays are not to be booked": a prohibition said in the passive
    located = URL.search(clause) or PATHLIKE.search(" " + clause)
    if (future_dates(clause, day) or _LOOSE_FUTURE.search(clause)) and not located:
        return "user" if _PERSONAL_DAY.search(clause) else "project"
    if is_pointer(clause):
        return "reference"
    if _HEALTH.search(bare) and _NAMED_OR_KIN.match(bare):
        return "user"
    if _PLAN_OR_GOAL.search(clause):
        return "project"
    if subject == "self":
        return "project" if _WORK_ACTIVITY.match(clause.strip()) else "user"
    if subject == "other" and _ZH_DROPPED_SELF.match(bare):
        return "user"
    personal = _PERSONAL_ZH.search(clause) if has_cjk(clause) else _PERSONAL_EN.search(clause)
    if personal and not _WORK_WORD.search(clause):
        return "user"  # the speaker's household: "our new place is in …", "女儿周二有舞蹈课"
    if subject == "group" and not about_work(clause):
        return None  # "the bakery is open every day", "we order pizza on Fridays": neither the speaker nor the work
    if subject == "other" and not about_work(clause):
        # "mornings are my focus time": the speaker's life when the clause names them, and so is what a weekday
        # holds each week ("周二是合唱团"); a clause that names neither the speaker nor the work ("每天都很忙",
        # "the bakery opens at 8") is not kept
        return "user" if _SPEAKER.search(clause) or _WEEKDAY_HOLDS.match(bare) else None
    return "project"


__all__ = ["future_dates", "is_pointer", "names_an_address", "statement_type", "subject_of"]
