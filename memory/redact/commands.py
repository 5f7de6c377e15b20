"""Passwords given to a command on its command line: ``-p``, ``-u user:pw``, ``-N 'phrase'``.

A flag says nothing by itself (``-p`` is a port to ``ssh``, ``-u`` a uid to ``docker run``),
so each form is only read in a command that takes a credential there, found on the same line
before the flag: ``mysql``/``psql``/``docker login``/``sshpass`` for ``-p``, ``curl``/``wget``
and friends for ``-u user:password``, ``ssh-keygen`` for ``-N``/``-P`` (the new and the old
passphrase), ``redis-cli`` for ``-a``. The line is looked at back to its start, at most :data:`_LINE_BACK` characters.
"""

from __future__ import annotations

from memory.redact.engine import Anchors, Lazy, Span, register
from memory.redact.values import (
    is_placeholder,
    is_secret_value,
    looks_random,
    reads_as_non_secret,
)

_UUID = Lazy(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

_LINE_BACK = 400

_CLI_PASSWORD = Lazy(r"-[pP](?:\s+|(?=[^\s-]))(?P<q>\\?[\"']?)(?P<value>[^\s\"'\\`]{4,200})(?P=q)")
_CLI_CONTEXT = Lazy(
    r"(?i)(?:(?<=\\[nrt])|\b)(?:login\b|mysql\w*|sshpass\b|psql\b)|(?<![\w-])-[uU]\s*\S+"
)
# (?<=\\[nrt]): a command after a JSON escape ("…\nredis-cli -a …" in a transcript line), where
# \b sees no word start after the escape's letter
_USER_PASSWORD = Lazy(
    r"(?:-u|--user|--proxy-user)(?:\s+|=)?+(?P<q>\\?[\"']?)"
    r"(?P<user>[^\s:,\"'\\`]{1,64}+)[:,](?P<value>[^\s\"'\\`]{1,256}+)(?P=q)"
)
_USER_CONTEXT = Lazy(r"(?i)(?:(?<=\\[nrt])|\b)(?:curl|wget|https?|xh|httpie|aria2c|lftp|ftp|svn)\b")
_PASSPHRASE = Lazy(
    r"-[NP]\s++(?:(?P<quote>\\?[\"'])(?P<quoted>[^\"'\\\n]{1,200}+)(?P=quote)"
    r"|(?P<bare>[^\s\"'\\`-][^\s\"'\\`]{0,199}+))"
)
_PASSPHRASE_CONTEXT = Lazy(r"(?:(?<=\\[nrt])|\b)ssh-keygen\b")
_REDIS_CONTEXT = Lazy(r"(?:(?<=\\[nrt])|\b)redis-cli\b")
_REDIS_PASSWORD = Lazy(
    r"-a\s++(?:(?P<quote>\\?[\"'])(?P<quoted>[^\"'\\\n]{1,200}+)(?P=quote)"
    r"|(?P<bare>[^\s\"'\\`-][^\s\"'\\`]{0,199}+))"
)


class _Context:
    """Whether a command word occurs on the line before each flag, flags taken in order.

    Each character is searched once (the last match and the last line break are remembered):
    a flag repeated along one long line ("-p -p -p …") would otherwise search the same line
    again for each (quadratic)."""

    __slots__ = ("_break", "_hit", "_searched", "regex", "text")

    def __init__(self, text: str, regex: Lazy) -> None:
        self.text, self.regex = text, regex
        self._break = self._hit = -1
        self._searched = 0

    def before(self, at: int) -> bool:
        text = self.text
        lo = max(self._searched, at - _LINE_BACK, 0)
        if lo < at:
            for m in self.regex.finditer(text, max(0, lo - 32), at):  # 32: a word cut at lo
                self._hit = max(self._hit, m.start())
            self._break = max(self._break, text.rfind("\n", lo, at), text.rfind("\\n", lo, at))
            self._searched = at
        return self._hit > max(self._break, at - _LINE_BACK - 1)


def detect_cli_passwords(anchors: Anchors) -> list[Span]:
    """``-p <password>`` (``-P``) of ``docker login -u x -p …``, ``mysql -u root -pS3cret``,
    ``ipmitool -U admin -P …``: in a command that logs in or names a user first (``-p`` is a
    port or a path elsewhere), or anywhere when the value has the shape only a password has
    (letters, digits and a symbol such as ``!`` or ``#``: ``7z a -pS3cret!x``)."""
    text = anchors.text
    spans: list[Span] = []
    context = _Context(text, _CLI_CONTEXT)
    for pos in anchors.positions((" -p",)):
        at = pos + 1
        m = _CLI_PASSWORD.match(text, at)
        if m is None:
            continue
        value = m.group("value")
        attached = m.start("q") == at + 2  # mysql -pS3cret; "-p 5432" is a port
        digits_ok = attached and text[at + 1] == "p"  # -P3306: mysql's port, glued
        if context.before(at):
            if is_secret_value(value, digits_ok=digits_ok, quoted=False, min_len=4):
                spans.append((m.start("value"), m.end("value"), "password"))
        elif _password_shaped(value) and not is_placeholder(value):
            spans.append((m.start("value"), m.end("value"), "password"))
    return spans


_PASSWORD_SHAPE = Lazy(
    r"(?=[^/=:,.]*[A-Za-z])(?=[^/=:,.]*\d)(?=[^/=:,.]*[!#%&*@^~?])[^/=:,.]{6,64}$"
)


def _password_shaped(value: str) -> bool:
    """Letters, digits and a symbol a name, a path, a number or a pattern does not hold
    (``!#%&*@^~?``), and none of ``/=:,.``: the shape a flag's value has only as a password."""
    return _PASSWORD_SHAPE.match(value) is not None and not reads_as_non_secret(value)


def detect_user_passwords(anchors: Anchors) -> list[Span]:
    """The password of ``curl -u user:password`` (``--user``, ``--proxy-user``, wget…): any
    value but a placeholder (``-u "$USER:$TOKEN"``), digits too."""
    return _pair_passwords(anchors, (" -u", "--user", "--proxy-user"), _USER_CONTEXT, _USER_PASSWORD)


def _pair_passwords(
    anchors: Anchors, flags: tuple[str, ...], context_regex: Lazy, pair: Lazy, *, upper: bool = False
) -> list[Span]:
    """The password half of a ``user<sep>password`` pair after a flag, in a command that
    ``context_regex`` names on the line before it; ``upper``: only the flag's capital
    (``-U``, not ``-u``)."""
    text = anchors.text
    spans: list[Span] = []
    context = _Context(text, context_regex)
    for pos in anchors.positions(flags):
        at = pos + 1 if text[pos] == " " else pos
        if upper and not text[at + 1 : at + 2].isupper():
            continue
        if not context.before(at):
            continue
        m = pair.match(text, at)
        if m is None:
            continue
        value = m.group("value")
        if not reads_as_non_secret(value) and not is_placeholder(m.group("user") + value):
            spans.append((m.start("value"), m.end("value"), "password"))
    return spans


def detect_passphrases(anchors: Anchors) -> list[Span]:
    """``ssh-keygen … -N 'new passphrase'`` and ``-P 'old one'``; an empty one is no secret."""
    text = anchors.text
    spans: list[Span] = []
    context = _Context(text, _PASSPHRASE_CONTEXT)
    for pos in anchors.positions((" -n", " -p")):
        at = pos + 1
        if text[at + 1 : at + 2] not in ("N", "P") or not context.before(at):
            continue
        m = _PASSPHRASE.match(text, at)
        if m is None:
            continue
        group = "quoted" if m.group("quoted") is not None else "bare"
        value = m.group(group)
        if value.strip() and not is_placeholder(value) and not reads_as_non_secret(value):
            spans.append((m.start(group), m.end(group), "password"))
    return spans


def _flag_passwords(anchors: Anchors, flag: str, context: Lazy, password: Lazy) -> list[Span]:
    """The value after `` -<flag>`` (quoted or bare) of a command ``context`` names before it."""
    text = anchors.text
    spans: list[Span] = []
    named = _Context(text, context)
    for pos in anchors.positions((f" -{flag}",)):
        at = pos + 1
        if text[at + 1 : at + 2] != flag or not named.before(at):
            continue
        m = password.match(text, at)
        if m is None:
            continue
        group = "quoted" if m.group("quoted") is not None else "bare"
        value = m.group(group)
        if not is_placeholder(value) and not reads_as_non_secret(value):
            spans.append((m.start(group), m.end(group), "password"))
    return spans


def detect_redis_passwords(anchors: Anchors) -> list[Span]:
    """``redis-cli -a <password>``."""
    return _flag_passwords(anchors, "a", _REDIS_CONTEXT, _REDIS_PASSWORD)


_LDAP_CONTEXT = Lazy(r"(?:(?<=\\[nrt])|\b)ldap[a-z]*\b")
_LDAP_PASSWORD = Lazy(
    r"-w\s++(?:(?P<quote>\\?[\"'])(?P<quoted>[^\"'\\\n]{1,200}+)(?P=quote)"
    r"|(?P<bare>[^\s\"'\\`-][^\s\"'\\`]{0,199}+))"
)


def detect_ldap_passwords(anchors: Anchors) -> list[Span]:
    """``ldapsearch … -w <bind password>`` (ldapadd, ldapmodify, ldapwhoami…; ``-W`` prompts)."""
    return _flag_passwords(anchors, "w", _LDAP_CONTEXT, _LDAP_PASSWORD)


_SECURE_STRING = Lazy(
    r"(?i:convertto-securestring)\s+(?:-String\s+)?(?P<q>\\?[\"'])(?P<value>[^\"'\\\n]{1,256})(?P=q)"
    r"(?=[^\n]{0,40}-AsPlainText)"
)


def detect_plaintext_secure_strings(anchors: Anchors) -> list[Span]:
    """PowerShell's ``ConvertTo-SecureString '<password>' -AsPlainText``: a password in clear."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("convertto-securestring",)):
        m = _SECURE_STRING.match(text, pos)
        if m is not None and not is_placeholder(m.group("value")):
            spans.append((m.start("value"), m.end("value"), "password"))
    return spans


_AUTH_ARG = Lazy(
    r"(?:auth|login|authenticate)[ \t]+(?:--?[a-z-]+[ \t]+)?(?P<value>[A-Za-z0-9_-]{20,256})(?![\w.:/-])"
)


def detect_auth_command_tokens(anchors: Anchors) -> list[Span]:
    """``<tool> auth <token>``, ``<tool> login <key>``: a CLI given its API token as the
    argument of its auth or login command; a UUID counts there (snyk, and others)."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("auth ", "login ", "authenticate ")):
        if pos and text[pos - 1] not in " \t":
            continue
        m = _AUTH_ARG.match(text, pos)
        if m is None:
            continue
        value = m.group("value")
        if (_UUID.match(value) or looks_random(value)) and not reads_as_non_secret(value):
            spans.append((m.start("value"), m.end("value"), "api-key"))
    return spans


_ECHO_TO_KEY = Lazy(
    r"echo[ \t]+(?:-n[ \t]+)?(?P<q>[\"']?)(?P<value>[^\s\"'`|>]{8,512})(?P=q)[ \t]*>>?[ \t]*"
    r"(?P<file>[^\s|;&\"'\\]{1,200})"
)
_KEY_FILE = Lazy(
    r"(?i)(?:^|[/\\._-]|(?-i:(?<=[a-z])(?=[A-Z])))(?:master|secret|private|api|access)?[._-]?"
    r"(?:key|secret|token|password|passwd|pass|auth|credentials?)(?:\.[a-z0-9]{1,5})?$"
)  # (?-i:…): a camel-case name's last word (initialAdminPassword)


def detect_echo_to_key_files(anchors: Anchors) -> list[Span]:
    """``echo <value> > <dir>/secret.key``: what is written to a file named for a secret."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("echo ",)):
        m = _ECHO_TO_KEY.match(text, pos)
        if m is None or _KEY_FILE.search(m.group("file")) is None:
            continue
        value = m.group("value")
        if (looks_random(value) or is_secret_value(value, digits_ok=False, quoted=True)) and not (
            reads_as_non_secret(value)
        ):
            spans.append((m.start("value"), m.end("value"), "secret"))
    return spans


_PRINT_FILE = Lazy(
    r"(?:cat|type|head|tail|Get-Content)[ \t]+(?:-[A-Za-z0-9]+[ \t]+)*"
    r"(?P<q>[\"']?)(?P<file>[^\s|;&<>\"'\\]{1,200})(?P=q)[ \t]*(?:\r?\n|\\n)"
)
_PRINTED_LINE = Lazy(r"[ \t]*(?:⎿[ \t]*)?(?P<value>[^\s\"'`\\]{4,256})[ \t]*(?=\r?\n|\\n|$)")
_PRINTED_LINES = 6
_SOURCE_FILE = Lazy(r"(?i)\.(?:py|js|ts|go|rb|rs|java|kt|c|h|cc|cpp|cs|php|sh|md|rst|html?|css)$")


def detect_printed_key_files(anchors: Anchors) -> list[Span]:
    """``cat auth.txt`` (``type``, ``head``, ``Get-Content``…) of a file named for a secret and
    the lines it printed, and the lines under a comment line that opens with such a file's name
    (``# .vault_pass``): each line of one made-up or generated token is what the file keeps (a
    user name or a word on its own line is not)."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(_PRINT_COMMANDS):
        if _COMMAND_START.search(text, max(0, pos - 4), pos) is None:
            continue  # a command starts a line or follows a prompt: "cat" in a sentence does not
        m = _PRINT_FILE.match(text, pos)
        if m is None or _KEY_FILE.search(m.group("file")) is None:
            continue
        if _SOURCE_FILE.search(m.group("file")) is not None:
            continue  # auth.py, token.go: code about a credential, not one
        _file_lines(text, m.end(), spans)
    for pos in anchors.positions(_HEADED_WORDS):
        lo = max(0, pos - 64)
        escaped = text.rfind("\\n", lo, pos)
        start = max(text.rfind("\n", lo, pos) + 1, escaped + 2 if escaped != -1 else 0)
        if start == 0 and lo > 0:
            continue
        m = _HEADED_FILE.match(text, start)
        if m is None or not m.start("file") <= pos < m.end("file"):
            continue
        if _KEY_FILE.search(m.group("file")) is None or _SOURCE_FILE.search(m.group("file")):
            continue
        _file_lines(text, m.end(), spans)
    return spans


def _file_lines(text: str, at: int, spans: list[Span], *, indented: bool = False) -> None:
    """The lines from ``at`` on that a file named for a secret holds: each line of one made-up
    or generated token (a user name or a word on its own line is not); ``indented``: a tool
    display's output, whose lines after the first are indented (the next line that is not is
    no longer the output)."""
    for n in range(_PRINTED_LINES):
        if indented and n and text[at : at + 1] not in (" ", "\t"):
            break
        line = _PRINTED_LINE.match(text, at)
        if line is None:
            break  # a blank line, a prompt, a sentence: the output ended
        value = line.group("value")
        if (looks_random(value) or is_secret_value(value, digits_ok=False, quoted=False)) and (
            not reads_as_non_secret(value)
        ):
            spans.append((line.start("value"), line.end("value"), "secret"))
        at = line.end()
        at += 2 if text.startswith(("\r\n", "\\n"), at) else 1


_SHOWN_COMMAND = Lazy(r"[ \t]*(?:[●⏺•][ \t]*)?$")
_SHOWN_OUTPUT = Lazy(r"\)[ \t]*(?:\r?\n|\\n)[ \t]*⎿")
_PROMPT_LINE = Lazy(r"[^\n\\]{1,400}?(?=\r?\n|\\n)")
_COMMAND_WORD = Lazy(r"[^\s|;&<>\"'`\\(){}$=,:\[\]]+")


def detect_shown_secret_outputs(anchors: Anchors) -> list[Span]:
    """What a command printed in Claude Code's tool display (``● Bash(<command>)``, then the
    output under ``⎿``) or after a terminal's ``$`` prompt at a line's start, when a word of
    the command names a secret or a secret's file (``cat config/master.key``, ``kubectl get
    secret … | base64 -d``, ``…/initialAdminPassword``): each output line of one made-up or
    generated token is the secret printed."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("bash(", "$ ")):
        lo = max(0, pos - 8)
        escaped = text.rfind("\\n", lo, pos)
        start = max(text.rfind("\n", lo, pos) + 1, escaped + 2 if escaped != -1 else 0)
        if (start == 0 and lo > 0) or _SHOWN_COMMAND.match(text, start, pos) is None:
            continue
        prompt = text[pos] == "$"  # a terminal's prompt: the command is the rest of its line
        if prompt:
            shown = _PROMPT_LINE.match(text, pos + 2)
        else:
            shown = _SHOWN_OUTPUT.search(text, pos, pos + _LINE_BACK)
        if shown is None:
            continue
        command_end = shown.end() if prompt else shown.start()
        words = (w.group() for w in _COMMAND_WORD.finditer(text, pos + 2, command_end))
        if any(_KEY_FILE.search(w) and not _SOURCE_FILE.search(w) for w in words):
            at = shown.end()
            if prompt:
                at += 2 if text.startswith("\\n", at) else 1
            _file_lines(text, at, spans, indented=not prompt)
    return spans


_HEADED_WORDS = ("pass", "auth")
_HEADED_FILE = Lazy(
    r"[ \t]*(?:#|//)[ \t]*(?P<file>[\w./~-]{1,128}?)"
    r"(?:[ \t]+(?:\([^)\n]{0,40}\)|for[ \t][^\n]{0,60}))?[ \t]*(?:\r?\n|\\n)"
)
"""A comment line that opens with a file's name (``# .vault_pass (chmod 600)``, ``# auth.txt
for openvpn``) and then the file's lines: what a file named for a secret holds."""


