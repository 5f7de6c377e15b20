"""Pointers: where things live, as ``reference`` records.

:func:`rule_reference` — "X is kept/tracked/documented/generated in Y", "X lives in / comes
from Y", "X is reachable through Y", "you can find X in Y", "logs go to Datadog", "the
frontend is a separate repo called web-client", "CI is GitHub Actions", "X: <URL>", and in
Chinese "文档在 …", "… 都放在 <路径/工具/…里>", "日志都打到 Datadog". Where it points must be a
pointer (a URL, a path, a host, a known tool, or a named repo/bucket/channel such as "the
search-infra repo") unless the sentence names what kind of record it is ("runbooks are kept
in Confluence"). A directive ("always …", "以后…") or a first-person subject is never a pointer.
"""

from __future__ import annotations

import re

from dreamd.models.offline.extract.rules import HOW
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    content_ok,
    has_cjk,
    sentence_case,
    third_person,
    tidy,
)

URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s)>\]\"'，。]+", re.I)
_PATHLIKE = re.compile(
    r"(?:^|[\s(（：])(?:~?/[\w.-]+(?:/[\w.*-]*)*|\.?[\w-]+(?:/[\w.*-]+)+/?|[\w-]+\.(?:ya?ml|toml|json|md|py|ts|"
    r"js|sql|cfg|ini|conf|txt|csv|xlsx?|sh)|#(?!(?:[0-9a-f]{3}|[0-9a-f]{6})\b)[a-z][\w-]+)",
    re.I,
)
_REF_WORDS = re.compile(
    r"\b(?:docs?|documentation|dashboards?|runbooks?|wiki|tracker|board|repo|repository|spec|specs|"
    r"design doc|grafana|kibana|sentry|datadog|notion|confluence|figma|jira|linear|status page|"
    r"playbook|handbook|channel|postman|swagger|openapi|logs?|metrics|monitoring|calendar|drive|"
    r"sheet|spreadsheet|staging|backlog|roadmap|source of truth|tickets?|issues|config|configs|"
    r"scripts?|templates?|migrations?|portfolio|notes?|recipes?|files?|folder|bucket|manifests?|tokens?|packages?|"
    r"schemas?|fixtures?|assets?|charts?|protos?|definitions?|policies|policy|pages?|ci|cd|ci/cd|builds?|deploys?|"
    r"hosting|alerts?|alerting|paging|pipelines?|source control|version control|secrets?|"
    r"credentials|"
    r"feature flags?|error tracking|analytics|chat|comms)\b|文档|文檔|看板|仪表盘|"
    r"儀表板|监控|監控|仓库|倉庫|设计稿|設計稿|手册|手冊|日志|日誌|频道|頻道|脚本|腳本|目录|目錄|需求|值班表|作品集|"
    r"配置|文件|资料|資料",
    re.I,
)
_TOOLS = re.compile(
    r"\b(?:linear|jira|github(?: issues| projects)?|gitlab|bitbucket|notion|confluence|trello|asana|"
    r"slack|grafana|kibana|datadog|sentry|pagerduty|figma|google docs?|google drive|google sheets|"
    r"dropbox|onedrive|icloud|airtable|obsidian|behance|dribbble|s3|terraform|vault|1password|"
    r"bitwarden|storybook|metabase|looker|tableau|youtrack)\b|飞书|飛書|钉钉|釘釘|语雀|語雀|企业微信|企業微信|腾讯文档|騰訊文檔",
    re.I,
)
_REF_EN: dict[str, re.Pattern[str]] = {
    "kept": re.compile(
        r"^(?P<subj>.+?)(?<!.\s)\s+(?:is|are)\s+(?:all\s+)?(?:tracked|filed|kept|documented|hosted|stored|managed|logged|"
        r"deployed|published|described|listed|defined|configured|maintained|versioned|checked in|committed|saved|"
        r"pinned|posted|bookmarked|linked|attached|shared|generated|written|exported|output|rendered|compiled|"
        r"backed up|mirrored|archived|recorded|written down)\s+(?:\w+\s+){0,3}?(?:in|on|at|"
        r"under|to|with|into)\s+(?P<where>.+)$",
        re.I,
    ),
    "lives": re.compile(
        r"^(?P<subj>.+?)(?<!.\s)\s+(?:lives?|sits?|comes? from|are pulled from|is pulled from|are generated from|"
        r"is generated from|are built from|is built from)\s+(?:in|at|on|under)?\s*(?P<where>.+)$",
        re.I,
    ),
    "reachable": re.compile(
        r"^(?P<subj>.+?)(?<!.\s)\s+(?:is|are)\s+(?:only\s+)?(?:reachable|accessible|available|exposed|served|deployed|"
        r"running)\s+(?:only\s+)?(?:through|via|from|at|on|behind)\s+(?P<where>.+)$",
        re.I,
    ),
    "we-keep": re.compile(
        r"^we\s+(?:track|keep|document|log|store|manage)\s+(?P<subj>(?!\s).+?(?<!.\s)|[^\S\n](?=\n*\s(?!\s)))\s+(?:in|on|at|with)\s+(?P<where>.+)$", re.I
    ),
    "found": re.compile(
        r"^(?:(?P<subj>.+?)(?<!.\s)\s+can\s+be\s+found|you(?:'ll)?\s+(?:can\s+|will\s+)?find\s+(?P<subj2>(?!\s).+?(?<!.\s)|[^\S\n](?=\n*\s(?!\s))))\s+"
        r"(?:in|at|on|under)\s+(?P<where>.+)$",
        re.I,
    ),
    "goes": re.compile(
        r"^(?P<subj>.+?)(?<!.\s)\s+(?:go|goes|are sent|is sent|get sent|gets sent|are shipped|is shipped|end up|ends up|"
        r"are forwarded|is forwarded|are posted|is posted|are reported|is reported)\s+(?:to|in|into)\s+(?P<where>.+)$",
        re.I,
    ),
    "posts": re.compile(
        r"^(?P<subj>.+?)(?<!.\s)\s+(?:posts?|sends?|drops?|announces?|publish(?:es)?|reports?)\s+(?:[\w-]+\s+){1,4}?(?:in|to|into)\s+"
        r"(?P<where>#[a-z][\w-]+.*)$",
        re.I,
    ),
    "at": re.compile(r"^(?P<subj>.+?)(?<!.\s)\s+(?:is|are)\s+(?:at|in|on|under)\s+(?P<where>.+)$", re.I),
    "colon": re.compile(r"^(?P<subj>.+?)(?<!.\s)\s*[:：]\s*(?P<where>https?://\S+.*)$", re.I),
    "url-is": re.compile(r"^(?P<where>https?://\S+)\s+(?:is|has)\s+(?:the\s+|our\s+)?(?P<subj>.+)$", re.I),
    "has-in": re.compile(
        r"^(?P<owner>.+?)(?<!.\s)\s+(?:has|have|keeps?|stores?|puts?)\s+(?:(?:its|their|all|the|our)\s*)?(?P<subj>(?! )[\w -]+?(?<!.\s)| (?=[^\S ]*\s(?!\s)))\s+"
        r"(?:in|on|under|at)\s+(?P<where>.+)$",
        re.I,
    ),
    "separate": re.compile(
        r"^(?P<subj>.+?)(?<!.\s)\s+(?:is|are|lives?|sits?)\s+(?:in\s+)?(?:a|an|its own|their own)\s+(?:separate|different|another|"
        r"own)?\s*(?:repo|repository|project|service|package|bucket)\s+(?:called|named)\s+(?P<where>\S+.*)$",
        re.I,
    ),
    "my-place": re.compile(
        r"^(?P<subj>my\s+(?:usual\s+|regular\s+|go-to\s+)?(?:gym|doctor|gp|dentist|bank|school|hairdresser|barber|vet|"
        r"pharmacy|physio|physiotherapist|therapist|lawyer|accountant|mechanic|hospital|clinic|pediatrician))\s+is\s+"
        r"(?P<where>[A-Z0-9].+)$",
        re.I,
    ),
    "is-tool": re.compile(r"^(?P<subj>.+?)(?<!.\s)\s+(?:is|are)\s+(?P<where>.+)$", re.I),
}
_PLACE_ZH = re.compile(
    r"^(?P<subj>我(?:常去|常用|平时去|平時去|一般去|看)?的?(?:健身房|医生|醫生|牙医|牙醫|银行|銀行|学校|學校|理发店|理髮店|药店|"
    r"藥店|医院|醫院|诊所|診所|律师|律師|会计|會計))(?:是|叫|在)(?P<where>.+)$"
)
_REF_ZH = re.compile(
    r"^(?P<subj>.+?)(?:都|统一|統一|一般|一律)?(?:在|放在|存在|存放在|位于|位於|见|見|记录在|記錄在|跟踪在|跟蹤在|托管在|"
    r"託管在|维护在|維護在|收在|打到|发到|發到|写到|寫到|存到|同步到|推到|上报到|上報到|生成到|输出到|輸出到|导出到|導出到|"
    r"写入|寫入|的(?:地址|链接|鏈接|网址|網址)(?:是|为|為))[：: ]*(?P<where>.+?)(?:上看|里看|裡看|上查|里查|裡查|管理)?(?:[，,].*)?$"
)
_ZH_PLACE_SUFFIX = re.compile(r"(?:里|裡|中|上|下|目录|目錄|文件夹|文件夾|抽屉|抽屜|柜子|櫃子)(?:面|边|邊|头|頭)?$")
_VAGUE_SUBJECT = re.compile(
    r"^(?:it|this|that|he|she|they|i|we|you|there|the (?:bug|error|issue|problem|fix|change)|"
    r"我|你|他|她|它|我们|我們|这|這|那)$",
    re.I,
)
_DIRECTIVE_SUBJECT = re.compile(
    r"^(?:always|never|don't|do not|please|make sure|avoid|以后|以後|每次|永远|永遠|不要|别|別|一律|请|請|我(?![们們]|的)|把)", re.I
)


