"""Who the user is: roles, background, stable attributes, family, where they live.

:func:`rule_identity` → ``user`` — "I'm (a|an|the) <role> …" (with or without an article),
"I'm on the platform team", "I work as/at …", "I maintain the billing service", "I live in …",
"I'm allergic to …" / "vegetarian" / "new to Go", "I've been writing X for …", "I have two
kids", "my wife is …", "my physio is every Tuesday", "my budget is …"; "我是做后端的",
"我是一名老师", "我是从 Java 转过来的", "我对花生过敏", "我不吃辣", "我有高血压",
"我住在深圳", "我儿子上初二". A role or attribute word (a grammatical class: occupations,
stable states, kin terms) is needed after "I'm …", so "I'm tired" or "I'm looking at it" is
not an identity; a statement about family with a future date is left to the dated rule.
"""

from __future__ import annotations

import re

from dreamd.models.offline.extract.kinds import is_pointer
from dreamd.models.offline.extract.preference import plain_effort
from dreamd.models.offline.extract.rules import HOW
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    content_ok,
    has_cjk,
    has_relative_date,
    sentence_case,
    third_person,
    tidy,
    verb_3rd,
)

_ROLE_WORDS = re.compile(
    r"\b(?:engineer|developer|dev|scientist|designer|manager|student|researcher|analyst|"
    r"architect|admin|administrator|devops|sre|lead|founder|cto|ceo|pm|teacher|writer|"
    r"consultant|programmer|beginner|maintainer|contractor|intern|freelancer|professor|"
    r"doctor|physician|nurse|lawyer|hobbyist|owner|specialist|tester|qa|marketer|editor|journalist|"
    r"statistician|mathematician|physicist|chemist|biologist|economist|accountant|novice|"
    r"newbie|expert|veteran|on-call|oncall|frontend|front-end|backend|back-end|full-stack|fullstack|"
    r"night owl|early bird|morning person|introvert|extrovert|homebody|"
    r"parent|mom|mum|dad|father|mother|retiree|pharmacist|paramedic|chef|cook|artist|musician|"
    r"photographer|translator|lecturer|tutor|coach|therapist|dentist|vet|pilot|driver|farmer|carer|caregiver)s?\b|"
    r"(?<!\b[\w+#.-])\b[\w+#.-]+ (?:person|guy|gal|nerd|geek)\b",
    re.I,
)
_STABLE_STATE = re.compile(
    r"^(?:vegetarian|vegan|pescatarian|allergic to|intolerant to|lactose intolerant|gluten intolerant|"
    r"(?:type [12] )?diabetic|celiac|coeliac|colou?r-?blind|left[- ]handed|right[- ]handed|deaf|hard of hearing|dyslexic|dyspraxic|autistic|"
    r"epileptic|asthmatic|an(?:a)?emic|short-sighted|near-sighted|long-sighted|"
    r"based in|located in|from [A-Z]|originally from|fluent in|a native|native|married|divorced|"
    r"pregnant|retired|self-employed|vision impaired|visually impaired|recovering from|living with|"
    r"being treated for|on medication|on a [\w-]+ diet|(?:pretty |fairly |quite |very |relatively |completely |"
    r"totally |still |brand )?new (?:to|on|at|in|here))",
    re.I,
)
_NOT_IDENTITY = re.compile(
    r"^(?:not|going|gonna|about|sure|glad|happy|sorry|afraid|done|back|here|there|just|trying|"
    r"looking|thinking|working on|still|so|too|very|really|feeling|kind of|a bit|a little|curious|"
    r"excited|tired|busy|stuck|confused|worried|ready|fine|ok|okay|good|great|in the middle)\b",
    re.I,
)
WORK_NOUN = re.compile(
    r"\b(?:on-?call|rotation|standup|stand-up|release|deploy|deployment|sprint|retro|build|backup|meeting|sync|review|"
    r"planning|demo|freeze|rollout|maintenance|cron|job|pipeline|report|invoice|payroll|audit|staging|env|environment|"
    r"database|db|cluster|cache|index|server)s?\b",
    re.I,
)
_ROLE_SUFFIX = re.compile(
    r"\b(?!(?:better|other|clever|super|eager|sober|proper|different|brilliant|excellent|former|latter|under|over|"
    r"after|ever|never|silent|patient|urgent|recent|decent|quiet|pleasant|elegant|relevant|important|constant|"
    r"distant|fluent|frequent|independent|intelligent|confident|efficient)\b)[a-z]{3,}(?:er|or|ist|ian|ant|ent|eer)\b"
)
_IDENTITY_EN: dict[str, re.Pattern[str]] = {
    "is": re.compile(r"^(?:i am|i'm|im)\s+(?P<x>(?:(?:a|an|the|one of the|one of)\s+)?[^;]+?)\s*$", re.I),
    "works": re.compile(
        r"^i\s+work\s+(?P<x>(?:(?:nights|days|weekends|night shifts|shifts|remotely|from home|part-time|full-time|"
        r"freelance|late|early)\b\s*)?(?:(?:as|at|on|for|in|with)\s+.+?|(?:nights|weekends|night shifts|shifts|remotely|"
        r"from home|part-time|full-time|freelance)\b.*?))\s*$",
        re.I,
    ),
    "gets": re.compile(
        r"^i\s+(?:always\s+|often\s+|easily\s+|usually\s+)?(?P<x>(?:get|am|'m)\s+(?:really\s+|very\s+|easily\s+)?"
        r"(?:nervous|anxious|seasick|carsick|motion sick|migraines|headaches|overwhelmed|cold easily|stage fright|"
        r"claustrophobic|afraid of|scared of)\b.*?)\s*$",
        re.I,
    ),
    "lives": re.compile(r"^i\s+(?:live|grew up|was born)\s+(?P<x>(?:in|near|outside)\s+.+?)\s*$", re.I),
    "named": re.compile(r"^(?i:i'm|i am)\s+(?P<x>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?=\s*(?:[,.;!]|$|\s+and\b|\s+by the way))"),
    "aged": re.compile(r"^(?:i'm|i am)\s+(?P<x>\d{1,2}(?:\s+years old)?\b.*?)\s*$", re.I),
    "condition": re.compile(
        r"^i\s+have\s+(?P<x>(?:a\s+|an\s+|mild\s+|severe\s+|chronic\s+)*(?:asthma|diabetes|type \d diabetes|adhd|dyslexia|"
        r"migraines?|allergies|allergy|arthritis|epilepsy|anxiety|depression|insomnia|tinnitus|hypertension|"
        r"high blood pressure|back pain|bad knees?|bad back|[a-z]+itis|[a-z]+osis)\b.*?)\s*$",
        re.I,
    ),
    "maintains": re.compile(
        r"^i\s+(?P<x>(?:maintain|own|run|manage|lead|look after|am responsible for|handle|teach|coach|mentor|"
        r"supervise)\s+(?:the|our|a|an|two|three|four|five|\d+)\s+.+?)\s*$",
        re.I,
    ),
    "ailment": re.compile(
        r"^i\s+have\s+(?P<x>(?:a|an)\s+(?:bad|dodgy|weak|injured|sore|bum|trick|dicky|chronic)\s+"
        r"(?:left\s+|right\s+)?"
        r"(?:knee|back|hip|shoulder|ankle|wrist|neck|elbow|foot|leg|hand|eye|ear|heart|stomach)s?\b.*?)\s*$",
        re.I,
    ),
    "home": re.compile(
        r"^(?P<x>(?:our|my)\s+(?:new\s+)?(?:place|flat|house|home|apartment)\s+is\s+in\s+(?-i:[A-Z])[\w -]{1,30}?.*?)\s*$", re.I
    ),
    "cannot": re.compile(
        r"^i\s+(?P<x>(?:don't|do not|can't|cannot)\s+(?:drive|swim|cook|read music|eat (?:meat|fish|pork|dairy|gluten|nuts|spicy food)|"
        r"drink(?: alcohol)?|speak [A-Z]\w+)\b.*?)\s*$",
        re.I,
    ),
    "diagnosed": re.compile(
        r"^(?P<x>(?:i|my\s+(?:wife|husband|partner|son|daughter|mom|mum|mother|dad|father|sister|brother|kid|child))\s+"
        r"(?:was|were|have been|has been|got|'ve been)\s+(?:just\s+|recently\s+|finally\s+)?diagnosed\s+with\b.+?)\s*$",
        re.I,
    ),
    "has": re.compile(
        r"^i\s+have\s+(?P<x>(?:a|an|one|two|three|four|five|\d+)\s+(?:\w+\s+)?(?:kids?|children|child|sons?|"
        r"daughters?|cats?|dogs?|puppy|kitten|pets?|brothers?|sisters?|twins|grandkids|grandchildren)\b.*?|"
        r"(?:a|an)\s+(?:\w+\s+)?\w+,\s+(?-i:[A-Z])[a-z]+,.*?)\s*$",
        re.I,
    ),
    "plays": re.compile(
        r"^i\s+(?P<x>(?:play|volunteer|sing|dance|knit|paint|sculpt|surf|ski|climb|garden|hike)\b.+?)\s*$", re.I
    ),
    "habitual": re.compile(
        r"^(?i:i\s+(?:mostly\s+|mainly\s+|usually\s+|also\s+|only\s+)?)(?P<x>(?i:speak|drive|ride|commute|own|wear|"
        r"follow a|am fluent in)\s+.+?|(?i:use|run|take|support)\s+(?:(?i:a|an)\s+)?[A-Z0-9][\w.+#-]*.*?)\s*$",
    ),
    "weekly": re.compile(
        r"^i\s+(?P<x>(?!(?:was|were|had|did|went|never|rarely|don't|can't|cannot|know|think|wonder|forget|hate|"
        r"love|miss|wish)\b)[a-z]+\b.{0,60}?\b(?:mondays|tuesdays|wednesdays|thursdays|fridays|"
        r"saturdays|sundays|weekdays|weekends|every (?:day|morning|evening|night|week|monday|tuesday|wednesday|"
        r"thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun))\b.*?)\s*$",
        re.I,
    ),
    "situation": re.compile(
        r"^i\s+(?:used to live in [^,]{2,30}(?:\s+actually)?,\s*(?:and\s+|then\s+)*(?:i\s+)?|have\s+(?=(?:just\s+|recently\s+)?"
        r"(?:started|joined)\b))?"
        r"(?P<x>(?:(?:just|recently|finally|also)\s+)?(?:moved|relocated)\s+(?:to|from)\s+.+?|"
        r"(?:(?:just|recently)\s+)?(?:started|joined)\s+(?:a\s+new\s+job\s+)?(?:at|as|with|working|the|a|an)\b.+?|"
        r"(?:can't|cannot|don't|do not)\s+(?:eat|drink|have|tolerate|digest|drive|swim|own)\s+.+?|"
        r"(?:don't|do not)\s+(?:have|own)\s+(?:a|an|any)\s+.+?|"
        r"(?:'ve|have)\s+(?:got\s+)?(?:about\s+|around\s+|over\s+|almost\s+|nearly\s+)?(?:\d+|one|two|three|four|five|six|"
        r"seven|eight|nine|ten|a few|several)\s+years\s+(?:of|in|with|experience)\b.+?|"
        r"(?:(?:recently|just|finally)\s+)?(?:switched|moved|migrated|changed)\s+(?:from\s+.+?\s+)?to\s+[A-Z0-9].+?)"
        r"(?:,\s*(?:so|and|but)\b.*)?\s*$",
        re.I,
    ),
    "zone": re.compile(
        r"^i'?m\s+(?:based\s+)?in\s+(?P<x>(?-i:[A-Z])[\w -]{1,30}?,?\s+(?:so\s+)?(?:UTC|GMT|CET|EST|PST|[A-Z]{2,4}T\b).*?)\s*$",
        re.I,
    ),
    "has-named": re.compile(
        r"^(?:we|i)(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?P<x>(?:adopted|got|have|own|rescued)\s+(?:a|an)\s+"
        r"[\w\s-]{2,30}?\s+(?:called|named)\s+(?-i:[A-Z])[a-z]+\b.*?)\s*$",
        re.I,
    ),
    "named-kin": re.compile(r"^(?P<x>my\s+(?:[\w-]+(?:'s)?\s+){1,2}name\s+is\s+.+?)\s*$", re.I),
    "valued": re.compile(r"^my\s+(?P<x>[a-z][\w\s-]{2,30}?\s+(?:is|are)\s+[^,;]*\d[^,;]*?)\s*$", re.I),
    "own": re.compile(
        r"^my\s+(?P<x>(?:role|job|title|name|position|pronouns|budget|timezone|time zone|native language|"
        r"first language|mother tongue|diet|team|manager|boss|day job|background|main language|main stack|stack|commute|"
        r"shift|shifts|hours|working hours)"
        r"\b[\w\s-]{0,30}?\s+(?:is|are)\s+.+?)\s*$",
        re.I,
    ),
    "kin": re.compile(
        r"^(?P<x>my\s+(?:wife|husband|partner|spouse|son|daughter|kids?|children|mom|mum|mother|dad|father|"
        r"sister|brother|parents|grandma|grandmother|grandpa|grandfather|dog|cat|baby|toddler|twins|older one|younger one|"
        r"oldest|youngest|eldest|little one|kiddo|boy|girl|girls|boys|bf|gf|boyfriend|girlfriend|fiance|fiancee|fiancé|"
        r"fiancée|hubby|roommate|flatmate)(?:\s+(?-i:[A-Z])[a-z]+)?(?:'s\s+[\w-]+)?\s+"
        r"(?:is|are|has|have|goes|go|works|work|plays|play|likes|like|loves|love|hates|hate|can't|cannot|"
        r"doesn't|don't|lives|live|studies|study|(?!(?:thinks|says|wants|asks|tells|reckons|believes|feels|knows|"
        r"wonders|keeps|was|has|always|sometimes|seems|perhaps|nowadays|swears|insists)\b)"
        r"[a-z]{3,}(?<!s)s)\b.+?)\s*$",
        re.I,
    ),
    "their-kin": re.compile(
        r"^(?P<x>(?:their|his|her)\s+(?:mom|mum|mother|dad|father|grandma|grandpa|grandparents|nanny|babysitter)\b.{0,40}?"
        r"\bevery\b.+?)\s*$",
        re.I,
    ),
    "recurring": re.compile(
        r"^(?P<x>(?:my|our)\s+[\w' -]{2,40}?\s+(?:is|are|meets?|happens?|runs?|takes place|falls|changes|rotates|"
        r"resets|ships|is released|goes out)\s+(?:on\s+)?"
        r"(?:every|each|on (?:the )?(?:first|second|third|fourth|last)|the (?:first|second|third|fourth|last)\s+\w+\s+of\s+"
        r"every)\b.+?)\s*$",
        re.I,
    ),
    "called": re.compile(r"^(?:call me|my name's)\s+(?P<x>\S+)", re.I),
    "has been": re.compile(
        r"^i(?:'ve| have)\s+been\s+(?P<x>(?:writing|using|working with|working in|programming in|coding in|"
        r"doing|teaching|running|playing)\s+.+?\s+for\s+.+?)\s*$",
        re.I,
    ),
}
_IDENTITY_ZH: dict[str, re.Pattern[str]] = {
    "is": re.compile(r"^我(?P<x>是(?!说|說|想|觉得|覺得|不是|在|否|真的|因为|因為)(?:一名|一个|一個|一位|个|個|名)?.+)$"),
    "called": re.compile(r"^我(?P<x>(?:叫|的名字是|的名字叫).+)$"),
    "named": re.compile(r"^(?P<x>名字(?:叫|是).+)$"),
    "works": re.compile(r"^我(?P<x>(?:在|住在).{1,20}?(?:工作|上班|任职|任職|生活|住).*)$"),
    "lives": re.compile(r"^我(?P<x>(?:现在|現在|目前|一直)?住在.{2,}?)$"),
    "allergy": re.compile(
        r"^(?P<x>(?:我(?:的)?(?:[\u4e00-\u9fff]{1,3})?|(?:大|小|二)?(?:女儿|女兒|儿子|兒子|孩子)|老大|老二)对.{1,15}?过敏.*)$"
    ),
    "kin-recurring": re.compile(
        r"^(?P<x>(?:我|她们|他们|她們|他們|孩子们|孩子們)?的?(?:妈妈|媽媽|爸爸|奶奶|爷爷|爺爺|外婆|姥姥|保姆|阿姨)[^，,。]{0,8}?"
        r"(?:每|隔)(?:周|週|天|月|个|個).+)$"
    ),
    "diet": re.compile(r"^(?P<x>我(?:不吃|不喝|从不吃|從不吃|吃(?:纯|純|全)?素|不能吃|戒了).*)$"),
    "learning": re.compile(r"^(?P<x>我(?:在|正在|最近在)(?:学|學|考|攒钱|攢錢|存钱|存錢|备考|備考|准备|準備|减肥|減肥|健身|戒).*)$"),
    "studying": re.compile(r"^(?P<x>我(?:在|正在|还在|還在)?(?:读|讀|念)(?:博|研|硕|碩|本科|大学|大學|高中|初中|.{1,10}(?:博士|硕士|碩士|本科|专业|專業|学位|學位)).*)$"),
    "age": re.compile(r"^(?P<x>我(?:今年|现在|現在)?\s*\d{1,2}\s*(?:岁|歲|周岁|週歲).*|我今年\s*\d{1,2}(?!\d)(?:\s*(?:了|啦))?)$"),
    "named-own": re.compile(
        r"^(?P<x>我(?:家|的|家的)(?!名字)[\u4e00-\u9fff]{1,4}?(?:叫|名字叫|的名字是)[^，,。？?]{1,12}.*)$"
    ),
    "hometown": re.compile(r"^(?P<x>(?:我的)?老家(?:是|在).+)$"),
    "uses": re.compile(
        r"^(?P<x>我(?:平时|平時|一般|主要|日常|一直|现在|現在)?(?:用|使用|开|開|骑|騎)(?:的是)?\s*(?:[A-Za-z][\w.+# -]*|电车|電車|油车|油車|"
        r"自行车|自行車|电动车|電動車|Mac|Windows|Linux).*)$"
    ),
    "speaks": re.compile(r"^(?P<x>我(?:会|會|能|只会|只會)?(?:说|說|讲|講)[\u4e00-\u9fff]{0,8}?(?:话|話|语|語|文).*)$"),
    "leads": re.compile(
        r"^(?P<x>我(?:带|帶|管|负责|負責|维护|維護|主导|主導|领导|領導)(?:着|著)?(?:一个|一個|几个|幾個)?[^，,。]{2,20}"
        r"(?:组|組|团队|團隊|项目|項目|服务|服務|系统|系統|模块|模塊).*)$"
    ),
    "moved": re.compile(r"^(?P<x>我(?![们們])[^，,。]{0,10}?(?:搬到|搬去|搬来|搬來|定居|住到|调到|調到).+)$"),
    "joined": re.compile(r"^(?P<x>我(?![们們])[^，,。]{0,12}?在[^，,。]{1,20}?(?:工作|上班|任职|任職|实习|實習|做|搞|负责|負責).*)$"),
    "lacks": re.compile(r"^(?P<x>我(?:没有|沒有|不会|不會|不能)(?:车|車|驾照|駕照|开车|開車|游泳|喝酒|吃辣|骑车|騎車).*)$"),
    "leads-product": re.compile(r"^(?P<x>我(?:负责|負責)[^，,。]{0,8}?(?:客户端|客戶端|App|APP|app|产品线|產品線|业务|業務)[^，,。]{0,6})$"),
    "years": re.compile(r"^(?P<x>我(?:写|寫|做|用|学|學|干|幹)了?(?:大概|差不多|快|将近|將近|十几|十幾)?[\d一二两兩三四五六七八九十]+年.+)$"),
    "switched": re.compile(r"^(?P<x>我(?![们們])[^，,。]{0,6}?(?:从|從).+?(?:换到|換到|换成|換成|转到|轉到|切到|切换到|切換到|改用).+)$"),
    "zone": re.compile(r"^(?P<x>我(?:在|位于|位於)(?:东|東|西)[一二三四五六七八九十]+区|我在\s*(?:UTC|GMT)[+-]?\d*.*|我在东八区.*|我在東八區.*)$"),
    "sole": re.compile(r"^(?P<x>.{2,20}?(?:只有|就)我(?:一个人|一個人)?在(?:维护|維護|负责|負責|管).*)$"),
    "surname": re.compile(r"^(?P<x>我(?:的)?(?:房东|房東|老板|老闆|领导|領導|导师|導師|医生|醫生|同事|邻居|鄰居|会计|會計)(?:姓|叫).+)$"),
    "senses": re.compile(
        r"^(?P<x>我(?:的)?(?:听力|聽力|视力|視力|眼睛|耳朵|腰|膝盖|膝蓋|胃|心脏|心臟|身体|身體|颈椎|頸椎)(?:不太好|不好|有问题|有問題|"
        r"比较差|比較差|不行).*)$"
    ),
    "team-move": re.compile(r"^(?P<x>我(?:刚|剛)?(?:转到|轉到|调到|調到|换到|換到|加入了?)[^，,。]{1,12}?(?:组|組|团队|團隊|部门|部門)了?)$"),
    "both-are": re.compile(r"^(?P<x>我和[^，,。]{1,4}?都是.{2,20})$"),
    "kin-school": re.compile(
        r"^(?P<x>(?:我)?(?:的)?(?:女儿|女兒|儿子|兒子|孩子|老大|老二)[^，,。]{0,6}?(?:上|读|讀|念)(?:小学|小學|幼儿园|幼兒園|初中|高中|大学|大學)?"
        r"[^，,。]{0,4}?(?:[一二三四五六]年级|[一二三四五六]年級|大班|中班|小班|初[一二三]|高[一二三]|大[一二三四]).*)$"
    ),
    "kin-weekly": re.compile(
        r"^(?P<x>(?:我)?(?:的)?(?:女儿|女兒|儿子|兒子|孩子|老婆|老公|爸爸|妈妈|媽媽)[^，,。]{0,4}?(?:每)?(?:周|週|星期)[一二三四五六日天]"
        r"(?:(?:和|、|跟)(?:周|週|星期)?[一二三四五六日天])*[^，,。]{0,6}?(?:有|上|去|要)[^，,。]{1,10})$"
    ),
    "unfamiliar": re.compile(r"^(?P<x>我(?:不太|不怎么|不怎麼|不)(?:熟|熟悉|懂|会|會)\s*[A-Za-z\u4e00-\u9fff][^，,。]{0,15})$"),
    "diagnosed": re.compile(
        r"^(?P<x>我(?:的)?(?:爸|妈|媽|爸爸|妈妈|媽媽|老公|老婆|孩子|儿子|兒子|女儿|女兒)?[^，,。]{0,4}?(?:查出|确诊|確診|诊断出|診斷出).+)$"
    ),
    "budget": re.compile(r"^(?P<x>(?:我的?|今年|每个月|每個月|每月)[^，,。]{0,10}?预算(?:是|有|大概是|控制在)[^，,。]{1,12})$"),
    "expecting": re.compile(r"^(?P<x>我(?:怀孕|懷孕|有孕|在哺乳期|在备孕|在備孕|刚生完|剛生完).*)$"),
    "does": re.compile(r"^(?P<x>我(?:主要|平时|平時|一般|本职|本職)(?:是)?(?:做|搞|写|寫|负责|負責)(?!了)[^，,。]{2,12})$"),
    "newcomer": re.compile(r"^(?P<x>我(?:刚|剛)(?:来|來|加入|入职|入職|到|接手)[^，,。]{0,12}.*)$"),
    "shift": re.compile(r"^(?P<x>我(?:上|值|倒|常上|经常上|經常上)(?:夜班|白班|早班|晚班|三班|倒班|班).*)$"),
    "trait": re.compile(
        r"^(?P<x>我(?:不太|不|很|比较|比較|特别|特別)?(?:擅长|擅長|怕|害怕|容易|恐高|晕车|暈車|晕船|暈船|社恐|内向|內向|外向).{1,30})$"
    ),
    "condition": re.compile(r"^(?P<x>我(?:有|患有|得了|得过|得過)[\u4e00-\u9fff]{1,6}?(?:病|症|炎|压|壓|糖|癌|喘|过敏|過敏)).*$"),
    "kin": re.compile(
        r"^(?P<x>我(?:的)?(?:儿子|兒子|女儿|女兒|老婆|老公|妻子|丈夫|孩子|妈妈|媽媽|爸爸|父母|爱人|愛人|宝宝|寶寶|对象|對象|"
        r"男朋友|女朋友|伴侣|伴侶|先生|太太|哥哥|姐姐|弟弟|妹妹)"
        r"(?!.*(?:吗|嗎|呢|怎么|怎麼|什么|什麼)).{3,})$"
    ),
    "family": re.compile(
        r"^(?P<x>我(?:家|们家|們家)?有(?:一|两|兩|三|四|五|\d+)(?:个|個|只|隻|条|條|位|名)"
        r"(?:[\u4e00-\u9fff]{0,3})(?:孩子|女儿|女兒|儿子|兒子|猫|貓|狗|宠物|寵物|兄弟|姐妹|哥哥|姐姐|弟弟|妹妹).*)$"
    ),
}
_ZH_ADVERB_AFTER_I = re.compile(r"^我(?:最近|现在|現在|目前|这阵子|這陣子|这段时间|這段時間|平时|平時|一般|通常)(?=\S)")
_ZH_ROLE = re.compile(
    r"工程师|工程師|开发|開發|程序员|程序員|科学家|科學家|设计师|設計師|设计|設計|经理|經理|学生|學生|研究员|研究員|"
    r"分析师|分析師|架构师|架構師|产品|產品|运维|運維|老师|老師|教授|医生|醫生|护士|護士|律师|律師|新手|初学者|初學者|"
    r"负责人|負責人|创始人|創始人|作者|维护者|維護者|博士|硕士|碩士|本科|者$|做.+的|负责.+的|負責.+的|后端|後端|前端|"
    r"全栈|全棧|测试|測試|会计|會計|妈妈|媽媽|爸爸|家长|家長|DevOps|SRE|maintainer|owner|tech lead|engineer|developer|"
    r"designer|\bPM\b|\bQA\b|intern|从.+(?:转|轉)|從.+(?:转|轉)|夜猫子|夜貓子|早起|"
    r"早鸟|早鳥|内向|內向|外向|社恐|左撇子|素食者|[\u4e00-\u9fff]{1,4}(?:师|師|员|員|家|长|長|匠|手)(?=$|[，,。的])",
    re.I,
)