_PRINT_COMMANDS = ("cat ", "type ", "head ", "tail ", "get-content ")
_COMMAND_START = Lazy(r"(?:^|\n|\\n|[$#>%] |`)[ \t]*$")


_POSITIONAL = Lazy(
    r"""(?ix)
      htpasswd(?:\s+-[a-z]+)*?\s+-[a-z]*b[a-z]*(?:\s+-[a-z]+)*\s+\S+\s+\S+\s+   # htpasswd -b [-c] <file> <user> <pw>
    | rabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+
    | net\s+use\s[^\n]{0,120}?/user:\S+\s+         # net use Z: \\host\share /user:dom\u <password>
    | identified\s+by\s+(?:password\s+)?            # SQL: CREATE USER … IDENTIFIED BY '<password>'
    """
)
_POSITIONAL_VALUE = Lazy(r"(?P<q>\\?[\"'`]?)(?P<value>[^\s\"'`\\;]{1,256})(?P=q)")
_CHPASSWD_VALUE = Lazy(
    r"(?:echo|printf)[ \t]+(?:-[en][ \t]+)?(?P<q>\\?[\"']?)[A-Za-z_][\w.-]{0,31}:"
    r"(?P<value>[^\s\"'`|\\:]{1,256})(?P=q)[ \t]*\|[^|\n]{0,40}?\bchpasswd\b"
)  # echo 'user:password' | sudo chpasswd
_STDIN_VALUE = Lazy(
    r"(?:echo|printf)[ \t]+(?:-n[ \t]+)?(?P<q>\\?[\"']?)(?P<value>[^\s\"'`|\\]{4,256})(?P=q)[ \t]*\|"
    r"[^|\n]{0,200}?(?:--password-stdin|\bsudo[ \t]+(?:-[A-Za-z]+[ \t]+)*?-[A-Za-z]*S\b)"
)  # docker login --password-stdin; sudo -S reads its password from stdin