HOST = re.compile(
    r"(?<!\b[a-z0-9-])\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|cloud|example|internal|local|corp|lan|cn|co|ai|sh)\b|"
    r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{2,5})?\b", re.I
)
"""A host name or an IP address where a reference points (``db.internal``, ``10.0.0.5:5432``)."""
# the type decision's wider test (dreamd.models.offline.extract.kinds): any port, three-part names, a bare
# "name.tld" in lower case, and an @handle
HOST_OR_HANDLE = re.compile(
    r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|(?<!\b[a-z][\w-])\b[a-z][\w-]*(?:\.[a-z][\w-]*)*\.(?:internal|local|corp|lan|example)\b|"
    r"(?<!\b[a-z][\w-])\b[a-z][\w-]*\.[a-z][\w-]*\.(?:com|net|org|io|dev|cn|app)\b|(?<![\w@])@[a-z][\w-]{2,}|"
    r"(?-i:(?<!\b[a-z][a-z0-9-])\b[a-z][a-z0-9-]{2,}\.(?:com|net|org|io|dev|cn|fr|de|co\.uk|uk|eu|nl|es|it|jp|au|ca|app|ai|gov|edu)\b(?![.\w]))",
    re.I,
)


_CONTAINER = re.compile(
    r"\b(?:repo|repository|bucket|channel|namespace|project|space|folder|directory|table|index|queue|topic)\b|"
    r"仓库|倉庫|频道|頻道|空间|空間|目录|目錄|命名空间|命名空間|群",
    re.I,
)
_IDENTIFIER = re.compile(r"(?<![\w-])(?:[a-z0-9]+[-_][\w-]+|#[\w-]+|`[^`]+`)", re.I)


