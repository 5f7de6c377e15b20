"""Secrets recognised by their shape alone: vendor prefixes, key armour, fixed formats.

Each pattern has anchors (lower-case literals a match starts at) and is only run anchored at
them. Token patterns refuse to start inside a longer identifier, except right after a JSON
escape (``\\n``, ``\\t``), and never span a quote or a backslash, so redacting JSONL transcript
text keeps every line valid JSON.
"""

from __future__ import annotations

from memory.redact.engine import Anchors, Lazy, Span, register
from memory.redact.values import is_placeholder_token, looks_random

# Token start: not inside a longer identifier, except right after a JSON escape (``\n``, ``\t``)
_IDENT_BEFORE = r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))"
_IDENT_AFTER = r"(?![A-Za-z0-9_-])"


class _Pattern:
    """One shape (a plain class: no dataclasses import on the hook path)."""

    __slots__ = ("anchors", "back", "kind", "regex", "value_group")

    def __init__(
        self,
        kind: str,
        regex: str,
        anchors: tuple[str, ...],
        value_group: str | None = None,
        back: int = 0,
    ) -> None:
        self.kind = kind
        self.regex = Lazy(regex)
        self.anchors = anchors
        self.value_group = value_group
        self.back = back  # the anchor is inside the token: the match starts up to this far back


def _token(kind: str, body: str, *anchors: str, back: int = 0) -> _Pattern:
    return _Pattern(kind, rf"{_IDENT_BEFORE}{body}{_IDENT_AFTER}", anchors, back=back)


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _token_start(text: str, pos: int, back: int) -> int:
    start = pos
    while start > pos - back and start > 0 and text[start - 1] in _TOKEN_CHARS:
        start -= 1
    return start


# Armour of every private key format: PEM (PKCS#1/#8, EC, DSA, ENCRYPTED), OpenSSH, SSH2 and
# PGP ("PRIVATE KEY BLOCK"). A block cut off before its END line (a tool output truncated by the
# hook) is redacted to the end of its base64 run; a bare BEGIN line in prose is not a key.
_ARMOUR_BEGIN = (
    r"-----BEGIN (?:(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V\d)-----"
)
_ARMOUR_END = r"-----END (?:(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V\d)-----"
_ARMOUR_BODY_RUN = r"(?:[A-Za-z0-9+/=\s:,.()@<>_-]|\\[nrt])"