def detect_positional_passwords(anchors: Anchors) -> list[Span]:
    """A password where a command takes it as a plain argument: ``htpasswd -b file user pw``,
    ``rabbitmqctl add_user user pw``, ``net use … /user:u pw``, SQL's ``IDENTIFIED BY 'pw'``,
    ``echo pw | … --password-stdin`` and ``echo 'user:pw' | chpasswd``."""
    text = anchors.text
    spans: list[Span] = []
    for pos in anchors.positions(("htpasswd", "rabbitmqctl", "net use", "identified by")):
        m = _POSITIONAL.match(text, pos)
        if m is None:
            continue
        v = _POSITIONAL_VALUE.match(text, m.end())
        if v is not None and not is_placeholder(v.group("value")) and not reads_as_non_secret(
            v.group("value")
        ):
            spans.append((v.start("value"), v.end("value"), "password"))
    for pos in anchors.positions(("echo ", "printf ")):
        m = None
        stdin = text.find("--password-stdin", pos, pos + 300) != -1
        if stdin or text.find("sudo", pos, pos + 300) != -1:
            m = _STDIN_VALUE.match(text, pos)
        if m is None and text.find("chpasswd", pos, pos + 300) != -1:
            m = _CHPASSWD_VALUE.match(text, pos)
        if m is not None and not is_placeholder(m.group("value")):
            spans.append((m.start("value"), m.end("value"), "password"))
    return spans