def _pointer(where: str) -> bool:
    """A URL, a path, a host, a known tool, or a named repo/bucket/channel ("the search-infra repo")."""
    if URL.search(where) or _PATHLIKE.search(" " + where) or _TOOLS.search(where) or HOST.search(where):
        return True
    return bool(_CONTAINER.search(where) and _IDENTIFIER.search(where))


_ASK_WHO_EN = re.compile(
    r"^(?:for|about|with|regarding|if|when)\b(?P<topic>[^,]{2,60}),\s*(?:ask|talk to|ping|contact|reach out to|email|"
    r"message|go to|call)\s+(?P<who>\S.+)$",
    re.I,
)
_COVERS = re.compile(
    r"^(?P<who>(?-i:[A-Z])[a-z]+(?:\s+(?-i:[A-Z])[a-z]+)?)\s+(?:covers|is covering|will cover|handles|is handling|will handle|takes over)\b|"
    r"由(?P<who2>[^，,。由]{1,6}?)(?:负责|負責|接手|代管|顶上|頂上)",
)
_NAMED_THEN_ASK = re.compile(
    r"^(?P<name>[^，,。]{2,30}?(?:是|is|'s)\s*[^，,。]{1,20})[，,]\s*(?P<ask>[^，,。]{2,40}?)[。.!！]?$", re.I
)  # "我们组长是老陈，架构上的事问他": the name is in the clause before the pronoun
_TOPIC_LEAD_EN = re.compile(r"^(?:for|about|regarding)\b[^,]{2,60},\s*(?P<rest>\S.+)$", re.I)
_ASK_WHO_ZH = re.compile(
    r"^(?P<topic>[^，,。]{1,18}?)(?:的问题|的問題|的事情|的事|相关的问题|相關的問題|相关|相關|出问题了就|出問題了就|有问题就|有問題就)"
    r"[^，,。]{0,3}?(?:找|问|問|联系|聯繫|@)\s*(?P<who>.+)$"
)


