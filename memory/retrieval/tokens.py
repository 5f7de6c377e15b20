"""What a word is: the one definition recall, dedup and the offline model are built on.

Text is read NFKC-normalised and lowercased, with curly apostrophes straightened. A *word* is
then either

* a run of Chinese characters (``用户喜欢``), split from Latin text around it
  (``使用tabs缩进`` → ``使用``, ``tabs``, ``缩进``); or
* a run of letters and digits of any other script (``café``, ``k8s``, ``2023``), where a
  single connector between two runs joins them into one word — ``.`` (``a.b``, ``v1.2``,
  ``3.14``), ``-`` (``node-18``, ``2023-05-07``), ``_`` (``snake_case``), ``'`` (``don't``),
  ``+`` and ``#`` — and a final ``+``/``++``/``#`` belongs to the word (``c++``, ``c#``).

Everything else separates words: spaces, punctuation, ``/``, ``@``, ``:`` and a connector
that does not sit between two runs (``end.``, ``--flag``, ``'quoted'``).

On these words sits the one layer every use shares, :func:`terms` — what recall ranks by and
what the offline model's duplicate detection and similarity compare:

* a Chinese run gives its character bigrams (:func:`cjk_grams`; a lone character stands for
  itself), those of :data:`STOPWORDS` left out; Chinese is otherwise left as it is;
* apostrophes are dropped (``don't`` → ``dont``);
* a simple word of 2+ characters that is not one of :data:`STOPWORDS` gives its Snowball
  (Porter2) English stem (:func:`stem`): ``indent``/``indentation``/``indenting`` → ``indent``,
  ``deploy``/``deployment``/``deployed`` → ``deploy``;
* a compound word (``node-18``, ``c++``, ``v1.2``) gives itself, whole, then the stems of its
  parts of 3+ characters (:func:`parts`), so "node" finds "node-18" and "node-18" is still a
  term of its own (the offline model, comparing sets, keeps only the whole: ``compound_parts``).

Recall ranks by the terms of 3+ characters (:func:`memory.retrieval.select.tokenize`); the
offline model compares the set of all of them, compounds whole
(``dreamd.models.offline.text.tokens``). :func:`terms`
is a pure function of the text, so an index cached on disk (``dreamd hook``) can be trusted
while :data:`TERMS_VERSION` is the same.

Stdlib (``re``, ``unicodedata``) plus PyStemmer, a small C extension of the Snowball stemmers,
imported at the first :func:`stem` (~1 ms): ``dreamd hook`` imports this module at every prompt.
"""

from __future__ import annotations

import re
import unicodedata

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook must not pay for importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Chinese characters (CJK Unified Ideographs, Extension A, Compatibility Ideographs)."""
_CJK_SPANS = (("\u3400", "\u4dbf"), ("\u4e00", "\u9fff"), ("\uf900", "\ufaff"))
""":data:`CJK` as (first, last) pairs: :func:`is_cjk` compares characters instead of matching."""
CONNECTORS = "._'+#-"
"""Characters that join two letter/digit runs into one word."""

_ALNUM = rf"[^\W_{CJK}]"
_WORD = rf"[{CJK}]++|{_ALNUM}++(?:[._'+#-]{_ALNUM}++)*+(?:\+\+|[+#])?"
"""Possessive quantifiers (Python 3.11+): a run never gives characters back, so a word costs
one pass however its connectors fall."""
_ASCII_WORD = r"[a-z0-9]++(?:[._'+#-][a-z0-9]++)*+(?:\+\+|[+#])?"
""":data:`_WORD` for normalised ASCII text, where a letter/digit of any script other than
Chinese is ``[a-z0-9]`` (lowercased, no ``_``) and no Chinese run can occur: the same words."""

_patterns: dict[str, re.Pattern[str]] = {}


def _pattern(source: str) -> re.Pattern[str]:
    """``re.compile(source)``, at its first use. The patterns over :data:`CJK` cost 1–3 ms each
    to compile (the character class is filled one code point at a time), which every command
    that imports this module paid at import (issue 20); ASCII text never needs them."""
    pattern = _patterns.get(source)
    if pattern is None:
        pattern = _patterns[source] = re.compile(source)
    return pattern


def __getattr__(name: str) -> object:
    """:data:`CJK_RE` (``[CJK]``, for ``.match``/``.search``), compiled at its first use."""
    if name == "CJK_RE":
        return _pattern(rf"[{CJK}]")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    CJK_RE: re.Pattern[str]


def normalize(text: str) -> str:
    """The form words are read from: NFKC, lowercase, curly apostrophes straightened."""
    return unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")


def words(text: str) -> list[str]:
    """The words of ``text`` in order (see the module docstring)."""
    return _words_of(normalize(text))


def _words_of(normal: str) -> list[str]:
    """:func:`words` of a text already normalised."""
    return _pattern(_ASCII_WORD if normal.isascii() else _WORD).findall(normal)


def is_cjk(word: str) -> bool:
    """Whether ``word`` (one of :func:`words`) is a run of Chinese characters (whether it starts
    with one, as ``CJK_RE.match``)."""
    first = word[:1]
    return any(low <= first <= high for low, high in _CJK_SPANS)


def parts(word: str) -> list[str]:
    """The letter/digit runs a word is made of (``node-18`` → ``node``, ``18``; a simple word
    is its own only part). Not for Chinese runs: see :func:`cjk_grams`."""
    return [word] if word.isalnum() else _part_runs(word)


def _part_runs(word: str) -> list[str]:
    return _pattern("[A-Za-z0-9]+" if word.isascii() else rf"{_ALNUM}+").findall(word)


def cjk_grams(run: str) -> list[str]:
    """A Chinese run's character bigrams in order; a lone character stands for itself.
    Without word segmentation a bigram is the smallest unit that still carries meaning."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


