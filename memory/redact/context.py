"""Secrets recognised by what surrounds them: a credential word, then a value.

The word is read as an identifier (``DB_PASSWORD``, ``dbPassword``, ``private_key_id``,
``X-API-Key``) or a word of prose ("password", "API key", "密码", "口令"); its last part says the
kind. The connector is an assignment (``=``, ``:``, ``：``), a phrase ("is", "was set to",
"for the admin user is", "是", "为", "设置为") or, for a value that passes the stricter test,
just a space. The value is judged by :mod:`memory.redact.values`. Around that sit the other
context shapes: user/password pairs ("the login is admin / S3cr3tPass", "账号 admin 密码
x"), credentials in URLs and connection strings, ``Authorization`` headers, AWS secret keys
near AWS context, and random-looking tokens near a credential word.

Values never span a quote or a backslash (JSONL stays valid) or CJK text and full-width
punctuation ("密码：abc12345，记得改" ends at the comma).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from memory.redact.commands import COMMAND_DETECTORS
from memory.redact.engine import Anchors, Lazy, Span, register
from memory.redact.shapes import firebase_web_key
from memory.redact.values import (
    all_classes,
    base64_of_text,
    entropy,
    followed_by_unit,
    generated_one_case,
    is_placeholder,
    is_secret_value,
    looks_random,
    made_up_letters,
    reads_as_non_secret,
)

_CJK = "\u3000-\u303f\uff00-\uffef\u4e00-\u9fff"
_IDCHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
_STOP = frozenset(" \t\r\n\"'`\\,;)[]}>") | frozenset("，。；：、）】」』“”‘’")
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "「": "」", "『": "』"}

# ---------------------------------------------------------------------------- credential words

_PASSWORD_PARTS = frozenset({"password", "passwd", "passphrase", "passcode", "pwd", "psk"})
_ASSIGN_ONLY = {"auth": "token", "sig": "signature"}
_SHORT_PASSWORD = frozenset({"pass", "pw"})  # "pass `x`", "pw is x": only with a made-up value
_SESSION_PARTS = frozenset({"session", "sessionid", "sid", "sess", "jsessionid", "phpsessid"})
_KEY_OWNERS = frozenset(
    {
        "api", "access", "secret", "private", "account", "auth", "master", "signing",
        "encryption", "license", "licence", "client", "app", "service", "subscription",
        "shared", "admin", "deploy", "webhook", "consumer", "wandb", "openai", "anthropic",
        "stripe", "aws", "gcp", "azure", "mailgun", "sendgrid", "twilio", "slack", "github",
        "datadog", "dd", "sentry", "storage", "sas", "hmac", "jwt", "server", "fernet",
        "cipher", "crypt", "crypto", "aes", "enc", "encrypt", "sign", "secure", "root", "session",
        "cookie", "csrf", "oauth", "bot", "fcm", "gcm", "apns", "sms", "payment", "pay",
        "merchant", "partner", "developer", "prod", "production", "live", "personal",
        "integration", "ingest", "ingestion", "management", "unseal", "vault", "decryption",
        "decrypt", "wifi", "wpa", "wpa2", "wpa3", "wep", "network", "psk",
    }
)  # fmt: skip
_SECRET_KEYS = frozenset(
    {
        "secret",
        "private",
        "account",
        "master",
        "encryption",
        "signing",
        "shared",
        "hmac",
        "jwt",
        "session",
        "cookie",
        "storage",
        "primary",
        "secondary",
        "fernet",
        "cipher",
        "crypt",
        "crypto",
        "aes",
        "enc",
        "encrypt",
        "sign",
        "root",
        "csrf",
    }
)
_CJK_WORDS = {
    "密碼": "password",
    "密鑰": "secret",
    "金鑰": "secret",
    "密码": "password",
    "口令": "password",
    "密钥": "secret",
    "秘钥": "secret",
    "令牌": "token",
    "私钥": "secret",
    "授权码": "token",
    "验证码": "pin",
}
_OTHER_WORDS = {
    "passwort": "password", "kennwort": "password", "mot de passe": "password",
    "contraseña": "password", "contrasena": "password", "senha": "password",
    "wachtwoord": "password", "hasło": "password", "haslo": "password", "heslo": "password",
    "şifre": "password", "lösenord": "password", "passord": "password", "adgangskode": "password",
    "salasana": "password", "jelszó": "password", "пароль": "password", "パスワード": "password",
    "비밀번호": "password", "mật khẩu": "password", "トークン": "token", "토큰": "token",
}  # fmt: skip
"""The password (and token) word of other languages: read only with an explicit connector
(``Passwort: …``, ``пароль = …``); a sentence in those languages is not read."""
_OTHER_ANCHORS = tuple({*_OTHER_WORDS, *(w[:1].upper() + w[1:] for w in _OTHER_WORDS)})
"""Lower-casing before the anchor search is ASCII's: a capital outside it is its own anchor."""
_WORD_ANCHORS = (
    "pass", "pwd", "pw", "psk", "pin", "secret", "token", "key", "auth", "sig", "cred", "otp", "mfa",
    # a session word or a code word only before its connector: "sessionId" is on every line of
    # a Claude Code transcript and "code" in most sentences, and every anchor hit costs
    "sessionid=", "sessionid:", "sessid", "sess=", "sess:", "session=", "session:", "sid=",
    "sid:", 'sid"', "_sess", "answer", "code is", "code was", "code:", "code=", "code =", "code：",
    "code for", "code ",
    # a personal access token ("ASANA_PAT=", "the PAT is"), a SIM's PUK, an SNMP community,
    # the AK/SK of Chinese clouds (only as a word of its own: "task", "desk" are not), key
    # stores by their file kind (APPLE_P12_BASE64=)
    "_pat=", "_pat:", "_pat ", '_pat"', "pat ", "pat=", "pat:", "puk", "keypad", "combination",
    "community", "ak", "sk", "p12", "pfx", "pkcs12", "keystore", "certificate", "dockerc",
    "seed",
)  # fmt: skip
_SPLIT = Lazy(r"[._-]+|(?<=[a-z0-9])(?=[A-Z])")
_KEY_BEFORE = Lazy(r"(?:(?<=\\[nrt])|(?<![A-Za-z\\]))([A-Za-z]+)(?:[\s_-]v?\d{1,2})?[\s_-]?$")  # "API v3 key"; not the n of \n
_CJK_OWNER = Lazy(r"[\u4e00-\u9fff][\u4e00-\u9fff ]{0,20}$")  # "地图的 key", "支付 key"
_HASH_BEFORE = Lazy(
    r"\b(?:hash(?:ed)?|sha-?\d*|digest|checksum|md5|fingerprint|length|size|count|hint|salt)"
    r"\s+(?:of\s+)?(?:the\s+|my\s+|your\s+|this\s+|a\s+|an\s+)?(?:[\w-]+\s+)?$",
    re.IGNORECASE,
)
_NOUN_AFTER = Lazy(r"(?:\s*码|\s*碼|\s+(?:[Cc]ode|[Nn]umber|[Pp]hrase|[Ww]ord|[Ss]tring)\b)")
_SET_BEFORE = Lazy(
    r"(?:set|change|changed|reset|update|updated|rotate|rotated)\b[^.\n]{0,30}$", re.IGNORECASE
)
_PROSE = Lazy(
    r"""(?ix)
    (?:\s+(?:for|of|on|at|in|from|to|with)(?:\s+[\w@.'()/-]+){1,5}?)?   # for the admin user
    (?:\s+(?:that\s+|which\s+)?(?:we|i|you|they|he|she|it)(?:\s+[a-z']+){1,3}?(?=\s+(?:is|was)\b))?
                                                      # the password we agreed on is X
    (?:\s*,[^,.\n]{1,30},)?                           # the password, if you need it, is X
    (?:
        \s*[,?]\s*(?:it|that)(?:'s|’s|\s+is|\s+was)\s*:?   # a passphrase, it's "X"; the passphrase? it's "X"
      |
        \s*(?<![A-Za-z])(?:is|was)(?-i:(?:\s+[a-z']+){1,6})\s*:(?=[ \t]|$)   # is still the same one: X
                                                      # (not vault:secret/…: a colon in a token)
      | \s*(?:(?<![A-Za-z])(?:is|was|are|were)|'s|’s)\b   # "is" alone: "this" ends in it
        (?:\s+(?:now|still|just|actually|currently|simply|literally|both|all|set\s+to|changed\s+to|reset\s+to))?
        \s*:?
      | \s+(?:set|changed|reset|updated|rotated)\s+to\s*:?
      | \s+to(?:\s+be)?(?=\s)
      | \s*[:=](?!=)                                  # for jenkins: X
    )\s*
    """
)
_CJK_CONNECTOR = Lazy(
    r"\s*(?:[，,]?\s*(?:就是|都是|是|为|為|等于|设置?[为成]了?|改为|改成了?|换成了?|变成了?|用的是|用的|用|输入|输|填写|填入|填)\s*[：:=]?"
    r"|[：:=])\s*"
)
# "密码昨天改成了 X", "密码我刚改了，新的是 X": a few words of the same sentence, then a connector
_ARN_BEFORE = Lazy(r"\barn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:\d{0,12}:$")  # a resource's name
_CJK_VERB = Lazy(r"[，,]\s*[\u4e00-\u9fff]")  # "，输 X", not ", is"
_CJK_GAP = Lazy(r"[\u4e00-\u9fff，、 ]{1,12}?(?:是|为|為|等于|成了|成)\s*[：:]?\s*")
_CJK_GAP_HASH = Lazy(r"哈希|散列|摘要|校验|长度|位数|提示|规则|策略|要求")
_WIFI_BEFORE = Lazy(r"(?i)\b(?:wi-?fi|wlan|wpa2?|ssid|hotspot)\b[^.\n]{0,40}$")