def _ref(prefix: str, slug_source: str, fact: str, description: str | None = None) -> Found:
    """A reference record; its description is the fact unless one is given."""
    shown = fact if description is None else description
    return Found("reference", "reference", prefix, slug_source, fact, shown, how=HOW["reference"])


_ONLY_PRONOUN = re.compile(r"(?:him|her|them|他|她|他们|他們)", re.I)


def _as_said(s: str) -> str:
    """The sentence as the record's fact, in the third person."""
    return sentence_case(third_person(tidy(s))) if not has_cjk(s) else third_person(tidy(s))


def rule_reference(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user" or ctx.standing:
        return None  # "From here on, tests go in tests/": under a standing lead it is a rule
    who = _ASK_WHO_EN.match(s) or _ASK_WHO_ZH.match(s) or _COVERS.search(s)
    named = _NAMED_THEN_ASK.match(s)
    if who is None and named is not None:
        who = _ASK_WHO_EN.match(named.group("ask")) or _ASK_WHO_ZH.match(named.group("ask"))
        if who is not None and _ONLY_PRONOUN.fullmatch(who.group("who").strip(" 。.!！")):
            return _ref("ask", named.group("name"), _as_said(s))
    person = (who.groupdict().get("who") or who.groupdict().get("who2") or "") if who else ""
    if who and _ONLY_PRONOUN.fullmatch(person.strip(" 。.!！")):
        return None  # "架构上的事问他": who "him" is sits in the clause before; the whole sentence says it
    if who and content_ok(person, min_tokens=1) and not re.match(r"(?:我(?![的们們])|me\b|myself\b)", person, re.I):
        return _ref("ask", person, _as_said(s))
    topic = _TOPIC_LEAD_EN.match(s)
    if topic:
        found = rule_reference(topic.group("rest"), ctx)  # "For anything about my car, my mechanic is Tony"
        if found is not None:
            found.fact = found.description = sentence_case(third_person(tidy(s)))
            return found
    if has_cjk(s):
        return _reference_zh(s)
    if _DIRECTIVE_SUBJECT.match(s):
        return None
    for kind, pat in _REF_EN.items():
        m = pat.match(s)
        if not m:
            continue
        subj, where = tidy(m.group("subj") or m.groupdict().get("subj2") or ""), tidy(m.group("where"))
        subj = re.split(r"[,;]\s+(?:and\s+)?|(?<!\s)\s+and\s+(?=(?:the|our|all)\b)", subj)[-1]
        subj = re.sub(r"^(?:the|our|all|all the|all our|the team's|our team's)\s+", "", subj, flags=re.I)
        if _VAGUE_SUBJECT.match(subj) or not content_ok(subj, min_tokens=1) or len(subj.split()) > 8:
            continue
        if kind == "is-tool" and not (re.match(_TOOLS.pattern, where, re.I) and _REF_WORDS.search(subj)):
            continue
        if kind in ("lives", "reachable", "found", "goes", "at", "colon", "url-is", "has-in") and not _pointer(where):
            continue
        if kind == "kept" and not (_pointer(where) or _REF_WORDS.search(subj + " " + where)):
            continue
        if kind in ("colon", "url-is") and not (_REF_WORDS.search(subj) or _TOOLS.search(subj)):
            continue
        sentence = s.split(";")[0]
        fact = sentence if kind in ("colon", "url-is") else sentence_case(sentence)
        where = tidy(where.split(";")[0])
        desc = sentence_case(sentence) if kind in ("kept", "is-tool") else f"{sentence_case(subj)}: {where}"
        tool = _TOOLS.search(URL.sub(" ", where))
        slug_src = subj + (" " + tool.group(0) if tool else "")
        return _ref("ref", slug_src, third_person(fact), third_person(desc))
    url = URL.search(s)
    if url and _REF_WORDS.search(s.replace(url.group(0), " ")):
        before = tidy(s[: url.start()])
        subj = re.sub(r"^(?:the|our|here's|here is|see)\s+", "", before, flags=re.I) or url.group(0)
        if not content_ok(subj, min_tokens=1):
            return None
        fact = sentence_case(third_person(s))
        return _ref("ref", subj, fact)
    return None


def _reference_zh(s: str) -> Found | None:
    spot = _PLACE_ZH.match(s)
    if spot:
        fact = third_person(tidy(s))
        return _ref("ref", spot.group("where"), fact)
    for clause in [s, *re.split(r"[，,；;]", s)[1:]]:
        m = _REF_ZH.match(clause.strip())
        if not m:
            continue
        subj, where = tidy(m.group("subj")), tidy(m.group("where"))
        if _VAGUE_SUBJECT.match(subj) or _DIRECTIVE_SUBJECT.match(subj) or len(subj) > 20:
            continue
        place = bool(_ZH_PLACE_SUFFIX.search(where)) and bool(re.search(r"都|统一|統一|一般|放在|存放|收在|另一个|另一個|单独|單獨", clause))
        if not (_pointer(where) or place) or not (_REF_WORDS.search(subj) or len(subj) <= 20):
            continue
        fact = third_person(tidy(s))
        tool = _TOOLS.search(URL.sub(" ", where))
        url = URL.search(where)
        desc = f"{third_person(subj)}：{url.group(0)}" if url else fact
        return _ref("ref", subj + (" " + tool.group(0) if tool else ""), fact, desc)
    url = URL.search(s)
    if url and _REF_WORDS.search(s.replace(url.group(0), " ")):
        fact = third_person(tidy(s))
        return _ref("ref", URL.sub(" ", s), fact)
    return None


TOOLS = _TOOLS
"""Tools and services a pointer can name (Linear, Jira, Grafana, Notion, 飞书 …)."""
PATHLIKE = _PATHLIKE
"""A path, a file name with a known extension, or a #channel (a hex colour such as #FC3D21 is none)."""

__all__ = ["PATHLIKE", "TOOLS", "URL", "rule_reference"]
