"""Whether two one-line statements contradict: shared by extraction and the dream planner.

The offline extractor uses :func:`statements_contradict` to tell a correction ("don't mock the
DB" after "mock the DB") from a repeat, so the correction is kept under a fresh name; the planner
reads :func:`negated`. A contradiction is a negation flipped over the same
words, two members of one group of :data:`ALTERNATIVES` over the same rest ("tabs" / "spaces"),
or one subject with two values ("the DB is Postgres" / "the DB is MySQL"). The planner never
merges on a contradiction alone: an explicit newer statement is needed (see
:mod:`dreamd.models.offline.plan.plan`).
"""

from __future__ import annotations

import re
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


@lru_cache(maxsize=8192)
def _parts(text: str) -> tuple[bool, frozenset[str], tuple[int, str] | None, frozenset[str], tuple[set[str], set[str]] | None]:
    """What the rules read of one line, computed once: negated, its words without the negation,
    its first alternative, its words without that alternative's group, its subject and value."""
    alt = _first_alternative(text)
    without_alt = frozenset(tokens(text)) - _ALTERNATIVE_TOKENS[alt[0]] - _DIRECTIVE_WORDS if alt else frozenset()
    return negated(text), frozenset(_strip_negation(text)), alt, without_alt, _subject_value(text)


def statements_contradict(x: str, y: str) -> bool:
    """Whether two one-line statements say different things about the same subject."""
    (nx, rx, ax, wx, sx), (ny, ry, ay, wy, sy) = _parts(x), _parts(y)
    if nx != ny and rx and ry and jaccard(set(rx), set(ry)) >= 0.75:
        return True
    if ax and ay and ax[0] == ay[0] and ax[1] != ay[1] and ((not wx and not wy) or jaccard(set(wx), set(wy)) >= 0.5):
        return True
    return bool(sx and sy and jaccard(sx[0], sy[0]) >= 0.8 and jaccard(sx[1], sy[1]) < 0.5)


__all__ = ["ALTERNATIVES", "negated", "statements_contradict"]