_NOT_PASS = frozenset({"underpass", "trespass", "overpass"})
_CODE_OWNERS = frozenset(
    {
        "verification", "security", "access", "door", "alarm", "gate", "entry", "lock", "unlock",
        "sms", "otp", "mfa", "auth", "authentication", "login", "confirmation", "passcode",
        "garage", "safe", "keypad", "disarm", "arming", "locker", "padlock", "vault", "building",
        "lobby", "elevator", "apartment", "mailbox", "storage", "bike", "cabinet",
    }
)  # fmt: skip
_ENCODING_SUFFIX = frozenset(
    {"base", "value", "b64", "base64", "hex", "raw", "plain", "plaintext", "cleartext", "str",
     "accessor", "data"}
)  # fmt: skip
_NOT_CREDENTIAL_TOKENS = frozenset(
    {"page", "next", "continuation", "pagination", "cursor", "resume", "sync", "offset",
     "start", "marker", "nextpage", "pageblob"}
)  # fmt: skip
"""``page_token``, ``nextPageToken``, ``continuation_token``: where a list resumes, no secret."""
_PUBLIC_PARTS = frozenset({"public", "publishable", "pub", "anon"})
"""``STRIPE_PUBLISHABLE_KEY``, ``NEXT_PUBLIC_…``, ``mapboxPublicToken``: public by design."""
_KEY_STORE_PARTS = frozenset({"p12", "pfx", "pkcs12", "keystore", "jks"})
_ACCESS_KEY_PARTS = frozenset({"ak", "sk"})
"""The AK/SK pair of Chinese clouds (Baidu, Huawei, Qiniu, Volcengine…): judged by the value."""


def _kind_of(parts: list[str], before: str) -> tuple[str, bool] | None:
    """``(kind, prose allowed)`` for an identifier split in lower-case parts, or None.

    A short word ("pass", "pw", a Wi-Fi "key") allows prose too, but :func:`_value_after` then
    takes only a made-up value (letters with digits): "pass the test" is not a password."""
    if len(parts) > 1 and parts[-1] in _ENCODING_SUFFIX:  # SECRET_KEY_BASE, token_value
        parts = parts[:-1]
    if len(parts) > 1 and parts[-2] + parts[-1] in _PASSWORD_PARTS:  # pass_phrase, pass-code
        parts = [*parts[:-2], parts[-2] + parts[-1]]
    last = parts[-1]
    if len(parts) > 1 and not _PUBLIC_PARTS.isdisjoint(parts[:-1]) and last not in _PASSWORD_PARTS:
        return None
    if last in _KEY_STORE_PARTS:  # APPLE_P12_BASE64=<base64 of a key store>: by its value
        return _KEY_MATERIAL_KIND, False
    if last in _ACCESS_KEY_PARTS:
        return _KEY_MATERIAL_KIND, True
    if last == "pat" and (len(parts) > 1 or not before[-1:].isalnum()):
        return "token", True  # a personal access token
    if last == "certificate":  # an app certificate signs tokens (Agora); a TLS one is public
        said = _KEY_BEFORE.search(before)
        app = parts[-2] if len(parts) > 1 else (said.group(1).lower() if said else "")
        return (_KEY_MATERIAL_KIND, True) if app == "app" else None
    if last == "community" and len(parts) == 1:  # SNMP's community string is its password
        return "password", True
    if last in _PASSWORD_PARTS or (last.endswith(("password", "passwd")) and len(last) <= 16):
        return "password", True
    if last in _SHORT_PASSWORD:
        return "password", True
    if last in _ASSIGN_ONLY:
        return _ASSIGN_ONLY[last], False
    if parts[-2:] == ["amz", "signature"]:  # a presigned URL (a model's "signature" is not)
        return "signature", False
    if parts == ["signature"] and before[-1:] in ("?", "&"):  # ?…&Signature=…: a signed URL's query
        return "signature", False
    if last in _SESSION_PARTS:
        if last == "sid" and len(parts) > 1 and parts[-2] in ("account", "acct", "project"):
            return None  # a Twilio account SID names the account; its auth token is the secret
        return "session", False
    if last in ("pin", "otp", "totp", "mfa", "puk", "keypad", "combination"):  # "the OTP is 492817"
        return "pin", True
    if last == "code":  # "the door code is 4471", "verification code: 552910" (digits only)
        owner = parts[-2] if len(parts) > 1 else None
        if owner is None:
            m = _KEY_BEFORE.search(before)
            owner = m.group(1).lower() if m else None
        return ("pin", True) if owner in _CODE_OWNERS else None
    if last.endswith("pass") and 8 <= len(last) <= 14 and last not in _NOT_PASS:  # requirepass, deststorepass
        return "password", True
    if last.endswith("auth") and 8 <= len(last) <= 14:  # masterauth: a setting's name glued to its word
        return "password", True
    if last == "secret" or (last.endswith("secret") and len(last) <= 14):
        return "secret", True
    if last == "token" or (last.endswith("token") and len(last) <= 14):
        if (len(parts) > 1 and parts[-2] in _NOT_CREDENTIAL_TOKENS) or last[:-5] in _NOT_CREDENTIAL_TOKENS:
            return None
        return "token", True
    if last in ("credential", "credentials", "creds", "dockerconfigjson", "dockercfg"):
        # a pull secret's .dockerconfigjson: base64 of {"auths": {host: {"auth": …}}}
        return "credential", True
    if last == "answer" and _SECURITY_BEFORE.search(" ".join([before[-40:], *parts[:-1]])):
        return _ANSWER_KIND, True  # "the security question answer … is X"
    if last == "id" and (parts[-3:] == ["private", "key", "id"] or parts[-2:-1] == ["secret"]):
        return "secret", False  # an id whose name says it is the secret (an AppRole secret_id)
    if last == "seed":  # a TOTP seed, a wallet's seed: only generated material ("seed: 42" is not)
        return _KEY_MATERIAL_KIND, True
    if last.endswith("key") and last != "key" and last[:-3] in _KEY_OWNERS:
        return ("secret" if last[:-3] in _SECRET_KEYS else "api-key"), False
    if last == "key":
        owner = parts[-2] if len(parts) > 1 else None
        if owner is None:
            m = _KEY_BEFORE.search(before)
            owner = m.group(1).lower() if m else None
        if owner in _KEY_OWNERS:
            return ("secret" if owner in _SECRET_KEYS else "api-key"), True
        if len(parts) == 1 and _WIFI_BEFORE.search(before):  # "wifi is X, key Y"
            return "password", True
        if len(parts) == 1 and _CJK_OWNER.search(before):  # "地图服务的 key：…"
            return "api-key", True
        if len(parts) > 1 and owner not in _PUBLIC_KEY_OWNERS:
            return _KEY_MATERIAL_KIND, False  # FERNET_KEY = <key material>: by its value
        if len(parts) == 1 and owner and owner not in _PUBLIC_KEY_OWNERS | _NOT_OWNERS:
            return _KEY_MATERIAL_KIND, True  # "my Mistral key <key>": a service's key, by its value
        if len(parts) == 1 and owner is None:
            return _KEY_MATERIAL_KIND, False  # "key: <generated>": by its value, with a connector
    return None


def credential_kind(parts: list[str]) -> str | None:
    """The kind of secret a setting's name (split in lower-case parts) says its value is;
    ``key-material`` when only a generated value would make it one."""
    judged = _kind_of(parts, "")
    return judged[0] if judged is not None else None


