"""The words that tie one clause to another (a reason, an otherwise, a purpose, the other way): one definition each.

Every rule of the offline engine that asks whether a clause gives a reason or names the other
way builds its pattern from these lexicons (issue 19: they had been spelt out in nine regexes
across eight modules, each with its own subset). Each is a regex alternation of plain words; no
member is a prefix of another ending on a word boundary, so their order never changes a match.
"""

from __future__ import annotations

REASON_EN = "because|since"
REASON_ZH = "因为|因為|由于|由於"
OTHERWISE_EN = "otherwise|or else"  # "…; otherwise the cache goes stale", "…, or else."
OTHERWISE_EN_OPENING = f"{OTHERWISE_EN}|else"  # at a clause's start a bare "else" says it too
OTHERWISE_ZH = "否则|否則|不然|要不然"
LEST_ZH = "免得|以免|省得"  # "…，免得锁文件乱"
PURPOSE_EN = "so that"
PURPOSE_ZH = "为了|為了"
INSTEAD_EN = "instead of|rather than"  # the other way, named: "X instead of Y", "we use X, not Y"
OTHER_WAY_EN = f"not|never|{INSTEAD_EN}"  # "use X, not Y", "X, never Y", "X instead of Y"
ALTERNATIVE_NEXT_EN = r"(?:instead[,:]?\s+)?(?:use|prefer|run|write|call|go with)\b"
"""The sentence after a prohibition that says what to do instead ("Don't mock the DB. Use …")."""