def rule_identity(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    s = re.sub(r"^I(?:'ve| have) got\b", "I have", re.sub(r"^I've\b", "I have", s))
    s = plain_effort(s)
    for verb, pat in _IDENTITY_EN.items():
        m = pat.match(s)
        if not m:
            continue
        x = tidy(m.group("x"))
        if verb in ("kin", "recurring", "valued") and has_relative_date(x):
            continue  # "my daughter's recital is on December 19" is a dated event
        if verb in ("valued", "own", "recurring", "has-named") and is_pointer(s):
            continue  # "my scans are in the Drive folder 'Tax 2025'": where they are is a reference
        if verb == "recurring" and x.lower().startswith("our") and WORK_NOUN.search(x):
            fact = sentence_case(x)
            return Found("context", "project", "project", x, fact, fact, how=HOW["decision"])
        if verb == "is" and re.match(r"^the (?:only )?(?:one|person)\b[^,]{0,30}?\b(?:who|that)\b", x, re.I):
            pass
        elif verb == "is":
            bare = re.sub(r"^(?:a|an|the|one of the|one of)\s+", "", x, flags=re.I)
            head = " ".join(re.split(r"[,;(]| and | who | which | so ", bare)[0].split()[:5])
            team = re.match(r"^(?:on|in|with|part of)\s+(?:the|our|a|an)\s+[\w -]{2,40}?\b(?:team|squad|group|"
                            r"department|org|crew|band|choir|orchestra|club|league)\b", bare, re.I)
            suffix_role = x.lower().startswith(("a ", "an ")) and _ROLE_SUFFIX.search(head) is not None
            if not team and (_NOT_IDENTITY.match(bare) or not (_ROLE_WORDS.search(head) or _STABLE_STATE.match(bare)
                                                               or suffix_role)):
                continue
            x = re.split(r"(?:,|(?<!\s))\s+so\s+", x)[0]
        fact = f"User's {third_person(x)}" if verb in ("own", "valued") else f"User {verb} {third_person(x)}"
        if verb == "named":
            rest = s[m.end() :].strip(" ,.;")
            x = f"{x}, {rest}" if rest else x
            fact = f"User is called {third_person(x)}"
        if verb == "aged":
            fact = f"User is {third_person(x)}"
        if verb == "gets":
            said, _, rest = x.partition(" ")  # "get seasick easily" / "am afraid of …": the verb is in x already
            head = "is" if said.lower() in ("am", "'m") else verb_3rd(said)
            fact = f"User {head} {third_person(rest)}".strip()
        if verb == "condition":
            fact = "User has " + third_person(re.split(r",\s*(?:so|and|but)\b", x)[0])
        if verb in ("kin", "recurring", "their-kin", "named-kin"):
            fact = sentence_case(third_person(re.sub(r"^my\b", "User's", x, flags=re.I)))
        if verb in ("has", "ailment"):
            fact = "User has " + third_person(re.split(r"(?:,|(?<!\s))\s+so\s+", x)[0])
        if verb == "situation":
            fact = "User " + third_person(re.sub(r"^'ve\s+", "has ", x))
        if verb == "home":
            fact = "User's " + third_person(re.sub(r"^(?:our|my)\s+", "", x, flags=re.I))
        if verb == "cannot":
            fact = "User " + re.sub(r"^(?:don't|do not)\b", "doesn't", third_person(re.split(r"(?:,|(?<!\s))\s+so\s+", x)[0]))
        if verb == "diagnosed":
            fact = sentence_case(third_person(re.sub(r"^my\b", "User's", re.sub(r"^i\b", "User", x, flags=re.I), flags=re.I)))
        if verb == "zone":
            fact = f"User is in {third_person(x)}"
        if verb == "has-named":
            if WORK_NOUN.search(x) or re.search(r"\b(?:service|repo|app|bot|project|tool|server|cluster)\b", x, re.I):
                continue  # "we have a service called Atlas" is the work, not the household
            said = x.split(" ", 1)[0]
            said = said if said.lower().endswith("ed") or said.lower() == "got" else verb_3rd(said)
            fact = f"User {said} {third_person(x.partition(' ')[2])}"
        if verb == "habitual":
            x = re.split(r",\s*(?:so|and|but)\b", x)[0]
        if verb in ("maintains", "weekly", "habitual", "plays"):  # "I walk the dog daily": the verb is in x
            fact = f"User {verb_3rd(x.split(' ', 1)[0])} {third_person(x.partition(' ')[2])}".strip()
        return Found("identity", "user", "user", x, fact, fact, how=HOW["identity"])
    if not has_cjk(s):
        return None
    s = re.sub(r"^(?:平时|平時|一般|通常|现在|現在|目前|其实|其實|本职|本職)[，,]?(?=我)", "", s)
    # "我最近在备孕" states what "我在备孕" does: a time adverb after 我 is tried without it too
    plain = _ZH_ADVERB_AFTER_I.sub("我", s, count=1)
    for kind, pat in _IDENTITY_ZH.items():
        m = pat.match(s) or (pat.match(plain) if plain != s else None)
        if not m:
            continue
        x = tidy(m.group("x"))
        if kind == "kin" and has_relative_date(x):
            continue
        if kind == "is" and not _ZH_ROLE.search(re.split(r"[，,。]", x)[0]):
            continue
        if not content_ok(x):
            return None
        fact = "用户" + third_person(x) if kind in ("is", "called", "named", "works", "lives") else third_person(x)
        return Found("identity", "user", "user", x, fact, fact, how=HOW["identity"])
    return None


__all__ = ["WORK_NOUN", "rule_identity"]
