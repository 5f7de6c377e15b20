"""Is this string a secret value? Tests on one candidate, no context beyond what is passed.

A value after a credential word is a secret unless it reads as something else: a placeholder
(``changeme``, ``<password>``, ``${DB_PASS}``, ``****``), code (``os.environ[...]``,
``self.password``, ``get_token()``), a path or URL, a version, a date, a plain word ("the
password is *required*"), a technical term ("the password is *sha256*-hashed") or a quantity
("12 characters"). What is left must look made up: letters with digits or symbols, or digits
alone where a PIN or password may be digits. Random-looking tokens met near context without a
connector are judged by character classes and Shannon entropy.
"""

from __future__ import annotations

import re
from math import log2

from memory.redact.engine import Lazy

PLACEHOLDERS = frozenset(
    {
        "string", "str", "none", "null", "nil", "true", "false", "required", "optional",
        "undefined", "changeme", "password", "passwd", "passphrase", "secret", "token",
        "example", "redacted", "hidden", "empty", "default", "value", "placeholder", "dummy",
        "sample", "test", "unset", "masked", "omitted", "todo", "tbd", "n/a", "na", "xxx",
    }
)  # fmt: skip

_PLACEHOLDER = Lazy(
    r"""(?x)
      \$                                       # $VAR, ${VAR}, ${{ secrets.X }}
    | \{\{.*\}\}$ | \{[A-Za-z_]\w*\}$ | %\(?\w+\)?s?%?$ | <   # templates
    | \[redacted | \*+$ | x{3,}$ | \.{3}$ | [•●·]+$
    | (?:your|my|the)[-_ ]?(?:own[-_ ]?)?(?:pass|secret|token|key|api|pwd|password)   # your_password
    """
)  # matched against the lower-cased value: IGNORECASE makes compiling slow on the hook path
_NOT_VALUE = Lazy(
    r"""(?x)
      (?:vault|op|ref\+[a-z0-9]+|sm|ssm|secretsmanager|awssm|gcpsm|azkv|keyvault|sops|doppler
       |infisical|bws|secret|secretref|kms):(?://)?[a-z0-9_./#-]+$    # a secret manager's reference
    | 0x[0-9a-f]{40}$                                              # an Ethereum address (public)
    | pk\.ey | pk_(?:live|test)_ | phc_ | pk-lf-                   # publishable keys (public)
    | arn:aws[a-z-]*:                                              # an AWS resource name
    | projects/[^/\s]+/secrets/                                    # a GCP Secret Manager name
    | [a-z_][a-z0-9_.]*\(.* | [(\[{]                                # a call, a bracket
    | (?:/|~/|\./|\.\./)(?![a-z0-9+/]{15,}=+$)                      # a path, not base64 ("/xM…+…==")
    | [a-z]:[\\/] | \\\\                                            # C:\keys, \\host\share
    | [a-z][a-z0-9+.-]*://                                         # a URL
    | v?\d+(?:\.\d+)+(?:[-+][0-9a-z.-]+)?$                         # a version
    | \d{1,4}(?:[-/:]\d{1,4})+$                                    # a date or time
    | [^@\s]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+$                         # an e-mail address
    | [\w.-]+\.(?:txt|pem|key|json|ya?ml|toml|env|ini|cfg|conf|md|py|js|ts|sh|crt|p12|pfx|gpg)$
    | [\w-]+(?:/[\w.-]+)+\.[a-z][a-z0-9]{0,4}$                      # a relative path to a file
    | (?:sha|md|base|bcrypt|utf|argon|scrypt|pbkdf|aes|rsa|hmac|crc|blake|ed|x|oauth|tls|ssl
       |ipv|ucs|latin|iso|http|totp|hotp|fido|u2f|pkcs)\d+[a-z]*(?:[-_][a-z]+\d*)*$   # sha256-hashed
    """
)  # lower-cased value, as above

