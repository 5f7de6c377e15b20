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

Each use builds its own layer on these words and nothing else:

* ranking (:mod:`memory.retrieval.select`) indexes a word's :func:`parts` (``node-18`` → ``node``,
  ``18``) of 3+ characters, stemmed, without stopwords, and a Chinese run's bigrams
  (:func:`cjk_grams`): a query for "node" finds "node-18";
* the offline model (``dreamd.models.offline.text``) keeps compound words whole
  (``node-18``, ``c++``) for names, patterns and duplicate detection, apostrophes dropped
  (``don't`` → ``dont``).

Pure, stdlib only (``re``, ``unicodedata``): ``dreamd hook`` imports it at every prompt.
"""

from __future__ import annotations

import re
import unicodedata

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Chinese characters (CJK Unified Ideographs, Extension A, Compatibility Ideographs)."""
CJK_RE = re.compile(rf"[{CJK}]")
CONNECTORS = "._'+#-"
"""Characters that join two letter/digit runs into one word."""

_ALNUM = rf"[^\W_{CJK}]"
_WORD_RE = re.compile(rf"[{CJK}]++|{_ALNUM}++(?:[._'+#-]{_ALNUM}++)*+(?:\+\+|[+#])?")
"""Possessive quantifiers (Python 3.11+): a run never gives characters back, so a word costs
one pass however its connectors fall."""
_PART_RE = re.compile(rf"{_ALNUM}+")


def normalize(text: str) -> str:
    """The form words are read from: NFKC, lowercase, curly apostrophes straightened."""
    return unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")


def words(text: str) -> list[str]:
    """The words of ``text`` in order (see the module docstring)."""
    return _WORD_RE.findall(normalize(text))


def is_cjk(word: str) -> bool:
    """Whether ``word`` (one of :func:`words`) is a run of Chinese characters."""
    return CJK_RE.match(word) is not None


def parts(word: str) -> list[str]:
    """The letter/digit runs a word is made of (``node-18`` → ``node``, ``18``; a simple word
    is its own only part). Not for Chinese runs: see :func:`cjk_grams`."""
    return [word] if word.isalnum() else _PART_RE.findall(word)


def cjk_grams(run: str) -> list[str]:
    """A Chinese run's character bigrams in order; a lone character stands for itself.
    Without word segmentation a bigram is the smallest unit that still carries meaning."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


__all__ = ["CJK", "CJK_RE", "CONNECTORS", "cjk_grams", "is_cjk", "normalize", "parts", "words"]