_SAMBA_CONTEXT = Lazy(
    r"(?i)(?:(?<=\\[nrt])|\b)(?:smbclient|rpcclient|smbcacls|smbget|smbmap|smbtree|net|winexe)\b"
)
_SAMBA_USER = Lazy(
    r"-U[ \t]*+(?P<q>\\?[\"']?)(?P<user>[^\s%\"'`]{1,96}+)%(?P<value>[^\s\"'\\`]{1,256}+)(?P=q)"
)


def detect_samba_user_passwords(anchors: Anchors) -> list[Span]:
    """Samba's ``-U 'DOMAIN\\user%password'`` (smbclient, rpcclient, net …): the part after
    the ``%`` is the password, as after the ``:`` of ``curl -u``."""
    return _pair_passwords(anchors, (" -u",), _SAMBA_CONTEXT, _SAMBA_USER, upper=True)


register(" -p", " -u", "--user", "--proxy-user", " -n", " -a", " -w", "convertto-securestring")
register("htpasswd", "rabbitmqctl", "net use", "identified by", "printf ")
register("auth ", "login ", "authenticate ", "echo ", "bash(", "$ ", *_PRINT_COMMANDS)
COMMAND_DETECTORS = (
    detect_cli_passwords,
    detect_user_passwords,
    detect_passphrases,
    detect_redis_passwords,
    detect_ldap_passwords,
    detect_plaintext_secure_strings,
    detect_auth_command_tokens,
    detect_echo_to_key_files,
    detect_positional_passwords,
    detect_samba_user_passwords,
    detect_printed_key_files,
    detect_shown_secret_outputs,
)