_DOTTED = Lazy(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+\(?\)?$")  # self.password, os.environ
_UNIT_AFTER = Lazy(
    r"\s*(?:characters?|chars?|digits?|letters?|symbols?|bytes?|bits?|days?|hours?|minutes?|"
    r"seconds?|weeks?|months?|years?|times|attempts?|tries|retries|words?|%|位|个|次|天|分钟|小时|字符)"
)
_UUID = Lazy(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = Lazy(r"[0-9a-f]+$|[0-9A-F]+$")


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * log2(k / n) for k in counts.values())


def is_placeholder(value: str) -> bool:
    """``changeme``, ``<token>``, ``${DB_PASS}``, ``****``, ``your_api_key``, a marker."""
    low = value.lower()
    return (
        low in PLACEHOLDERS
        or _PLACEHOLDER.match(low) is not None
        or _filled(value)  # sk-ant-xxxx…, ghp_****, ghp_0000…, token-...
    )


_FILL = Lazy(r"x{4,}|X{4,}|\*{3,}|\.{3,}|…|0{8,}")
_FILLER_WORD = Lazy(r"your|placeholder|redacted|dummy|<|\{")


def _filled(value: str) -> bool:
    """Written with filler: runs of one ``x`` or ``X``, ``*``, dots or zeros that make up more
    than a fifth of the value. A generated token holds such a run by chance now and then
    (``…BgxXXXgnq…`` of a random ``ghp_`` token: ``x`` then ``XXX``, read case-blind as four
    x's, was taken for an example and left in the clear), never that much of its length."""
    return 5 * sum(len(m.group()) for m in _FILL.finditer(value)) > len(value)


def is_placeholder_token(token: str) -> bool:
    """A vendor-shaped token written as an example: ``AKIAXXXXXXXXXXXXXXXX``,
    ``sk-ant-xxxxxxxx…``, ``ghp_your_token_here``, ``ghp_0000…``. A run of another letter
    (``sk-ant-api03-AAAA…``) is taken for a made-up key: tests and demos use them as keys."""
    return _filled(token) or _FILLER_WORD.search(token.lower()) is not None


_CASE_TAIL = Lazy(
    r"[A-Za-z]+\d+(?!(?:[A-Z][a-z]*[aeiouy][a-z]*)+$)(?=[A-Za-z]*[a-z])(?=[A-Za-z]*[A-Z])[A-Za-z]{2,}"
)
"""Letters, digits, then letters of both cases that are not capitalised words (each with a
vowel): ``x3TuYeoUcGYb``. A term's tail after its number is one case (``sha256sum``,
``SHA256``) or words (``Base64Encoder``): read case-blind, the term pattern took a generated
value that starts with a letter and a digit for one."""
_LEET = Lazy(r"[A-Za-z]*[a-z][0-9][a-z][A-Za-z]*")  # Cinnam0n, p4ss: a digit for a letter
_SAME_HALVES = Lazy(r"(?P<a>[^/\s]{1,32})[ \t]*/[ \t]*(?P=a)$")


def _word_parts(value: str) -> list[str] | None:
    """The parts of a ``kebab-case``/``snake_case`` value of lower-case words, or None."""
    parts = re.split(r"[-_]", value)
    if len(parts) < 3 or not all(p.isascii() and p.isalpha() and p.islower() for p in parts):
        return None
    return parts


_HOST = Lazy(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+\.[a-z]{2,12}$")
"""A host name in lower case: ``<id>.apps.googleusercontent.com``, ``db-1.internal.example.org``
(a JWT or a dotted token holds capitals)."""


def reads_as_non_secret(value: str) -> bool:
    """A placeholder, code, path, URL, version, date, e-mail address, file name or term.

    A dotted value reads as code (``self.password``) unless one of its parts looks generated
    (``<id>.atlasv1.<secret>``: a token made of dotted parts) or is a word spelled with a digit
    for a letter and the value has a capital (``Cinnam0n.Rolls``: names in code do neither).
    Lower-case words joined by hyphens or underscores, one of them a placeholder word
    (``test-token-not-real``), say what the value is not. The same value twice around a slash
    (``admin/admin``) is a documented default, and hides nothing its first half does not say."""
    low = value.lower()
    if is_placeholder(value) or _SAME_HALVES.match(value) is not None:
        return True
    if low.startswith("eyj") and "." not in value and jwt_header_only(value):
        return True
    if _HOST.rx.fullmatch(value) is not None:
        return True
    parts = _word_parts(value)
    if parts is not None and any(p in PLACEHOLDERS or p == "fake" for p in parts):
        return True
    if _NOT_VALUE.match(low) is not None:
        return _CASE_TAIL.rx.fullmatch(value) is None
    if _DOTTED.match(low) is None:
        return False
    pieces = value.split(".")
    leet = any(c.isupper() for c in value) and any(_LEET.rx.fullmatch(p) for p in pieces)
    return not leet and not any(looks_random(part) for part in pieces)


_JOSE_HEADER = frozenset(
    {"alg", "typ", "kid", "cty", "enc", "zip", "crit", "jku", "jwk", "x5u", "x5c", "x5t", "x5t#S256"}
)
"""The registered header parameters of a JWS or JWE (RFC 7515, 7516)."""


def jwt_header_only(value: str) -> bool:
    """``value`` is the base64url of a JWT header and nothing else: a JSON object of header
    parameters with an ``alg``, no payload and no signature (no ``.``). Every token signed
    the same way starts with those characters (``eyJhbGciOi…`` is ``{"alg":``): public, the
    way a file's magic number is."""
    import json

    if "." in value or len(value) > 512 or (raw := _b64(value, urlsafe=True)) is None:
        return False
    try:
        header = json.loads(raw.decode("utf-8"))
    except ValueError:
        return False
    return isinstance(header, dict) and "alg" in header and set(header) <= _JOSE_HEADER


def _b64(token: str, *, urlsafe: bool) -> bytes | None:
    """``token`` decoded as base64 (its padding restored; ``urlsafe``: the ``-_`` alphabet,
    else the standard one, strictly), or None when it is not base64."""
    import base64
    import binascii

    padded = token + "=" * (-len(token) % 4)
    try:
        return base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def is_secret_value(value: str, *, digits_ok: bool, quoted: bool, min_len: int = 6) -> bool:
    """A value after a credential word and a connector ("is", ":", "为"…) is a secret.

    ``digits_ok``: the word admits digits alone (a PIN, a password said with "is"/"是");
    ``quoted``: the value was quoted, which shows it is a literal (a plain word then counts).
    """
    if not value or reads_as_non_secret(value):
        return False
    if value.isdigit():
        return digits_ok and 4 <= len(value) <= 16
    if len(value) < min_len:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    if quoted:
        return True
    if has_digit and any(c.isalpha() for c in value):
        return True
    if made_up_letters(value):
        return True
    # P@ssword, hunter!!, but not a hyphenated-word or snake_case name
    return (
        has_symbol
        and any(c.isalnum() for c in value)
        and not value.replace("-", "").replace("_", "").isalpha()
    )


_VOWELS = frozenset("aeiouy")
_CONSONANT_RUN = Lazy(r"[bcdfghjklmnpqrstvwxz]{4}")


def made_up_letters(value: str) -> bool:
    """Twelve or more letters of one case that no language spells: a mail provider's
    authorisation code (sixteen capitals), an app password without its spaces. A word, or
    words run together, keeps a vowel in every few letters; random letters have a vowel one
    time in five and four consonants in a row somewhere. Capitals are held to a vowel in four
    letters at most (a code is written in capitals, a word rarely is), lower case to fewer than
    one in five and fourteen letters ("craftsmanship" is a word)."""
    if len(value) < 12 or not value.isascii():
        return False
    if not value.isalpha():
        return _made_up_identifier(value)
    low = value.lower()
    vowels = sum(c in _VOWELS for c in low)
    if value.isupper():
        few = 4 * vowels <= len(low)
    elif value.islower():
        few = len(low) >= 14 and 5 * vowels < len(low)
    else:
        return _made_up_identifier(value)
    return (
        few
        and len(set(low)) >= 9
        and _CONSONANT_RUN.search(low) is not None
        and entropy(low) >= 3.2
    )


_CAMEL = Lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _made_up_identifier(value: str) -> bool:
    """Letters of both cases (an underscore or a hyphen between them at most) in pieces no
    language spells: ``InitGnfIvPfr``, ``Kefu_fzsNwHKl``. A name in code is made of words and
    abbreviations, each piece with a vowel (``getUserName``) or an acronym in capitals
    (``HTTPServer``), with one short abbreviation now and then (``srcDir``); two or more pieces
    of two letters or more without a vowel, in mixed case, are typed at random."""
    if not all(c.isalpha() or c in "-_" for c in value):
        return False
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    bare = sum(
        1
        for m in _CAMEL.finditer(value)
        if len(m.group()) >= 2 and not m.group().isupper() and not set(m.group().lower()) & _VOWELS
    )
    return bare >= 2


def followed_by_unit(text: str, end: int) -> bool:
    """A number followed by a unit ("12 characters", "6 位"): a length, not a PIN."""
    return _UNIT_AFTER.match(text[end : end + 16].lower()) is not None


def looks_random(token: str) -> bool:
    """A token that reads as generated: long, mixed character classes, high entropy.

    Hex strings only count at key lengths (32, 40, 64: API keys, auth tokens) and UUIDs never
    do: near context words these are the shapes of keys, and the context (not this test) says
    whether a hash is meant.
    """
    if len(token) < 20 or _UUID.match(token):
        return False
    if _HEX.match(token):
        return len(token) in (32, 40, 48, 64) and entropy(token) >= 3.0
    classes = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(c.isdigit() for c in token),
        )
    )
    return classes >= 2 and any(c.isdigit() for c in token) and entropy(token) >= 3.5