_STOPWORD_TEXT = """
    a an the and or but if of to in on at by for from with into onto as is are was were be been
    being am do does did done doing it its itself this that these those there here then than so
    such very just also too not no yes my me mine myself we our ours ourselves you your yours
    yourself yourselves he she they them their theirs themselves his him himself her hers
    herself i im ive id ill s t about over under up down out off again more most some any all
    each every either neither both few other others another own same anyone anything whatever
    whoever whose which who whom what when where why how can cannot could should would will
    shall may might must ought let lets has have had having aren isn wasn weren don doesn didn
    hasn haven hadn couldn shouldn wouldn mustn shan won even ever else now once only quite
    rather thus yet however much user users re ll ve d m
    用户 用戶 我们 我們 一个 一個 这个 這個 那个 那個 的是 是的
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
"""Words that match everything and distinguish nothing: English articles, pronouns,
auxiliaries and hedges, "user" (every record says it), and a few Chinese bigrams. Words that
relate one thing to another stay terms — "before"/"after", "without", "until", "because": "run
the tests before pushing" and "after pushing" are two rules — and so does a contraction's
negation once its apostrophe is dropped (``don't`` → ``dont``)."""

TERMS_VERSION = 2
"""Changes whenever :func:`terms` gives different terms for some text (1: recall's light
hand-written stemmer; 2: Snowball, one stopword list, compounds whole and in parts), so that a
term index stored on disk by an older version is rebuilt, never trusted."""

_stem_word: Callable[[str], str] | None = None
_stem_cache: dict[str, str] = {}
_STEM_CACHE_LIMIT = 100_000


def stem(word: str) -> str:
    """The Snowball English (Porter2) stem of a lowercase word of 3+ ASCII letters; any other
    word (digits, accents, other scripts, two letters) unchanged.

    Snowball rather than a hand-written stripper: it is the stemmer search engines have used
    for twenty years, kept by its authors, and it conflates derivations (``indentation`` →
    ``indent``, ``deployment`` → ``deploy``) that plural stripping never reaches. Odd stems
    (``always`` → ``alway``) are harmless because queries and records go through the same
    function. PyStemmer is imported at the first call; results are memoised.
    """
    got = _stem_cache.get(word)
    if got is not None:
        return got
    if len(word) <= 2 or not word.isascii() or not word.isalpha():
        return word
    global _stem_word
    if _stem_word is None:
        import Stemmer

        _stem_word = Stemmer.Stemmer("english").stemWord
    got = _stem_word(word)
    if len(_stem_cache) >= _STEM_CACHE_LIMIT:
        _stem_cache.clear()
    _stem_cache[word] = got
    return got


def terms(text: str, *, compound_parts: bool = True) -> list[str]:
    """The terms of ``text`` in order: the one layer recall, dedup and the offline model share
    (see the module docstring).

    ``compound_parts=False`` leaves out a compound word's parts: the offline model compares
    statements by their term *sets*, where a URL, a version or a date is one value —
    ``a.example.com`` and ``b.example.com`` share no term then, while their parts would make
    the two values look mostly alike."""
    out: list[str] = []
    normal = normalize(text)
    chinese = not normal.isascii()  # an ASCII text has no Chinese run: no word is looked at for one
    for word in _words_of(normal):
        if chinese and is_cjk(word):
            out.extend(gram for gram in cjk_grams(word) if gram not in STOPWORDS)
            continue
        if "'" in word:
            word = word.replace("'", "")
        if word.isalnum():
            if len(word) >= 2 and word not in STOPWORDS:
                out.append(stem(word))
        else:
            out.append(word)
            if compound_parts:
                out.extend(stem(p) for p in _part_runs(word) if len(p) >= 3 and p not in STOPWORDS)
    return out


__all__ = [
    "CJK",
    "CJK_RE",
    "CONNECTORS",
    "STOPWORDS",
    "TERMS_VERSION",
    "cjk_grams",
    "is_cjk",
    "normalize",
    "parts",
    "stem",
    "terms",
    "words",
]