PATTERNS: tuple[_Pattern, ...] = (
    _Pattern(
        "private-key",
        rf"{_ARMOUR_BEGIN}(?:[^\"]{{0,65536}}?{_ARMOUR_END}|{_ARMOUR_BODY_RUN}{{64,65536}})",
        ("-----begin ",),
    ),
    _Pattern("anthropic-key", rf"{_IDENT_BEFORE}sk-ant-[A-Za-z0-9_-]{{20,}}", ("sk-",)),
    _token("openai-key", r"sk-(?!ant-)(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}", "sk-"),
    _token(
        "github-token",
        r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        "gh",
        "github_pat_",
    ),
    _token("npm-token", r"npm_[A-Za-z0-9]{36}", "npm_"),
    _token("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{40,}", "pypi-"),
    _token(
        "gitlab-token",
        r"gl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{20,}",
        "glpat-",
        "gldt-",
        "glrt-",
        "glptt-",
        "glsoat-",
    ),
    # hf_ and 34 letters and digits: a token may have no digit, but never one case only
    _token(
        "huggingface-token",
        r"hf_(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z0-9])[A-Za-z0-9]{30,}",
        "hf_",
    ),
    _token("stripe-key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "sk_", "rk_"),
    _token("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{24,}", "whsec_"),
    _token("sendgrid-key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", "sg."),
    _Pattern(
        "aws-access-key",
        r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])",
        ("akia", "asia"),
    ),
    _token("google-api-key", r"AIza[0-9A-Za-z_-]{35}", "aiza"),
    _token("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{28}", "gocspx-"),
    _token("slack-token", r"xox[abposrecd]-[0-9A-Za-z%-]{10,}", "xox"),
    _token("slack-token", r"xapp-[0-9]-[A-Za-z0-9-]{20,}", "xapp-"),
    _token("digitalocean-token", r"do[por]_v1_[a-f0-9]{64}", "dop_v1_", "doo_v1_", "dor_v1_"),
    _token("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shp"),
    _token("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", "hvs.", "hvb.", "hvr."),
    _token("databricks-token", r"dapi[a-f0-9]{32}(?:-[0-9])?", "dapi"),
    _token("mailgun-key", r"key-[0-9a-z]{32}", "key-"),
    _token("mailchimp-key", r"[0-9a-f]{32}-us[0-9]{1,2}", "-us", back=32),
    _token("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "age-secret-key-"),
    _token("docker-token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,}", "dckr_"),
    # Chinese clouds: Alibaba Cloud AccessKey ids (LTAI), Tencent Cloud SecretIds (AKID),
    # Volcengine access keys (AKLT); their secrets are caught by context (AccessKeySecret…)
    _token("aliyun-access-key", r"LTAI(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{12,30}", "ltai"),
    _token("tencent-secret-id", r"AKID(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{13,40}", "akid"),
    _token("volcengine-access-key", r"AKLT[A-Za-z0-9_-]{30,60}", "aklt"),
    _token("google-oauth-token", r"ya29\.[A-Za-z0-9_-]{30,}", "ya29."),
    _token("google-refresh-token", r"1//0[A-Za-z0-9_-]{40,}", "1//0"),
    _token("square-token", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}", "sq0atp-", "sq0csp-"),
    _token("twilio-api-key", r"SK[0-9a-fA-F]{32}", "sk"),
    _token("linear-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}", "lin_api_", "lin_oauth_"),
    _token("notion-token", r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})", "secret_", "ntn_"),
    _token("postman-key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "pmak-"),
    _token("grafana-token", r"(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
           "glc_", "glsa_"),
    _token("sentry-token", r"(?:sntrys_[A-Za-z0-9+/=_-]{40,}|sntryu_[a-f0-9]{64})", "sntry"),
    _token("doppler-token", r"dp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_.-]{40,}", "dp."),
    _token("pulumi-token", r"pul-[a-f0-9]{40}", "pul-"),
    _token("groq-key", r"gsk_[A-Za-z0-9]{40,}", "gsk_"),
    _token("xai-key", r"xai-[A-Za-z0-9]{60,}", "xai-"),
    _token("replicate-token", r"r8_[A-Za-z0-9]{30,}", "r8_"),
    _token("perplexity-key", r"pplx-[A-Za-z0-9]{40,}", "pplx-"),
    _token("figma-token", r"figd_[A-Za-z0-9_-]{40,}", "figd_"),
    _token("netlify-token", r"nfp_[A-Za-z0-9]{36,}", "nfp_"),
    _token("flyio-token", r"fo1_[A-Za-z0-9_-]{40,}", "fo1_"),
    _Pattern("flyio-token", r"FlyV1 fm[12][ar]?_[A-Za-z0-9+/=_-]{20,}", ("flyv1 ",)),
    _token("honeycomb-key", r"hc[ax][im]k_[A-Za-z0-9]{40,}", "hcaik_", "hcxik_", "hcamk_", "hcxmk_"),
    _token("heroku-key", r"HRKU-[A-Za-z0-9_-]{30,}", "hrku-"),
    _token("rubygems-key", r"rubygems_[a-f0-9]{48}", "rubygems_"),
    _token("planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}", "pscale_"),
    _token("atlassian-token", r"ATATT3[A-Za-z0-9_=-]{50,}", "atatt3"),
    # Terraform Cloud / Enterprise API tokens: <14>.atlasv1.<60+>
    _token("terraform-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}", ".atlasv1.", back=14),
    # Firebase Cloud Messaging legacy server keys: <key id>:APA91b<~134>
    _token("fcm-server-key", r"[A-Za-z0-9_-]{7,12}:APA91b[A-Za-z0-9_-]{100,}", ":apa91b", back=12),
    _token("pinecone-key", r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}", "pcsk_"),
    _token("supabase-token", r"sbp_[a-f0-9]{40}", "sbp_"),
    _token("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "pat"),
    _token("newrelic-key", r"NRAK-[A-Z0-9]{27}", "nrak-"),
    # Entra ID (Azure AD) client secrets: 3 characters, a digit, "Q~", then 31-34 of the same
    # alphabet (letters, digits, "_~.-"), 40 in all
    _Pattern(
        "azure-client-secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        ("q~",),
        back=4,
    ),
    # The Wi-Fi QR code payload (WIFI:T:WPA;S:<ssid>;P:<password>;;), fields in any order
    _Pattern(
        "password",
        r"WIFI:(?:[A-Za-z]:(?:[^;\\\n]|\\.){0,64};)*?P:(?P<value>(?:[^;\\\n]|\\.){1,63});",
        ("wifi:",),
        value_group="value",
    ),
    _token("mapbox-secret-token", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", "sk.eyj"),
    # A header and a payload, each base64url JSON ("eyJ" is '{"'): a token cut after its payload
    # (a shortened quote or log line) still holds its claims, so the signature is optional.
    _Pattern(
        "jwt",
        rf"{_IDENT_BEFORE}eyJ[A-Za-z0-9_-]{{10,}}+\.eyJ[A-Za-z0-9_-]{{4,}}+(?:\.[A-Za-z0-9_-]*+)?",
        ("eyj",),
    ),
    _Pattern(
        "webhook-url",
        r"(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{16,}"
        r"|discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_-]{20,}"
        r"|outlook\.office\.com/webhook/[A-Za-z0-9@/_-]{20,}"
        r"|[a-z0-9.-]*webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{20,}"
        # Feishu and Lark custom bots: the hook's path segment (a UUID) is the secret
        r"|open\.(?:feishu\.cn|larksuite\.com|larkoffice\.com)/open-apis/bot/v2/hook/[A-Za-z0-9-]{16,}"
        # WeCom (企业微信) group bots and DingTalk robots: the key in the query
        r"|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=[A-Za-z0-9-]{16,}"
        r"|oapi\.dingtalk\.com/robot/send\?access_token=[A-Za-z0-9]{16,}"
        r"|chat\.googleapis\.com/v1/spaces/[A-Za-z0-9_-]+/messages\?key=[A-Za-z0-9_-]{20,}"
        r"(?:&token=[A-Za-z0-9_%-]{20,})?"
        r"|hooks\.zapier\.com/hooks/catch/[0-9]+/[A-Za-z0-9]{4,}"
        r"|maker\.ifttt\.com/trigger/[A-Za-z0-9_-]+/with/key/[A-Za-z0-9_-]{16,})",
        (
            "hooks.slack.com/",
            "discord.com/api/webhooks/",
            "discordapp.com/api/webhooks/",
            "outlook.office.com/webhook/",
            "webhook.office.com/webhookb2/",
            "open.feishu.cn/",
            "open.larksuite.com/",
            "open.larkoffice.com/",
            "qyapi.weixin.qq.com/cgi-bin/webhook/",
            "oapi.dingtalk.com/robot/send",
            "chat.googleapis.com/v1/spaces/",
            "hooks.zapier.com/hooks/catch/",
            "maker.ifttt.com/trigger/",
        ),
    ),
    _Pattern(
        "id-number",
        r"(?:(?i:passport(?:\s+(?:number|no\.?|#))?|social\s+security\s+number|ssn)"
        r"|护照号码?|身份证号码?|社保号)"
        r"(?:\s*(?:[:=：#]|是|is)\s*|\s+)(?P<value>[A-Za-z]{0,3}[0-9][0-9 -]{4,18}[0-9Xx])(?![A-Za-z0-9])",
        ("passport", "social", "ssn", "护照号", "身份证号", "社保号"),
        value_group="value",
    ),
)

_PUBLIC_NAME = Lazy(
    r"(?i:public|publishable|anon)[A-Za-z0-9_]{0,40}\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?$"
)
"""``NEXT_PUBLIC_SUPABASE_ANON_KEY=<jwt>``: a token its name says is given to every browser."""
_FIREBASE_WEB = Lazy(r"(?i)authDomain|firebaseapp\.com")


def firebase_web_key(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is a Google API key in a Firebase web config (next to its
    ``authDomain``): it ships in every page that uses Firebase, public by design."""
    return text.startswith("AIza", start) and _FIREBASE_WEB.search(
        text, max(0, start - 400), min(len(text), end + 400)
    ) is not None
_KEY_MATERIAL = Lazy(r"[A-Za-z0-9+/]{40}|[0-9a-f]{32}(?:\s|\\n)")  # base64, or OpenVPN's hex
_URL_SCHEME = Lazy(r"[A-Za-z][A-Za-z0-9+.-]{1,15}://$")


def _detect(pat: _Pattern, anchors: Anchors) -> list[Span]:
    text = anchors.text
    spans: list[Span] = []
    last = 0
    for pos in anchors.positions(pat.anchors):
        if pos < last:
            continue
        m = pat.regex.match(text, _token_start(text, pos, pat.back) if pat.back else pos)
        if m is None:
            continue
        start, end = m.span(pat.value_group) if pat.value_group else m.span()
        if pat.kind == "private-key":
            if _KEY_MATERIAL.search(text, start, end) is None:
                last = end  # "-----BEGIN PRIVATE KEY-----\n...\n-----END …" in docs
                continue
        elif (
            (pat.value_group is None and is_placeholder_token(text[start:end]))
            or (pat.kind == "google-api-key" and firebase_web_key(text, start, end))
            or (pat.kind == "jwt" and _PUBLIC_NAME.search(text, max(0, start - 80), start))
        ):
            last = end
            continue
        if pat.kind == "webhook-url":  # the scheme goes too: the marker stands for the URL
            scheme = _URL_SCHEME.search(text, max(0, start - 16), start)
            if scheme is not None:
                start = scheme.start()
        spans.append((start, end, pat.kind))
        last = end
    return spans


def detect_shapes(anchors: Anchors) -> list[Span]:
    """Every fixed-shape secret, patterns applied one after the other on the same text.

    Spans of later patterns that overlap earlier ones are dropped by the engine, so the order
    of :data:`PATTERNS` is the priority (a key block first: its body may hold anything).
    """
    spans: list[Span] = []
    for pat in PATTERNS:
        spans.extend(_detect(pat, anchors))
    return spans


def _telegram(anchors: Anchors) -> list[Span]:
    """Telegram bot tokens, ``<bot id>:AA<33 chars>``, alone or in a Bot API URL
    (``/bot<token>/``): the bot id goes with the secret."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions((":aa",)):
        if text[pos + 1 : pos + 3] != "AA":
            continue
        start = pos
        while start > 0 and text[start - 1].isascii() and text[start - 1].isdigit():
            start -= 1
        # the Bot API puts the token in the path: https://api.telegram.org/bot<token>/getMe
        after_bot = text[start - 4 : start].lower() == "/bot"
        if not 6 <= pos - start <= 12 or (
            start > 0
            and not after_bot
            and (text[start - 1].isalnum() and text[start - 2 : start] not in ("\\n", "\\t"))
        ):
            continue
        end = pos + 1
        while end < len(text) and (
            text[end].isascii() and (text[end].isalnum() or text[end] in "_-")
        ):
            end += 1
        if end - pos - 1 == 35:
            spans.append((start, end, "telegram-bot-token"))
    return spans


_SEGMENT = r"[^\s/?#\"'`<>\\]+"
_HOOK_PATH = Lazy(rf"(?i:web)?hooks?/(?P<rest>(?:{_SEGMENT}/){{0,3}}{_SEGMENT})")
_HOOK_HOST = Lazy(rf"hooks\.[a-z0-9-]+(?:\.[a-z0-9-]+)+/(?P<rest>(?:{_SEGMENT}/){{0,3}}{_SEGMENT})")
_SEGMENT_END = ".,;:!?)]}"
_UUID_SEGMENT = Lazy(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _webhook_paths(anchors: Anchors) -> list[Span]:
    """Any provider's incoming webhook, self-hosted too (Mattermost, Rocket.Chat, Gitea,
    n8n…): in a URL's ``/hooks/…`` or ``/webhook(s)/…`` path, or the path on a ``hooks.``
    host, the segments that look generated (or are UUIDs) are the secret, whatever the others
    hold (an id written as a template, ``{id}``); names such as ``/hooks/deploy`` stay."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("/hooks/", "/hook/", "/webhooks/", "/webhook/", "//hooks.")):
        if text.startswith("//hooks.", pos):
            m = _HOOK_HOST.match(text, pos + 2)
        elif text.rfind("://", max(0, pos - 120), pos) == -1:
            continue  # not in a URL
        else:
            m = _HOOK_PATH.match(text, pos + 1)
        if m is None:
            continue
        at = m.start("rest")
        for segment in m.group("rest").split("/"):
            whole = len(segment)
            segment = segment.rstrip(_SEGMENT_END)
            if _UUID_SEGMENT.match(segment) or (
                looks_random(segment) and not is_placeholder_token(segment)
            ):
                spans.append((at, at + len(segment), "webhook-secret"))
            at += whole + 1
    return spans


register(*(a for pat in PATTERNS for a in pat.anchors), ":aa")
register("/hooks/", "/hook/", "/webhooks/", "/webhook/", "//hooks.")
SHAPE_DETECTORS = (detect_shapes, _telegram, _webhook_paths)