def all_classes(token: str) -> bool:
    """Upper-case letters, lower-case letters and digits, all three: a generated key's
    base62/base64 alphabet, as a hand-typed word or a hash rarely mixes them."""
    return any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token)


_SEGMENTS = Lazy(r"[A-Za-z0-9]+")


def generated_one_case(token: str) -> bool:
    """A long token of one letter case that reads as generated: a run of 20 or more letters
    and digits with no vowel rhythm of a word (entropy >= 4 bits a character), as keys in
    base32 or lower-case base36 are (``sk-`` and 48 lower-case letters, an Azure DevOps PAT).
    :func:`looks_random` wants two character classes and a digit; these may have neither."""
    if len(token) < 24 or len(token) > 256 or not token.isascii() or _UUID.match(token):
        return False
    if any(not (c.isalnum() or c in "-_") for c in token) or _HEX.match(token):
        return False
    longest = max((m.group() for m in _SEGMENTS.finditer(token)), key=len, default="")
    return len(longest) >= 20 and entropy(longest) >= 4.0


def base64_of_text(token: str) -> bool:
    """``token`` decodes as base64 to readable text (a code sample, not key material)."""
    raw = _b64(token, urlsafe=False)
    return raw is not None and bool(raw) and sum(32 <= b < 127 or b in (9, 10, 13) for b in raw) >= 0.9 * len(raw)