_LOWER_CODE = Lazy(r"[a-z]{16}")
_HEX_VALUE = Lazy(r"[0-9a-fA-F-]+")
_NAMESPACED = Lazy(r"(?:[a-z][a-z0-9_.-]{0,31}:){2,}(?:[0-9a-fA-F-]{4,}|\d+|[a-z][a-z0-9_-]*)")
"""An identifier of namespace parts, ``<name>:<name>:<hex>`` (``page:v3:<digest>``): a cache or
store key, each part a lower-case name, the last a hex digest, a number or a name."""
_KEYPAD = Lazy(r"(?=(?:[#*]*[0-9]){4})(?=[0-9]*[#*])[0-9#*]{5,12}")  # 4+ digits and a # or *
_ISSUED_CODE = Lazy(r"(?=[A-Z0-9]{4,8}$)[0-9]*[A-Z]+[0-9]+[A-Z]+[A-Z0-9]*|[A-Z]*[0-9]+[A-Z]+[0-9]+[A-Z0-9]*")
_ONE_DIGIT = Lazy(r"(\d)\1{5,}")
_ANSWER_KIND = "security-answer"
_SECURITY_NEAR = Lazy(r"(?i)security|secret|recovery|安全|密保")
_SECURITY_BEFORE = Lazy(r"(?i)\b(?:security|secret|recovery)(?:[\s_-]+questions?)?[\s_-]*$")
_NOT_OWNERS = frozenset(
    {
        "for", "the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this",
        "that", "of", "with", "to", "by", "and", "or", "same", "new", "old", "one", "which",
        "what", "any", "each", "every", "no", "is", "as", "on", "in", "at", "from",
        "sort", "dict", "map", "lookup", "hash", "cache", "registry", "translation", "i18n",
        "primary", "foreign", "unique", "composite", "partition", "config", "settings", "json",
        "yaml", "toml", "env", "arrow", "enter", "escape", "esc", "tab", "shift", "ctrl", "alt",
        "space", "return", "backspace", "delete", "hot", "short", "cut", "music", "major",
        "minor", "answer", "legend", "piano", "room", "house", "car", "door", "spare",
    }
)  # fmt: skip
"""Words before "key" that do not name whose key it is ("for key:", "the arrow key", "a
dict key", "in the key of C"): the next word is no service's key."""
_KEY_MATERIAL_KIND = "key-material"
"""A ``<word>_key`` whose word says nothing: a secret only when assigned generated material."""
_PUBLIC_KEY_OWNERS = frozenset(
    {
        "public", "pub", "publishable", "cache", "foreign", "sort", "partition",
        "idempotency", "object", "route", "lookup", "hash", "row", "index", "unique",
        "composite", "natural", "surrogate", "dedup", "dedupe", "group", "shard", "bucket",
        "cursor", "etag", "content", "checksum", "file", "s3", "dict", "map", "sorting",
        "ssh", "gpg", "pgp", "host", "known", "verify", "verification", "recipient", "site",
    }
)  # fmt: skip


_GENERATED_KINDS = frozenset({"api-key", "token", "secret"})
"""Kinds whose values a program generates: a lower-case word is never one (a password is)."""
_MAX_VALUE = 4096  # an AWS session token is ~1,000 characters: a longer value is cut, not missed
_WORDS_PHRASE = Lazy(r"[A-Za-z]{2,16}+(?:[- ][A-Za-z]{2,16}+){2,7}+")
_JUDGED = 256  # a value is judged by its first characters: every word in a long run is judged


_RUN_STOP = Lazy(r"[ \t\r\n\"'`\\,;)\[\]}>，。；：、）】」』“”‘’\u3000-\u303f\uff00-\uff02\uff07-\uff09\uff0c\uff0e\uff1a-\uff1f\uff3b-\uff3e\uff40\uff5b-\uffef\u4e00-\u9fff]")
_QUERY_STOP = Lazy(r"[ \t\r\n\"'`\\,;)\[\]}>，。；：、）】」』“”‘’\u3000-\u303f\uff00-\uff02\uff07-\uff09\uff0c\uff0e\uff1a-\uff1f\uff3b-\uff3e\uff40\uff5b-\uffef\u4e00-\u9fff&#]")
# full-width symbols (＠＃＄％＆＊＋－＿) and letters are part of a value ("Ro0t＠2026"); full-width
# punctuation (，：！？（）) ends it


