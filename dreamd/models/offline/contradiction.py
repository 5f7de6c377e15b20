"""Whether two one-line statements contradict: shared by extraction and the dream planner.

The offline extractor uses :func:`statements_contradict` to tell a correction ("don't mock the
DB" after "mock the DB") from a repeat, so the correction is kept under a fresh name; the planner
uses :func:`contradict` on a record's heads. A contradiction is a negation flipped over the same
words, two members of one group of :data:`ALTERNATIVES` over the same rest ("tabs" / "spaces"),
or one subject with two values ("the DB is Postgres" / "the DB is MySQL"). The planner never
merges on a contradiction alone: an explicit newer statement is needed (see
:mod:`dreamd.models.offline.plan.plan`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from dreamd.models.offline.text import (
    NEGATIONS,
    ZH_NEGATIONS,
    has_cjk,
    jaccard,
    raw_words,
    token_set,
    tokens,
)

ALTERNATIVES: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "tab space",
        "vim neovim nvim emacs vscode intellij pycharm sublime nano helix zed",
        "npm yarn pnpm bun",
        "pip poetry uv pipenv conda pdm",
        "pytest unittest nose",
        "jest vitest mocha jasmine",
        "postgres postgresql mysql mariadb sqlite mongodb mongo dynamodb",
        "light dark",
        "react vue angular svelte solid",
        "webpack vite esbuild rollup parcel",
        "single double",
        "camelcase snake_case kebab-case pascalcase",
        "rebase merge",
        "aws gcp azure",
        "bash zsh fish",
        "english chinese 英文 中文",
        "制表 空格",
        "true false",
        "on off",
        "enabled disabled",
    )
)
_GENERIC_SUBJECTS = token_set({"decision", "goal", "note", "决定", "目标", "目標", "deadline", "remember"})


_DIRECTIVE_WORDS = token_set({"always", "never", "dont", "avoid", "stop", "instead", "prefer",
                              "please", "use", "using"})
_ALTERNATIVE_TOKENS = tuple(group | token_set(group) for group in ALTERNATIVES)
"""Each group with its words as tokens give them (``spaces`` → ``space``)."""


def negated(text: str) -> bool:
    words = set(raw_words(text))
    if words & NEGATIONS:
        return True
    return any(neg in text for neg in ZH_NEGATIONS)


def _strip_negation(text: str) -> set[str]:
    for neg in ZH_NEGATIONS:
        text = text.replace(neg, " ")
    return tokens(text) - NEGATIONS - _DIRECTIVE_WORDS


def _first_alternative(text: str) -> tuple[int, str] | None:
    for word in raw_words(text):
        for i, group in enumerate(ALTERNATIVES):
            w = word if word in group or not word.endswith("s") else word[:-1]
            if w in group:
                return i, ("postgres" if w == "postgresql" else "neovim" if w == "nvim" else w)
    for i, group in enumerate(ALTERNATIVES):
        for member in group:
            if has_cjk(member) and member in text:
                return i, member
    return None


def _subject_value(text: str) -> tuple[set[str], set[str]] | None:
    m = re.match(r"^(?P<s>.+?)(?<!.\s)(?:\s+(?:is|are|was|were|will be)\s+|\s*[:：]\s*)(?P<v>.+)$", text, re.I)
    if not m:
        return None
    subj, value = tokens(m.group("s")), tokens(m.group("v"))
    if not subj or not value or subj <= _GENERIC_SUBJECTS or len(value) > 4:
        return None
    return subj, value


@dataclass(frozen=True)
class Statement:
    """What the contradiction rules need to know about one line, computed once."""

    tokens: frozenset[str]
    negated: bool
    without_negation: frozenset[str]
    alternative: tuple[int, str] | None
    without_alternative: frozenset[str]
    subject_value: tuple[set[str], set[str]] | None


@lru_cache(maxsize=8192)
def analyse(text: str) -> Statement:
    toks = frozenset(tokens(text))
    alt = _first_alternative(text)
    if alt:
        group = _ALTERNATIVE_TOKENS[alt[0]]
        without_alt = frozenset(t for t in toks if t not in group) - _DIRECTIVE_WORDS
    else:
        without_alt = frozenset()
    return Statement(
        tokens=toks,
        negated=negated(text),
        without_negation=frozenset(_strip_negation(text)),
        alternative=alt,
        without_alternative=without_alt,
        subject_value=_subject_value(text),
    )


def contradict(x: Statement, y: Statement) -> bool:
    if x.negated != y.negated:
        rx, ry = set(x.without_negation), set(y.without_negation)
        if rx and ry and jaccard(rx, ry) >= 0.75:
            return True
    ax, ay = x.alternative, y.alternative
    if ax and ay and ax[0] == ay[0] and ax[1] != ay[1]:
        rx, ry = set(x.without_alternative), set(y.without_alternative)
        if (not rx and not ry) or jaccard(rx, ry) >= 0.5:
            return True
    sx, sy = x.subject_value, y.subject_value
    return bool(sx and sy and jaccard(sx[0], sy[0]) >= 0.8 and jaccard(sx[1], sy[1]) < 0.5)


def statements_contradict(x: str, y: str) -> bool:
    """Whether two one-line statements say different things about the same subject."""
    return contradict(analyse(x), analyse(y))


__all__ = ["ALTERNATIVES", "Statement", "analyse", "contradict", "negated", "statements_contradict"]