class _Runs:
    """Where an unquoted value starting at ``i`` ends (its first stop character, at most
    :data:`_MAX_VALUE` on), remembering how far it looked: credential words repeated inside one
    long run ("sessionid=sessionid=…") would otherwise each scan it again (quadratic)."""

    __slots__ = ("_seen", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._seen: dict[bool, tuple[int, int, bool]] = {}  # query -> (from, to, stopped at to)

    def end(self, i: int, query: bool) -> int:
        n = len(self.text)
        limit = min(n, i + _MAX_VALUE)
        seen = self._seen.get(query)
        if seen is not None and seen[0] <= i <= seen[1]:
            if seen[2]:
                return seen[1]
            start, origin = seen[1], seen[0]
        else:
            start, origin = i, i
        m = (_QUERY_STOP if query else _RUN_STOP).search(self.text, start, limit)
        to = m.start() if m is not None else limit
        self._seen[query] = (origin, to, m is not None or to == n)
        return to


_PREFIXED = ("\"", "'")
_PREFIX_PAIRS = frozenset({"rb", "br", "Rb", "bR", "RB", "BR", "rB", "Br"})
"""A string literal's prefix (bytes, raw), read as the opening of the literal after it."""


def _value_at(
    text: str, i: int, *, query: bool, spaces: bool = False, runs: _Runs | None = None
) -> tuple[int, int, bool] | None:
    """``(start, end, quoted)`` of the value starting at ``i``."""
    n = len(text)
    if i >= n:
        return None
    if text[i] in "bBrRuU" and text[i + 1 : i + 2] in _PREFIXED:
        i += 1  # Python's b"…", r'…': the literal after its prefix
    elif text[i : i + 2] in _PREFIX_PAIRS and text[i + 2 : i + 3] in _PREFIXED:
        i += 2  # rb"…"
    for triple in ('"""', "'''", '\\"\\"\\"'):  # TOML's and Python's, also inside a JSONL string
        if text.startswith(triple, i):
            k = len(triple)
            close3 = text.find(triple, i + k, min(n, i + k + _MAX_VALUE))
            value = text[i + k : close3]
            if close3 == -1 or not value or "\n" in value or "\\" in value:
                return None
            if not spaces and " " in value:
                return None
            return i + k, close3, True
    escaped = text.startswith('\\"', i)
    opener = '"' if escaped else text[i]
    close = _QUOTES.get(opener)
    if close is not None:
        start = i + (2 if escaped else 1)
        end = start
        limit = min(n, start + _MAX_VALUE)
        while end < limit and text[end] != close and text[end] not in '\n"':
            if text[end] == "\\":  # an escape inside the literal: part of the value, whole
                step = _escape(text, end, close, jsonl=escaped)
                if step == 0:
                    break
                end += step
                continue
            end += 1
        if end >= limit or (text[end] != close and not (escaped and text.startswith('\\"', end))):
            return None
        if not spaces and any(c.isspace() for c in text[start:end]):
            return None  # a quoted phrase, not a password (a passphrase may have spaces)
        return (start, end, True) if end > start else None
    end = (runs or _Runs(text)).end(i, query)
    while end > i and text[end - 1] in ".:?(":
        end -= 1
    return (i, end, False) if end > i else None


def _escape(text: str, at: int, close: str, *, jsonl: bool) -> int:
    """How many characters the escape at ``at`` (a backslash) inside a quoted value takes, or 0
    when it ends the value.

    In plain text ``\\"``, ``\\'`` and ``\\\\`` are a quote and a backslash of the value
    (``password = "Ab\\"c9"``). Inside a JSONL string (the literal opened with ``\\"``) the
    source's backslash is ``\\\\``, so ``\\\\\\"`` is an escaped quote of the value and
    ``\\"`` alone closes it; a line break (``\\n``) ends it. Whole escapes go with the value,
    so a marker never leaves half of one."""
    nxt = text[at + 1 : at + 2]
    if not jsonl:
        return 2 if nxt in (close, '"', "'", "\\") else 0
    if nxt != "\\":
        return 0  # \" closes the literal, \n ends the line
    after = text[at + 2 : at + 4]
    if after in ('\\"', "\\\\"):
        return 4
    return 3 if text[at + 2 : at + 3] in ("'", close) else 0


def _identifier(text: str, pos: int, length: int) -> tuple[int, int]:
    """The identifier around ``pos``, looked for at most 65 characters each way (a longer one
    is refused by the caller; unbounded, a run of "keykeykey…" would be quadratic)."""
    start = pos
    lo = max(0, pos - 65)
    while start > lo and text[start - 1] in _IDCHARS:
        start -= 1
    if start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrt":
        pass
    elif start >= 1 and text[start - 1] == "\\" and text[start : start + 1] in ("n", "r", "t"):
        start += 1
    end = pos + length
    n = min(len(text), pos + 65)
    while end < n and text[end] in _IDCHARS:
        end += 1
    while end > pos + length and text[end - 1] in ".-":
        end -= 1
    while start < pos and text[start] in ".-_":
        start += 1
    return start, end


def _connector(
    text: str, end: int, *, prose: bool, cjk: bool, before: str
) -> tuple[int, bool] | None:
    """Where the value starts after a credential word ending at ``end`` and whether the
    connector was explicit (``:``, ``=``, "is", "是"); None when nothing connects a value."""
    i = end
    aside = _ASIDE.match(text, i)  # "密钥（手动输入的那个）：", "password (the new one): "
    if aside is not None:
        i = end = aside.end()
    if text.startswith('\\"', i):
        i += 2
    elif text[i : i + 1] in ('"', "'", "`") and not text.startswith("'s ", i):  # password's X
        i += 1
    if i > end and text[i : i + 1] == "]" and before.endswith(("['", '["', '[\\"')):
        i += 1  # a subscript's quoted key: $cfg['db']['password'] = …, env["API_TOKEN"] = …
    j = i
    while j < len(text) and text[j] in " \t":
        j += 1
    c = text[j : j + 1]
    # <-: R's assignment; ?=: make's assignment when the variable is unset
    arrow = text[j : j + 2] in ("=>", ":=", "->", "<-", "?=") or c == "→"
    if (c in (":", "=", "：") and text[j : j + 2] != "==") or arrow:
        j += 1 if c == "→" or not arrow else 2
        while j < len(text) and text[j] in " \t":
            j += 1
        return j, True
    if cjk:
        m = _CJK_CONNECTOR.match(text, end)
        if m is not None and m.end() > end:
            return m.end(), True
        m = _CJK_GAP.match(text, end)
        if m is not None and _CJK_GAP_HASH.search(m.group(0)) is None:
            return m.end(), False
        if text[end : end + 1].isascii():
            return j, False
        return None
    if not prose:
        return None
    if c in ("，", ","):  # "passphrase，输 X": a word said in a Chinese sentence
        m = _CJK_CONNECTOR.match(text, j) if _CJK_VERB.match(text, j) is not None else None
        if m is not None:
            return m.end(), True
    if c in ("—", "–") or (c == "-" and j > i and text[j + 1 : j + 2] == " "):
        j += 1  # "the unseal pass — X —"
        while j < len(text) and text[j] in " \t":
            j += 1
        return j, False
    m = _PROSE.match(text, i)
    if m is not None:
        said = m.group(0).strip().lower()
        if said not in ("to", "to be") or _SET_BEFORE.search(before):
            return m.end(), True
    if j > i:
        return j, False
    return None


_ASIDE = Lazy(r"[ \t]*(?:（[^）\n]{1,24}）|\((?!\))[^)\n\\]{1,24}\))")
_SESSION_TAIL = Lazy(r"(?:ion(?:id)?|ION(?:ID)?|id|ID)?(?![A-Za-z0-9])")
_CODE_TAIL = Lazy(
    r"[sS]?\\?[\"'`]?(?:[ \t]+for(?:[ \t]+[\w'-]+){1,4}?)?[ \t]*(?:(?i:is|was)\b|[:=：])"
    r"|[ \t]+[#*]?\d{4,8}[#*]?(?![\w.:/-])"
)  # "door code: …", "the gate code for the back door is …"


def _worth_reading(text: str, pos: int) -> bool:
    """A cheap look at the anchors that are mostly something else in a transcript
    ("sessionId" on every Claude Code line, "signature" of thinking blocks, "inside", "code
    review"): only a word that can be a session, signature or code word is read further."""
    head = text[pos : pos + 4].lower()
    if head == "sess":
        return _SESSION_TAIL.match(text, pos + 4) is not None
    if head.startswith("sid"):
        return not text[pos + 3 : pos + 4].isalnum()
    if head.startswith("sig"):
        nxt = text[pos + 3 : pos + 4]
        return (
            not nxt.isalpha()
            or text[max(0, pos - 4) : pos].lower() == "amz-"
            or (text[pos - 1 : pos] in ("?", "&") and text[pos : pos + 10].lower() == "signature=")
        )
    if head == "answ":  # only a security question's answer
        return _SECURITY_NEAR.search(text, max(0, pos - 40), pos) is not None
    if head == "code":
        return _CODE_TAIL.match(text, pos + 4) is not None
    return True


def _json_value_word(text: str, start: int, end: int) -> bool:
    """The word is a JSON string value of its own (``"use":"sig"``, ``"type": "token"``), not a
    key: what follows it is the next member, not its value."""
    escaped = text[start - 2 : start] == '\\"'  # the same inside a JSONL string: \"use\":\"sig\"
    if text[start - 1 : start] != '"' or text[end : end + 1 + escaped] != '\\' * escaped + '"':
        return False
    i = start - 2 - escaped
    while i >= 0 and text[i] in " \t":
        i -= 1
    after = end + 1 + escaped
    return i >= 0 and text[i] == ":" and text[after : after + 1] in (",", "}", "]", "")


def _credential_spans(anchors: Anchors) -> list[Span]:
    text = anchors.text
    runs = _Runs(text)
    spans: list[Span] = []
    done: set[int] = set()
    last = 0
    for pos in anchors.positions(_WORD_ANCHORS):
        if text[pos] in "aAsS" and text[pos + 1 : pos + 2] in ("k", "K") and (
            (pos and text[pos - 1].isalnum())
            or (text[pos + 2 : pos + 3].isascii() and text[pos + 2 : pos + 3].isalpha())
        ):
            continue  # "task", "skip": AK and SK only as words or identifier parts
        if pos < last or not _worth_reading(text, pos):
            continue
        word_start, word_end = _identifier(text, pos, 1)
        if word_start in done:
            continue
        done.add(word_start)
        ident = text[word_start:word_end]
        if not ident or len(ident) > 64 or _json_value_word(text, word_start, word_end):
            continue
        parts = [p.lower() for p in _SPLIT.split(ident) if p]
        if not parts:
            continue
        before = text[max(0, word_start - 40) : word_start]
        arn = text.find("arn:", max(0, word_start - 100), word_start) != -1
        if (arn and _ARN_BEFORE.search(text, max(0, word_start - 100), word_start)) or (
            before.endswith("${") and text.startswith(":?", word_end)
        ):
            continue  # arn:aws:secretsmanager:…:secret:<name>; ${SECRET_KEY:?message if unset}
        judged = _kind_of(parts, before)
        if judged is None:
            continue
        kind, prose = judged
        span = _value_after(
            text, word_start, word_end, kind, prose=prose, cjk=False, before=before, runs=runs
        )
        if span is not None:
            spans.append(span)
            last = span[1]
    for pos in anchors.positions(_OTHER_ANCHORS):
        if (pos and text[pos - 1].isalpha()) or any(s <= pos < e for s, e, _k in spans):
            continue
        low = text[pos : pos + 12].lower()
        word = next((w for w in _OTHER_WORDS if low.startswith(w)), None)
        if word is None or text[pos + len(word) : pos + len(word) + 1].isalpha():
            continue  # inside a longer word: Passwortänderung
        before = text[max(0, pos - 40) : pos]
        span = _value_after(
            text, pos, pos + len(word), _OTHER_WORDS[word], prose=False, cjk=False,
            before=before, runs=runs,
        )  # fmt: skip
        if span is not None:
            spans.append(span)
    spans.sort()
    # Each loop skips the words inside its own last value; a Chinese word before an English
    # one's value is read all the same ("密码为 X" then "DB_PASSWORD=Y": the shared ``last``
    # skipped every Chinese word before the last English value, so a whole transcript's
    # redaction missed what each turn's redaction caught).
    starts = [start for start, _end, _kind in spans]  # in order, apart
    last = 0
    for pos in anchors.positions(tuple(_CJK_WORDS)):
        inside = bisect_right(starts, pos) - 1
        if pos < last or (inside >= 0 and pos < spans[inside][1]):
            continue
        word = next(w for w in _CJK_WORDS if text.startswith(w, pos))
        end = pos + len(word)
        if text.startswith("码", end):  # PIN码, 验证码 handled by its word
            end += 1
        before = text[max(0, pos - 40) : pos]
        span = _value_after(
            text, pos, end, _CJK_WORDS[word], prose=True, cjk=True, before=before, runs=runs
        )
        if span is not None:
            spans.append(span)
            last = span[1]
    return spans


_PIN_FOR = Lazy(r"[ \t]+for(?:[ \t]+[\w'-]+){1,4}?[ \t]+(?P<value>\d{4,8})(?![\w.:/-])")
_SPACED_DIGITS = Lazy(r"\d{2,4}(?:[ -]\d{2,4}){1,3}(?![\d])")  # "door code: 48 17 93"
_SPACED_BASE32 = Lazy(r"(?:[a-z2-7]{4}[ -]){3,7}[a-z2-7]{4}(?![a-z0-9])|(?:[A-Z2-7]{4}[ -]){3,7}[A-Z2-7]{4}(?![A-Z0-9])")
_MIXED_SCRIPT = Lazy(
    r"(?:[A-Za-z0-9\u4e00-\u9fff]+[-_.@#!+*&%~])+[A-Za-z0-9\u4e00-\u9fff!#@%&*]+"
)  # "山海-Tiger-2048": a password of Chinese and Latin parts joined by symbols
_LONGEST = 160
_APP_PASSWORD = Lazy(r"[a-z]{4}(?:[ -][a-z]{4}){3}(?![A-Za-z0-9])")
_CONSONANT_RUN3 = Lazy(r"[bcdfghjklmnpqrstvwxz]{3}")
_APP_BEFORE = Lazy(r"(?i)\bapp(?:lication)?[ -]?(?:specific[ -]?)?pass|应用专用密码|应用密码|专用密码")
_PHRASE = Lazy(r"[A-Za-z0-9][A-Za-z0-9'!?&-]*(?:[ ][A-Za-z0-9][A-Za-z0-9'!?&-]*){2,9}")
_PHRASE_END = Lazy(r"[ \t]*(?:$|\n|\\n|[.,;!?()\"'`，。；！？（]|(?i:and|but|so|when|for|to)\b)")
_FUNCTION_WORDS = frozenset(
    {
        "the", "a", "an", "of", "in", "on", "at", "to", "for", "from", "by", "with", "is", "are",
        "be", "been", "not", "no", "and", "or", "it", "its", "this", "that", "than", "then",
        "should", "must", "can", "will", "would", "could", "may", "needs", "need", "has", "have",
        "stored", "saved", "kept", "set", "sent", "wrong", "expired", "required", "same",
        "different", "there", "here", "what", "which", "who", "where", "how", "too", "very",
        "still", "already", "now", "ever", "never", "only", "just", "least", "most", "more",
        "if", "unless",
    }
)  # fmt: skip


_NONSPACE_RUN = Lazy(r"\S+")


def _phrase_ok(phrase: str, *, passphrase: bool) -> bool:
    """A run of words after "passphrase is"/"password is:" that reads as a phrase someone
    chose, not as a sentence about it: no function word, no unit ("12 characters"), and for a
    password (not a passphrase) a digit or a symbol among the words."""
    words = phrase.lower().split()
    if not 3 <= len(words) <= 10 or any(w.strip("'!?&-") in _FUNCTION_WORDS for w in words[1:]):
        return False
    if words[0] in _FUNCTION_WORDS or reads_as_non_secret(words[0]):
        return False
    if any(followed_by_unit(" " + w, 0) for w in words):
        return False
    return passphrase or any(not c.isalpha() and not c.isspace() for c in phrase)


def _longer_value(text: str, start: int, kind: str, *, word: str) -> Span | None:
    """A value longer than one run: digits in groups, a spaced base32 seed, a password of
    Chinese and Latin parts, a passphrase of several words to the end of its clause. Each is
    read at most :data:`_LONGEST` characters on (a long run repeated stays linear)."""
    if kind == "pin":
        m = _SPACED_DIGITS.match(text, start, start + _LONGEST)
        if m is not None:
            return start, m.end(), kind
        return None
    m = _SPACED_BASE32.match(text, start, start + _LONGEST)
    if m is not None and any(c.isdigit() for c in m.group(0)):
        return start, m.end(), "totp-seed"
    if kind != "password":
        return None
    m = _APP_PASSWORD.match(text, start, start + _LONGEST)  # app passwords: 4 x 4 letters
    if m is not None and (
        _APP_BEFORE.search(text, max(0, start - 60), start) is not None
        or sum(_CONSONANT_RUN3.search(g) is not None for g in m.group(0).replace("-", " ").split()) >= 2
    ):
        return start, m.end(), kind  # random groups ("plmd", "sbto"), not words ("this will")
    m = _MIXED_SCRIPT.match(text, start, start + _LONGEST)
    if m is not None:
        value = m.group(0)
        if any("\u4e00" <= c <= "\u9fff" for c in value) and any(
            c.isascii() and c.isalnum() for c in value
        ):
            return start, m.end(), kind
    m = _PHRASE.match(text, start, start + _LONGEST)
    if m is None:
        return None
    passphrase = "phrase" in word or "短语" in word
    if _PHRASE_END.match(text, m.end()) and _phrase_ok(m.group(0), passphrase=passphrase):
        return start, m.end(), kind
    # the clause goes on after the value ("… battery 9 if the agent asks"): the phrase is the
    # shortest run of three or more words that ends where the clause could (a function word
    # or a phrase end next) and still reads as one
    words = list(_NONSPACE_RUN.finditer(text, start, m.end()))
    for k in range(3, len(words)):
        nxt = words[k].group().lower()
        boundary = nxt in _FUNCTION_WORDS or _PHRASE_END.match(text, words[k - 1].end())
        if boundary and _phrase_ok(text[start : words[k - 1].end()], passphrase=passphrase):
            return start, words[k - 1].end(), kind
    return None


_LITERAL_PAIR = Lazy(r"""["'][ \t]*,[ \t]*(?=["'])""")
_PAIR_LITERAL = Lazy(
    r"""[(\[][ \t]*(?P<q>["'])[^"'\\\n]{1,64}(?P=q)[ \t]*,[ \t]*"""
    r"""(?P<r>["'])(?P<value>[^"'\\\s]{1,256})(?P=r)[ \t]*[)\]]"""
)


_A_NAME = Lazy(r"[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _made_up_literal(value: str, *, digits_ok: bool) -> bool:
    """A literal next to another that reads as a made-up value: letters with digits, letters
    no language spells, not a field's or a setting's name (``refresh_token``, ``API_KEY_V2``,
    as a list of names holds them) nor a media type (``application/json``)."""
    if _A_NAME.rx.fullmatch(value) is not None:
        return False
    if not (any(c.isdigit() for c in value) or made_up_letters(value)):
        return False
    return is_secret_value(value, digits_ok=digits_ok, quoted=False)


_SAYS_EXAMPLE = Lazy(
    r"(?i)(?<![@.\w/-])(?:fake|dummy|fixture|placeholder|examples?|sample|e\.g|not (?:a )?real)"
    r"(?!\w|\.\w)|示例|例如|比如|举例|假的"
)
_SENTENCE_STOP = Lazy(r"[.!?](?=\s|$)|\r?\n|\\n|[。！？；;]")
_SENTENCE_REACH = 120


def says_an_example(text: str, start: int, end: int) -> bool:
    """The sentence around ``text[start:end]`` says its value is an example, a fixture, a
    placeholder or fake ("the test fixture logs in with password 'x'", "示例密码"): such a
    value is shown, not given. Words of the sentence only (not a host such as example.org)."""
    return _SAYS_EXAMPLE.search(text, *_sentence_of(text, start, end)) is not None


def _sentence_of(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the sentence around ``text[start:end]``, at most ``_SENTENCE_REACH``
    characters each way."""
    lo = max(0, start - _SENTENCE_REACH)
    begin = lo
    for m in _SENTENCE_STOP.finditer(text, lo, start):
        begin = m.end()
    stop = _SENTENCE_STOP.search(text, end, min(len(text), end + _SENTENCE_REACH))
    return begin, (stop.start() if stop is not None else min(len(text), end + _SENTENCE_REACH))


_BANNED = Lazy(
    r"(?i)(?<![\w-])(?:banned|blocklist(?:ed)?|blacklist(?:ed)?|denylist(?:ed)?|forbidden|"
    r"disallowed|not allowed)(?![\w-])|禁用|禁止使用|不允许|不能用"
)


def shown_not_given(text: str, start: int, end: int) -> bool:
    """:func:`says_an_example`, or the sentence says the value is banned ("X is on the
    blocklist", "X 这种密码禁止使用"): a value said as a rule's instance, not given. Not
    "rejected": a password typed and rejected was given all the same."""
    begin, finish = _sentence_of(text, start, end)
    return _SAYS_EXAMPLE.search(text, begin, finish) is not None or _BANNED.search(text, begin, finish) is not None


_EXAMPLE_FILE = Lazy(
    r"(?i)(?<![\w@])[\w.-]*\.(?:example|sample|template|tmpl|tpl|dist)(?:\.(?:_CONF))?(?![\w.-])"
    r"|(?<![\w.@-])(?:example|sample|template)\.(?:_CONF)(?![\w.-])"
    .replace("_CONF", "env|ya?ml|json|toml|ini|conf|cfg|properties|xml|php|py|js|ts")
)
"""A file name that marks its file as an example (``.env.example``, ``config.sample.yml``,
``settings.py.dist``, ``template.env``), not a host (``mail.example.com``)."""
_BLOCK_START = Lazy(r"\n[ \t]*\n|\\n[ \t]*\\n|```|\n(?=\{\")|\n\"\n")
_BLOCK_REACH = 2000
_SPELLED_PART = Lazy(r"[a-z]+|[A-Z]+|\d{1,4}")
_PART_SEP = Lazy(r"[-_. ]")


def spelled_out(value: str) -> bool:
    """``value`` is words (and short numbers) spelled out, not generated: every part between
    ``-``, ``_``, ``.`` or a space is one-case letters or up to four digits, and one part is a
    word of three or more letters (``replace-with-32-random-bytes``, ``CHANGE_ME``, ``changeme``).
    """
    parts = _PART_SEP.split(value)
    return all(_SPELLED_PART.rx.fullmatch(p) for p in parts) and any(
        len(p) >= 3 and p.isalpha() and not made_up_letters(p) for p in parts
    )


def in_example_file(text: str, pos: int) -> bool:
    """``pos`` lies in a block (back to a blank line, a code fence, the start of a JSON line
    or a line holding one quote — texts redacted together are joined so, a transcript's JSONL
    records by the hook and decoded texts by :mod:`memory.redact.carried`, and another text's
    file is not this one's — at most ``_BLOCK_REACH`` characters) that names an example file before it
    (``# .env.example — copy to .env``): what such a file holds is what to fill in, not a value."""
    lo = max(0, pos - _BLOCK_REACH)
    begin = lo
    for m in _BLOCK_START.finditer(text, lo, pos):
        begin = m.end() if m.group() != "```" else m.start()
    return _EXAMPLE_FILE.search(text, begin, pos) is not None


def _value_after(
    text: str,
    word_start: int,
    word_end: int,
    kind: str,
    *,
    prose: bool,
    cjk: bool,
    before: str,
    runs: _Runs | None = None,
) -> Span | None:
    span = _value_after_word(
        text, word_start, word_end, kind, prose=prose, cjk=cjk, before=before, runs=runs
    )
    if span is None or says_an_example(text, word_start, span[1]):
        return None
    value = text[span[0] : span[1]]
    if spelled_out(value) and in_example_file(text, word_start):
        return None  # JWT_SECRET=replace-with-32-random-bytes in a .env.example
    if sha_shaped(value) and not _tied(text, word_end, span[0]):
        return None  # "the password policy changed in <sha>": a commit named after the word
    return span


_SHA_LENGTHS = frozenset({7, 8, 9, 10, 11, 12, 40, 64})
_TIE = Lazy(
    r"(?i)(?:^|(?:[:=：]|=>|->|(?<![a-z])(?:is|was|are|were)|'s|’s|是|为|為|等于)"
    r"(?:\s+(?:now|still|just|actually|currently))?)[\s\"'`]*$"
)


def sha_shaped(value: str) -> bool:
    """Hex of a commit's or a digest's length (a short SHA of 7–12, SHA-1's 40, SHA-256's 64),
    with a letter in it (a run of digits is a number, not a digest)."""
    return (
        len(value) in _SHA_LENGTHS
        and _HEX_VALUE.rx.fullmatch(value) is not None
        and "-" not in value
        and any(c in "abcdefABCDEF" for c in value)
        and any(c.isdigit() for c in value)
    )


def _tied(text: str, word_end: int, start: int) -> bool:
    """Nothing but an assignment or a copula ("is", "为", ``:``, ``=``) between a credential
    word and its value: a hex of a SHA's length is a value only so tied to its word, never
    after a preposition or a verb of change ("changed in", "updated by", "moved to")."""
    between = _ASIDE.rx.sub(" ", text[word_end:start])
    return _TIE.search(between.rstrip(" \t\"'`")) is not None


def _value_after_word(
    text: str,
    word_start: int,
    word_end: int,
    kind: str,
    *,
    prose: bool,
    cjk: bool,
    before: str,
    runs: _Runs | None = None,
) -> Span | None:
    if _HASH_BEFORE.search(before):
        return None  # "the hash of the password is …", "token id: …"
    noun = _NOUN_AFTER.match(text, word_end)
    if noun is not None:  # "PIN code is", "PIN码是", "pass phrase:"
        word_end = noun.end()
    nxt = text[word_end : word_end + 3].lstrip(" ")[:1]
    if not cjk and nxt and ("\u4e00" <= nxt <= "\u9fff" or "\uff00" <= nxt <= "\uffef"):
        cjk = True  # "token是 …", "API key：…", "password 是 …"
    if cjk and _CJK_GAP_HASH.search(text, word_end, word_end + 6) is not None:
        return None  # "密码的哈希值是 …", "密码长度为 …"
    if kind == "pin":
        m = _PIN_FOR.match(text, word_end)  # "PIN for the alarm 4417"
        if m is not None:
            return m.start("value"), m.end("value"), kind
    pair = _LITERAL_PAIR.match(text, word_end) if before[-1:] in ("'", '"') else None
    if pair is not None and before[-1] == text[word_end]:
        # the name given as a literal, its value as the next one: define('DB_PASSWORD', '…'),
        # env.put("API_TOKEN", "…"); lists of field names too ("password", "username"), so
        # only a made-up value, not a word or a name
        found = _value_at(text, pair.end(), query=False)
        if found is None:
            return None
        value = text[found[0] : found[1]]
        made = _made_up_literal(value, digits_ok=kind in ("pin", "password"))
        return (found[0], found[1], kind) if made else None
    connected = _connector(text, word_end, prose=prose, cjk=cjk, before=before)
    if connected is not None and text[connected[0] : connected[0] + 1] in ("(", "["):
        # a user and a password given as a pair to a credential name: auth=("svc", "…")
        duo = _PAIR_LITERAL.match(text, connected[0])
        if duo is None:
            return None
        value = duo.group("value")
        made = _made_up_literal(value, digits_ok=True)
        return (duo.start("value"), duo.end("value"), kind) if made else None
    if kind == "session" and (connected is None or not connected[1]):
        return None  # "Session 2026-03-15", "session folder: /home/…": only sessionid=<random>
    if connected is None:
        return _random_near(text, word_end, kind)
    at, explicit = connected
    if not explicit and kind == "password":  # "app password abcd efgh ijkl mnop"
        m = _APP_PASSWORD.match(text, at, at + _LONGEST)
        if m is not None and _APP_BEFORE.search(text, max(0, at - 60), at) is not None:
            return at, m.end(), kind
    if explicit or cjk:
        longer = _longer_value(text, at, kind, word=text[word_start : word_end + 2].lower())
        if longer is not None:
            return longer
    query = word_start > 0 and text[word_start - 1] in "?&;"
    found = _value_at(
        text,
        at,
        query=query,
        spaces=text[word_start:word_end].lower().endswith("passphrase"),
        runs=runs,
    )
    if found is None:
        return None if kind == "session" else _random_near(text, word_end, kind)
    start, end, quoted = found
    value = text[start : min(end, start + _JUDGED)]  # the span is whole; judged by its head
    if firebase_web_key(text, start, end):
        return None
    if kind == _KEY_MATERIAL_KIND:
        # without a connector only generated material that is not a hash (hex): "the Pinecone
        # key <key>", "AK <id> SK <secret>"
        hexadecimal = _HEX_VALUE.rx.fullmatch(value) is not None
        bare = not hexadecimal and len(value) >= 20
        bare_key = text[word_start:word_end].lower() == "key"
        if hexadecimal and bare_key and _KEY_BEFORE.search(before) is None:
            return None  # "key: <hex>": a cache key, a JS API key, a hash; no owner says more
        if bare_key and _NAMESPACED.rx.fullmatch(value):
            return None  # "key=page:v2:<hex>": a store's key of namespace parts, an id
        material = (
            (explicit or bare)
            and looks_random(value)
            and not base64_of_text(value)
            and not reads_as_non_secret(value)  # a path, a URL, a reference
        )
        return (start, end, "secret") if material else None
    if kind == _ANSWER_KIND:  # an answer is a name or a word, often capitalised
        ok = explicit and len(value) >= 3 and (value[0].isupper() or quoted or not value.isalpha())
        return (start, end, "password") if ok and not reads_as_non_secret(value) else None
    digits_ok = kind == "pin" or (kind == "password" and (explicit or cjk))
    if text[word_start:word_end].lower() == "community":
        digits_ok = False  # "the community is 4000 strong"
    if value.isdigit() and followed_by_unit(text, end):
        return None
    keypad = _KEYPAD.rx.fullmatch(value) is not None and kind in ("pin", "password")
    if keypad and (kind == "pin" or cjk or explicit):
        return start, end, kind  # "door code is 47#912", "门禁密码 8830#": a keypad's # and *
    if kind == "pin" and not value.isdigit():
        # a code sent to be typed back: capitals and digits mixed ("验证码是 Q7M2XK"), not a
        # name and its number (ISO9001, HTTP2: one run of letters, one of digits)
        issued = (explicit or cjk) and _ISSUED_CODE.rx.fullmatch(value) is not None
        return (start, end, kind) if issued else None
    if value.isdigit() and _ONE_DIGIT.rx.fullmatch(value):
        return None  # 000000, 111111: a fixed code of a test setup, not someone's PIN
    if cjk and kind == "token" and _LOWER_CODE.rx.fullmatch(value) and entropy(value) >= 3.0:
        return start, end, kind  # "邮箱授权码：<16 lower-case letters>", SMTP clients' codes
    made_up = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if kind == "session":
        return (start, end, kind) if explicit and looks_random(value) else None
    word = text[word_start:word_end].lower()
    short = (word in _SHORT_PASSWORD and not explicit) or (word == "key" and kind == "password")
    if short and (not made_up or reads_as_non_secret(value)):
        return None  # "pass the test", "pw is required", "key points"
    # "门禁密码 4821": after a Chinese word a space is enough for digits (not "6 位": a unit)
    if explicit and word.endswith("passphrase") and _WORDS_PHRASE.rx.fullmatch(value):
        return start, end, kind  # "passphrase: correct-horse-battery-staple"
    if explicit and kind in _GENERATED_KINDS and value.isalpha() and value.islower() and not made_up_letters(value):
        return None  # AWS_SECRET_ACCESS_KEY = 'testing': a key is generated, never one word
    bare_ok = (
        explicit
        or made_up
        or made_up_letters(value)
        or (value.isdigit() and (kind == "pin" or (cjk and kind == "password")))
    )
    if bare_ok and is_secret_value(value, digits_ok=digits_ok, quoted=quoted):
        return start, end, kind
    if explicit and quoted is False and looks_random(value) and not reads_as_non_secret(value):
        return start, end, kind
    if explicit and kind in ("token", "api-key", "secret") and generated_one_case(value):
        return start, end, kind  # sk-<48 lower-case letters>, a base32 PAT: one case, long
    return _random_near(text, word_end, kind) if not explicit else None


_WINDOW_TOKEN = Lazy(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,200}={0,2}(?![A-Za-z0-9+/=_-])")
_WINDOW_STOP = Lazy(r"\\n|\n|[.!?](?:\s|$)|[。！？]")
_HASH_WORDS = Lazy(
    r"(?i)sha|hash|digest|checksum|md5|commit|revision|\brev\b|etag|integrity|uuid|request[ _-]?id|trace|build"
)


def _random_near(text: str, end: int, kind: str) -> Span | None:
    """A random-looking token within a few words after a credential word, on the same line
    and in the same sentence, unless the words between say it is a hash or an id."""
    window = text[end : end + 80]
    stop = _WINDOW_STOP.search(window)
    if stop is not None:
        window = window[: stop.start()]
    m = _WINDOW_TOKEN.search(window)
    if m is None or _HASH_WORDS.search(window[: m.start()]) or not looks_random(m.group(0)):
        return None
    start, stop_at = end + m.start(), end + m.end()
    if m.end() == len(window) and stop is None:  # the window cut it: the whole token goes
        whole = _WINDOW_TOKEN.match(text, start, start + 256)
        if whole is not None:
            stop_at = whole.end()
    if reads_as_non_secret(m.group(0)) or firebase_web_key(text, start, stop_at):
        return None
    return start, stop_at, kind


def detect_credentials(anchors: Anchors) -> list[Span]:
    return _credential_spans(anchors)


# ---------------------------------------------------------------------------- XML elements

_XML_ANCHORS = ("password>", "passwd>", "passphrase>", "pwd>", "secret>", "token>", "key>")
_XML_ELEMENT = Lazy(r"<(?P<tag>[A-Za-z_][\w.:-]{0,63})>(?P<value>[^<>\n\"\\]{1,256})</(?P=tag)>")


def detect_xml_elements(anchors: Anchors) -> list[Span]:
    """``<password>X</password>`` (Maven's settings.xml, NuGet, Tomcat users, FileZilla):
    an element whose tag is a credential word holds its value."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(_XML_ANCHORS):
        lt = text.rfind("<", max(0, pos - 64), pos)
        if lt == -1:
            continue
        m = _XML_ELEMENT.match(text, lt)
        if m is None:
            continue
        parts = [p.lower() for p in _SPLIT.split(m.group("tag").split(":")[-1]) if p]
        judged = _kind_of(parts, "") if parts else None
        value = m.group("value").strip()
        if judged is None or not value or reads_as_non_secret(value):
            continue
        kind = judged[0]
        if kind == _KEY_MATERIAL_KIND:  # <cacheKey>, <routingKey>: only generated material
            if not looks_random(value):
                continue
            kind = "secret"
        elif kind == _ANSWER_KIND:
            kind = "password"
        elif kind == "pin" and not value.isdigit():
            continue
        start = m.start("value") + (len(m.group("value")) - len(m.group("value").lstrip()))
        spans.append((start, start + len(value), kind))
    return spans


# ---------------------------------------------------------------------------- context words

_CONTEXT_WORDS = {"wandb": "api-key", "twilio": "token", "login": "credential", "apikey": "api-key"}


_HOST_LABEL = Lazy(r"\.[a-z0-9-]+(?:\.[a-z0-9-]+)*(?:[/:?#]|$)")


def _in_url(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is part of a URL's host or path: its run of non-space characters
    has ``://`` before it, a ``/`` right before it, or the word goes on as a host
    (``wandb.ai/…``). What follows there is the URL's own path, whose structure (userinfo, a
    query parameter named for a credential) the URL detectors read; a service's name in it
    says nothing about a token."""
    lo = start
    while lo > 0 and start - lo < 256 and not text[lo - 1].isspace():
        lo -= 1
    if text.find("://", lo, start) != -1 or (start > lo and text[start - 1] == "/"):
        return True
    return end < len(text) and text[end] == "." and _HOST_LABEL.match(text, end) is not None


def detect_context_tokens(anchors: Anchors) -> list[Span]:
    """Random-looking tokens right after a service or login word ("wandb login <key>")."""
    text = anchors.text
    spans: list[Span] = []
    for word, kind in _CONTEXT_WORDS.items():
        for pos in anchors.positions((word,)):
            if _in_url(text, pos, pos + len(word)):
                continue
            span = _random_near(text, pos + len(word), kind)
            if span is not None:
                spans.append(span)
    return spans


# ---------------------------------------------------------------------------- pairs

_PAIR_VALUE = r"(?P<value>[^\s\"'\\`,;)\u0080-\uffff]{3,200})"  # non-ASCII ends it
_PAIR_EN = Lazy(
    r"""(?x)
    (?i:log(?:-|\s)?in|logon|sign(?:-|\s)?in|credentials?|creds|account)
    (?:\s+(?i:for|to|of|on|at)(?:\s+[\w.@'-]+){1,4}?)?   # for the grafana instance
    (?:\s+(?i:is|are|was|were)\s*:?\s*|\s*[:=]\s*|\s+(?i:with|using|as)\s+|\s+)
    (?:(?i:user(?:name)?|u)\s*[:=]?\s*)?
    (?P<user>[A-Za-z0-9._@+-]{1,64}?)
    (?:\s*(?:/|\|)\s*|:|\s*,?\s*(?:and\s+)?(?:the\s+)?(?i:password|pass|pwd|pw)\s*(?:(?i:is)\s+|[:=]\s*)?)
    """
    + _PAIR_VALUE
)
_PAIR_ZH = Lazy(
    r"(?:登录|登陆|登入|账号|帐号|帳號|账户|用户名)(?:名|信息|凭据)?[^\n。；;\"\\]{0,10}?(?:是|为|：|:|=|用|\s)\s*"
    r"(?P<user>[A-Za-z0-9._@+-]{1,64}?)\s*(?:/|／|:|：|\||和|跟|与|，?\s*密码\s*(?:是|为|：|:)?)\s*"
    + _PAIR_VALUE
)


_PAIR_EN_WORDS = (
    "login",
    "log in",
    "log-in",
    "logon",
    "sign in",
    "signin",
    "sign-in",
    "cred",
    "account",
)
_PAIR_ZH_WORDS = ("登录", "登陆", "登入", "账号", "帐号", "帳號", "账户", "用户名")


def says_a_credential(text: str) -> bool:
    """``text`` holds a credential word (the context detectors' anchors, either language) or a
    login word (:func:`memory.redact.redact_turns`: only then can joining it to the next turn
    find something new)."""
    return bool(Anchors(text).positions((*_WORD_ANCHORS, *_CJK_WORDS, *_PAIR_EN_WORDS, *_PAIR_ZH_WORDS)))


def detect_pairs(anchors: Anchors) -> list[Span]:
    """The password half of a user/password pair said together."""
    text = anchors.text
    spans: list[Span] = []
    for regex, words in ((_PAIR_EN, _PAIR_EN_WORDS), (_PAIR_ZH, _PAIR_ZH_WORDS)):
        for pos in anchors.positions(words):
            if pos and text[pos - 1].isalpha() and text[pos - 1].isascii():
                continue
            m = regex.match(text, pos)
            if m is None:
                continue
            sep = text[m.end("user") : m.start("value")]
            if sep.strip() in ("/", "／") and sep[0].isspace() and not sep[-1].isspace():
                continue  # "POST /api/session": a slash that opens a path, not one between two
            value = m.group("value").rstrip(".:?")
            said = text[m.start("user") : m.start("value") + len(value)]
            if reads_as_non_secret(value) or reads_as_non_secret(said) or not (
                any(not c.isalpha() for c in value) or any(c.isupper() for c in value)
            ):
                continue
            spans.append((m.start("value"), m.start("value") + len(value), "password"))
    return spans


# ---------------------------------------------------------------------------- URLs and headers

_URL_CREDS = Lazy(
    r"://(?P<user>[^\s:/@\"'\\<>]{0,128})(?::(?P<value>[^\s/@\"'\\<>][^\s/\"'\\<>]{0,255}))?"
    r"@(?=[A-Za-z0-9\[._-])"  # the password runs to the last "@" before the host: "pw@@@host"
)
_URL_CREDS_WRAPPED = Lazy(
    r"://[^\s:/@\"'\\<>]{1,128}:(?P<a>[^\s/@\"'\\<>]{1,255})(?:\r?\n|\\n)[ \t]*"
    r"(?P<b>[^\s/@\"'\\<>:]{1,255})@(?=[A-Za-z0-9\[._-])"
)  # a password cut over a line break: both pieces, up to the host's "@"
_AUTH_HEADER = Lazy(  # "Authorization: …", and a server's header directive: Authorization "Basic …"
    r"(?i:(?:proxy-)?authorization)\\?[\"']?(?:\s*[:=]\s*|[ \t]+(?=\\?[\"']))\\?[\"']?"
    r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9_-]{1,24})\s+)?"  # any scheme: Bearer, SSWS, GenieKey, Splunk
    r"(?P<value>[A-Za-z0-9._~+/=:-]{8,})"
)
_SCHEME_TOKEN = Lazy(
    r"(?i:(?P<scheme>basic|bearer))\s+(?P<value>[A-Za-z0-9._~+/=-]{8,})(?![A-Za-z0-9._~+/=-])"
)


_SENTRY_INGEST = Lazy(r"(?:o\d+\.)?ingest\.(?:[a-z]{2}\.)?sentry\.io/")
"""A Sentry DSN's key is public by design (browsers send it); a secret one has a ``:``."""


def _generated_user(user: str) -> bool:
    """A URL's user part that reads as a generated key, not a name: long, both cases or
    digits, varied (``deploy``, ``git``, ``jane.doe`` are names)."""
    if len(user) < 12 or not user.isalnum():
        return False
    cases = any(c.isupper() for c in user) and any(c.islower() for c in user)
    return (cases or looks_random(user)) and entropy(user) >= 3.5 and not user.istitle()


def detect_urls_and_headers(anchors: Anchors) -> list[Span]:
    """Passwords in ``scheme://user:pw@host`` (tokens in its user part too) and the
    credentials of ``Authorization`` headers and ``Basic``/``Bearer`` values."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("://",)):
        m = _URL_CREDS.match(text, pos)
        if m is None:
            wrapped = _URL_CREDS_WRAPPED.match(text, pos, pos + 700)
            if (
                wrapped is not None
                and not wrapped.group("a").isdigit()  # a port, and an e-mail address below it
                and not is_placeholder(wrapped.group("a") + wrapped.group("b"))
            ):
                spans.append((wrapped.start("a"), wrapped.end("a"), "password"))
                spans.append((wrapped.start("b"), wrapped.end("b"), "password"))
            continue
        value = m.group("value")
        if value is not None:
            if not is_placeholder(value):  # user:password@host in docs stays
                # a generated user name is a token too (a licence key as the user of a gem
                # source, an access key id as the user of a proxy): both halves go
                user = m.group("user")
                first = m.start("user") if _generated_user(user) else m.start("value")
                spans.append((first, m.end("value"), "password"))
        elif looks_random(m.group("user")) and _SENTRY_INGEST.match(text, m.end()) is None:
            spans.append((m.start("user"), m.end("user"), "token"))
    for pos in anchors.positions(("authorization",)):
        m = _AUTH_HEADER.match(text, pos)
        if m is not None and not is_placeholder(m.group("value")):
            scheme = (m.group("scheme") or "").lower()
            kind = {"bearer": "bearer-token", "basic": "basic-auth"}.get(scheme, "authorization")
            spans.append((m.start("value"), m.end("value"), kind))
    for pos in anchors.positions(("basic ", "bearer ")):
        m = _SCHEME_TOKEN.match(text, pos)
        if m is None:
            continue
        value = m.group("value")
        if m.group("scheme").lower() == "basic":
            import base64
            import binascii

            try:
                raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
            except (binascii.Error, ValueError):
                continue
            if b":" in raw and base64_of_text(value):
                spans.append((m.start("value"), m.end("value"), "basic-auth"))
        elif looks_random(value) and not is_placeholder(value):
            spans.append((m.start("value"), m.end("value"), "bearer-token"))
    return spans


# ---------------------------------------------------------------------------- AWS

_AWS_CONTEXT = ("aws", "akia", "asia", "amazon", "boto", "s3", "secret", "cred")
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_AWS_SECRET = Lazy(r"(?:(?<![A-Za-z0-9/+_-])|(?<=\\[nrt]))[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])")


def detect_aws_secrets(anchors: Anchors) -> list[Span]:
    """40-character AWS secret keys near AWS context, labelled or not (the line after an
    access key id, "my AWS creds are … and …"): mixed case and digits, high entropy, and not
    base64 of readable text."""
    text = anchors.text
    spans: set[Span] = set()
    reach = 0
    for pos in anchors.positions(_AWS_CONTEXT):
        lo = max(pos - 200, reach)
        hi = pos + 300
        if lo >= hi:
            continue
        for m in _AWS_SECRET.finditer(text, lo, hi):
            token = m.group(0)
            if m.end() < len(text) and text[m.end()] in _B64_CHARS:
                continue  # cut by the window's end: part of a longer run
            if (
                all_classes(token)
                and entropy(token) >= 4.0
                and not base64_of_text(token)
            ):
                spans.add((m.start(), m.end(), "aws-secret-key"))
        reach = hi - 40
    return sorted(spans)


_CLOUD_CONTEXT = (
    "华为云", "huawei", "myhuaweicloud", "obsutil", "七牛", "qiniu", "qshell", "百度云", "百度智能云",
    "baidubce", "金山云", "ksyun", "ucloud", "京东云", "jdcloud", "阿里云", "aliyun", "ossutil",
    "腾讯云", "tencentcloud", "coscli", "火山引擎", "volcengine", "天翼云", "ctyun", "移动云",
)  # fmt: skip
"""Chinese clouds (and their CLIs): where an unlabelled 20-character access key id or a 30–40
character secret key is a cloud key pair."""
_PREFIXED_ID = Lazy(r"[a-z]{2,12}_")  # toolu_…, msg_…, price_…: an object's id, not a key
_CLOUD_KEY_ID = Lazy(r"(?:(?<![A-Za-z0-9/+_-])|(?<=\\[nrt]))[A-Z0-9]{20}(?![A-Za-z0-9/+=_-])")
_CLOUD_SECRET = Lazy(
    r"(?:(?<![A-Za-z0-9/+_-])|(?<=\\[nrt])|(?<==))[A-Za-z0-9/+_-]{30,40}(?![A-Za-z0-9/+=_-])"
)


def _cut_at_window(text: str, end: int) -> bool:
    """A match ending at ``end`` was cut by its window's end: the run goes on (a 43-character
    ``aesKey`` read as a 33-character cloud secret left its last ten characters behind)."""
    return end < len(text) and (text[end].isascii() and (text[end].isalnum() or text[end] in "/+=_-"))


def detect_cloud_keys(anchors: Anchors) -> list[Span]:
    """Access key ids and secrets of Chinese clouds said without a label, near the cloud's
    name or CLI ("华为云 OBS：<id> <secret>", "obsutil config -i=<id> -k=<secret>"): an id of 20
    upper-case letters and digits (both, varied), a secret of 30–40 characters that reads as
    generated and not as base64 of text."""
    text = anchors.text
    spans: set[Span] = set()
    reach = 0
    for pos in anchors.positions(_CLOUD_CONTEXT):
        if pos and text[pos - 1].isascii() and text[pos - 1].isalnum():
            continue  # inside an id or a longer word
        lo = max(pos - 200, reach)
        hi = min(len(text), pos + 400)
        if lo >= hi:
            continue
        for m in _CLOUD_KEY_ID.finditer(text, lo, hi):
            token = m.group(0)
            if _cut_at_window(text, m.end()):
                continue
            digits = sum(c.isdigit() for c in token)
            if 1 <= digits <= 16 and entropy(token) >= 3.6:
                spans.add((m.start(), m.end(), "access-key"))
        for m in _CLOUD_SECRET.finditer(text, lo, hi):
            token = m.group(0)
            if _cut_at_window(text, m.end()):
                continue
            if (
                all_classes(token)
                and entropy(token) >= 4.0
                and not base64_of_text(token)
                and not reads_as_non_secret(token)
                and _PREFIXED_ID.match(token) is None
            ):
                spans.add((m.start(), m.end(), "secret"))
        reach = hi - 40
    return sorted(spans)


_ECHO_LINE = Lazy(
    r"echo[ \t]+(?:-[ne][ \t]+)?(?P<q>[\"']?)(?P<tmpl>[^\n\"'`\\]{1,200})(?P=q)[ \t]*(?:\r?\n|\\n)"
)
_SHELL_VAR = Lazy(r"\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]{0,63})\}?")
_NAME_PARTS = Lazy(r"[._-]+|(?<=[a-z0-9])(?=[A-Z])")


def detect_echoed_variables(anchors: Anchors) -> list[Span]:
    """``echo "deploy with $DEPLOY_KEY"`` and the line it printed, ``deploy with <value>``:
    the text around a variable named for a credential, found again on the next line, says
    where its value is (a CI log that printed a secret)."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("echo ",)):
        m = _ECHO_LINE.match(text, pos)
        if m is None or "$" not in m.group("tmpl"):
            continue
        tmpl = m.group("tmpl")
        for var in _SHELL_VAR.finditer(tmpl):
            parts = [p.lower() for p in _NAME_PARTS.split(var.group("name")) if p]
            if not parts or credential_kind(parts) is None:
                continue
            head, tail = tmpl[: var.start()], tmpl[var.end() :].split("$", 1)[0]
            at = m.end()
            while at < len(text) and text[at] in " \t":
                at += 1
            if "$" in head or not text.startswith(head, at):
                break
            start = at + len(head)
            stop = start
            limit = min(len(text), start + 512)
            while stop < limit and not text[stop].isspace() and text[stop] not in "\"'\\":
                stop += 1
            if tail.strip() and text.find(tail.strip()[:1], start, stop) > start:
                stop = text.find(tail.strip()[:1], start, stop)
            value = text[start:stop]
            if value and (
                looks_random(value) or is_secret_value(value, digits_ok=False, quoted=False)
            ) and not reads_as_non_secret(value):
                spans.append((start, stop, "secret"))
            break
    return spans


register(
    *_WORD_ANCHORS,
    *_CJK_WORDS,
    *_OTHER_ANCHORS,
    *_CONTEXT_WORDS,
    *_PAIR_EN_WORDS,
    *_PAIR_ZH_WORDS,
    *_AWS_CONTEXT,
    *_CLOUD_CONTEXT,
    "://",
    "authorization",
    "basic ",
    "bearer ",
    *_XML_ANCHORS,
)
CONTEXT_DETECTORS = (
    detect_urls_and_headers,
    detect_aws_secrets,
    detect_cloud_keys,
    detect_credentials,
    detect_xml_elements,
    detect_pairs,
    *COMMAND_DETECTORS,
    detect_echoed_variables,  # after the commands, as when it was one of them
    detect_context_tokens,
)
