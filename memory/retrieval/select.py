"""Selecting which records answer a query: the keyword fallback and the model's gated answer.

Two ways to pick at most ``limit`` record names for a query (DESIGN §7):

- :class:`KeywordIndex` — deterministic and fast, always available. The terms of
  :func:`memory.retrieval.tokens.terms` (the one layer recall, dedup and the offline model
  share: Snowball stems, stopwords dropped, a compound whole and its parts, Chinese character
  bigrams) of 3+ characters (:func:`tokenize`), scored
  BM25-style against name + description + body with per-field weights, rarer terms counting
  more and adjacent-word pairs as extra phrase terms. Ties go to higher importance, then to
  the smaller name, so the same set and query always give the same answer. (Pseudo-relevance
  feedback, prefix terms and co-occurrence expansion were measured on LoCoMo and left out:
  none moved recall@5 beyond noise and feedback lowered MRR.)
- :func:`model_select` — asks a :class:`memory.model.llm.Model` and accepts its answer only through
  the strict gate (:func:`check_selection`): the whole text must be a JSON array of at most
  ``limit`` distinct known names. Anything else falls back to the keyword index and the reason
  is returned, never raised.

Pure and I/O-free (stdlib plus memory.model.answer_gate and memory.model.llm): the caller passes candidates in.
The keyword half imports only light stdlib modules (no dataclasses, typing or YAML; the gate
is loaded when a model is asked): ``dreamd hook`` ranks memories with it at every prompt.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
from collections.abc import Collection, Iterable, Sequence

from memory.retrieval.tokens import (
    STOPWORDS,
    TERMS_VERSION,
    cjk_grams,
    is_cjk,
    parts,
    stem,
    terms,
    words,
)

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook must not pay for importing typing
if TYPE_CHECKING:
    from memory.model.answer_gate import AnswerRejected
    from memory.model.llm import Completion, Model

__all__ = [
    "MODEL_CANDIDATES",
    "STOPWORDS",
    "AnswerRejected",
    "Candidate",
    "IndexedDoc",
    "KeywordIndex",
    "check_selection",
    "index_doc",
    "keyword_select",
    "model_select",
    "plain_tokens",
    "selection_prompt",
    "stem",
    "tokenize",
]

# ----------------------------------------------------------------------------- tokens


def _raw_tokens(text: str) -> Iterable[str]:
    """The parts of 3+ characters of the words of ``text`` (:mod:`memory.retrieval.tokens`) and the
    bigrams of its Chinese runs, unstemmed, stopwords kept."""
    for word in words(text):
        if not word.isalnum():  # a compound word: its parts (a Chinese run is alphanumeric)
            yield from (part for part in parts(word) if len(part) >= 3)
        elif is_cjk(word):
            yield from cjk_grams(word)
        elif len(word) >= 3:
            yield word


def plain_tokens(text: str) -> list[str]:
    """DESIGN §7's plain tokens: lowercase English words of 3+ characters + Chinese bigrams."""
    return list(_raw_tokens(text))


def tokenize(text: str) -> list[str]:
    """Search terms of ``text`` in order: the terms of :func:`memory.retrieval.tokens.terms`
    (the one layer recall, dedup and the offline model share: Snowball stems, stopwords
    dropped, compounds whole and in parts, Chinese character bigrams) of 3+ characters, and
    every Chinese one. A two-character term ("go", "tv", "10") matches too many records to rank
    by; the offline model keeps them, where "use Go" is a whole rule."""
    return [t for t in terms(text) if len(t) >= 3 or is_cjk(t)]


def _with_pairs(tokens: list[str]) -> list[str]:
    """Adjacent English word pairs as phrase terms (``support group`` → ``support group``).

    Chinese bigrams already carry word order, so pairs are only made of two non-CJK terms.
    """
    pairs = []
    for a, b in itertools.pairwise(tokens):
        if not is_cjk(a) and not is_cjk(b):
            pairs.append(a + " " + b)
    return pairs


# ----------------------------------------------------------------------------- keyword index


class Candidate:
    """What selection sees of a record: never the file, only these values (immutable).

    A plain slotted class rather than a dataclass: importing ``dataclasses`` would triple the
    start-up cost of the hook that ranks memories at every prompt.
    """

    __slots__ = ("body", "description", "importance", "name", "type")
    name: str
    type: str
    description: str
    body: str
    importance: float

    def __init__(
        self, name: str, type: str, description: str, body: str = "", importance: float = 0.5
    ) -> None:
        for key, value in (
            ("name", name), ("type", type), ("description", description), ("body", body),
            ("importance", importance),
        ):  # fmt: skip
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"Candidate is immutable (cannot set {key})")

    def _key(self) -> tuple[str, str, str, str, float]:
        return (self.name, self.type, self.description, self.body, self.importance)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Candidate) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Candidate(name={self.name!r}, type={self.type!r}, description={self.description!r}, "
            f"body={self.body!r}, importance={self.importance!r})"
        )


FIELD_WEIGHTS: dict[str, float] = {"name": 2.0, "description": 1.5, "body": 1.0}
"""Field weights: a record's name and one-line description say what it is about; the body
mentions many things in passing."""
BODY_CHARS = 8192
"""Only the head of a body is indexed: recall shows at most 4 KiB of it anyway."""
PAIR_WEIGHT = 0.5
K1 = 1.2
B = 0.75


MODEL_CANDIDATES = 200
"""Most candidates shown to a model; a larger set is first narrowed by the keyword index."""


class IndexedDoc:
    """One candidate's weighted terms and field-weighted length, computed once per content.

    ``recall`` keeps these per record file and content hash, so after a commit only the records
    that changed are tokenized again. Immutable; a slotted class for the same reason as
    :class:`Candidate`.
    """

    __slots__ = ("candidate", "length", "terms")
    candidate: Candidate
    terms: dict[str, float]
    length: float

    def __init__(self, candidate: Candidate, terms: dict[str, float], length: float) -> None:
        object.__setattr__(self, "candidate", candidate)
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "length", length)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"IndexedDoc is immutable (cannot set {key})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexedDoc) and (self.candidate, self.terms, self.length) == (
            other.candidate,
            other.terms,
            other.length,
        )

    __hash__ = None  # type: ignore[assignment]  # terms is a dict, as with the frozen dataclass

    def __repr__(self) -> str:
        return f"IndexedDoc(candidate={self.candidate!r}, terms={self.terms!r}, length={self.length!r})"


def index_doc(cand: Candidate) -> IndexedDoc:
    """The term vector of ``cand``: name, description and the head of the body, by field weight."""
    terms: dict[str, float] = {}
    length = 0.0
    fields = (
        ("name", cand.name.replace("-", " ").replace("_", " ")),
        ("description", cand.description),
        ("body", cand.body[:BODY_CHARS]),
    )
    for field_name, text in fields:
        weight = FIELD_WEIGHTS[field_name]
        toks = tokenize(text)
        for tok in toks:
            terms[tok] = terms.get(tok, 0.0) + weight
        for pair in _with_pairs(toks):
            terms[pair] = terms.get(pair, 0.0) + weight * PAIR_WEIGHT
        length += weight * len(toks)
    return IndexedDoc(cand, terms, length)


IndexState = tuple[
    int, list[tuple[str, str, str, float, dict[str, float], float]], dict[str, dict[str, float]], float
]
"""What :meth:`KeywordIndex.state` returns: plain values ``marshal`` can store, the first the
:data:`memory.retrieval.tokens.TERMS_VERSION` its terms were made by."""


class KeywordIndex:
    """An inverted BM25F-style index over a set of candidates, updatable in place.

    :meth:`add` and :meth:`remove` change one candidate (``recall`` applies a commit's change
    instead of rebuilding); document frequencies and the average length are kept as counts, so
    IDF and length norms are computed at query time for the query's terms only. Scores depend
    only on the current candidates and the query, and ties go to importance desc then name, so
    results are reproducible across runs, processes and update orders.
    """

    def __init__(self, candidates: Sequence[Candidate] = (), *, docs: Sequence[IndexedDoc] = ()) -> None:
        self._lock = threading.RLock()  # recall threads query while a commit's change is applied
        self._docs: dict[str, IndexedDoc] = {}
        self._postings: dict[str, dict[str, float]] = {}
        self._total_length = 0.0
        for doc in docs:
            self.add(doc)
        for cand in candidates:
            self.add(index_doc(cand))

    def __len__(self) -> int:
        return len(self._docs)

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        with self._lock:
            return tuple(doc.candidate for doc in self._docs.values())

    def doc(self, name: str) -> IndexedDoc | None:
        return self._docs.get(name)

    def add(self, doc: IndexedDoc) -> None:
        """Index ``doc`` (replacing a candidate of the same name)."""
        name = doc.candidate.name
        with self._lock:
            if name in self._docs:
                self.remove(name)
            self._docs[name] = doc
            self._total_length += doc.length
            for term, tf in doc.terms.items():
                self._postings.setdefault(term, {})[name] = tf

    def remove(self, name: str) -> None:
        with self._lock:
            doc = self._docs.pop(name, None)
            if doc is None:
                return
            self._total_length -= doc.length
            for term in doc.terms:
                post = self._postings.get(term)
                if post is not None:
                    post.pop(name, None)
                    if not post:
                        del self._postings[term]

    def state(self) -> IndexState:
        """The index as plain values, for a cache on disk (``dreamd hook``): every document
        without its body (name, type, description, importance, terms, length), the postings
        and the total length, after the version of the terms. :meth:`from_state` restores it
        without tokenizing again."""
        with self._lock:
            docs = [
                (d.candidate.name, d.candidate.type, d.candidate.description,
                 d.candidate.importance, d.terms, d.length)
                for d in self._docs.values()
            ]  # fmt: skip
            return TERMS_VERSION, docs, self._postings, self._total_length

    @classmethod
    def from_state(cls, state: IndexState) -> KeywordIndex:
        """The index :meth:`state` was taken from (candidates without bodies). Raises
        ValueError for a state whose terms another version of :func:`tokenize` made: its
        terms would never meet a query's."""
        version, docs, postings, total = state
        if version != TERMS_VERSION:
            raise ValueError(f"term index of tokenizer version {version!r}, not {TERMS_VERSION}")
        index = cls()
        for name, type_, description, importance, doc_terms, length in docs:
            cand = Candidate(name, type_, description, "", importance)
            index._docs[name] = IndexedDoc(cand, doc_terms, length)
        index._postings, index._total_length = postings, total
        return index

    def query_weights(self, query: str) -> dict[str, float]:
        """Query terms and their weights: each distinct word once, word pairs at PAIR_WEIGHT."""
        toks = tokenize(query)
        weights = dict.fromkeys(toks, 1.0)
        for pair in _with_pairs(toks):
            weights.setdefault(pair, PAIR_WEIGHT)
        return weights

    def scores(self, query: str) -> dict[str, float]:
        """BM25F score of every candidate sharing a term with ``query`` (name → score)."""
        weights = self.query_weights(query)
        with self._lock:
            return self._scores(weights)

    def _scores(self, weights: dict[str, float]) -> dict[str, float]:
        n = len(self._docs)
        avg = (self._total_length / n) if n else 1.0
        avg = avg or 1.0
        docs = self._docs
        scores: dict[str, float] = {}
        for term in sorted(weights):
            post = self._postings.get(term)
            if not post:
                continue
            df = len(post)
            w = weights[term] * math.log(1 + (n - df + 0.5) / (df + 0.5))
            for name, tf in post.items():
                norm = K1 * (1 - B + B * docs[name].length / avg)
                scores[name] = scores.get(name, 0.0) + w * tf * (K1 + 1) / (tf + norm)
        return scores

    def select(
        self, query: str, limit: int = 5, *, exclude: Collection[str] = ()
    ) -> list[str]:
        """At most ``limit`` names, best first; candidates sharing no term are never chosen,
        nor those named in ``exclude`` (what a recall session already surfaced)."""
        with self._lock:
            if limit <= 0 or not self._docs:
                return []
            scores = self.scores(query)
            docs = self._docs
            return heapq.nsmallest(
                limit,
                (name for name, s in scores.items() if s > 0 and name not in exclude),
                key=lambda name: (-round(scores[name], 9), -docs[name].candidate.importance, name),
            )


def keyword_select(query: str, candidates: Sequence[Candidate], limit: int = 5) -> list[str]:
    """One-shot :meth:`KeywordIndex.select` (build + query)."""
    return KeywordIndex(candidates).select(query, limit)


# ----------------------------------------------------------------------------- model selection

SELECTION_SYSTEM = (
    "You choose which long-term memories are relevant to a request. You are given the "
    "request and a list of memories, each with a name, a type and a one-line description. "
    "Answer with a JSON array of the names of the memories that would clearly help with the "
    "request, most relevant first, at most LIMIT names, each name exactly as given and at most "
    "once. Answer [] if none would help. Output only the JSON array: no prose, no code fence."
)


def selection_prompt(
    query: str, candidates: Sequence[Candidate], limit: int
) -> tuple[str, str]:
    """The (system, prompt) pair for a selection call; the prompt ends with the payload."""
    system = SELECTION_SYSTEM.replace("LIMIT", str(limit))
    lines = [f"Request: {query}", "", "Memories:"]
    for c in candidates:
        lines.append(f"- {c.name} [{c.type}]: {c.description}")
    payload = {
        "task": "select",
        "query": query,
        "limit": limit,
        "candidates": [
            {"name": c.name, "type": c.type, "description": c.description} for c in candidates
        ],
    }
    from memory.model.llm import render_payload

    lines += ["", render_payload(payload)]
    return system, "\n".join(lines)


def check_selection(completion: Completion, known: set[str], limit: int) -> list[str]:
    """The strict gate for a selection answer; returns the names or raises AnswerRejected.

    Valid only when there are no tool calls, ``stop_reason == "end_turn"``, the text is not
    empty, the *whole* text parses as JSON (no fence stripping, no substring search), and it is
    an array of at most ``limit`` distinct strings, each a known name. The rules live in
    :mod:`memory.model.answer_gate`, shared with extraction and consolidation.
    """
    from memory.model import answer_gate as gate

    return gate.check_selection(completion, known=known, limit=limit)


def model_select(
    model: Model,
    query: str,
    candidates: Sequence[Candidate],
    limit: int,
    *,
    index: KeywordIndex | None = None,
    exclude: Collection[str] = (),
    max_tokens: int = 512,
    fallback: Sequence[str] | None = None,
) -> tuple[list[str], str | None]:
    """Names chosen by ``model``, or by the keyword index when its answer is not usable.

    Returns ``(names, fallback_reason)``; the reason is None when the model's answer was used.
    Never raises: a backend error or timeout is a fallback reason like any bad answer. Sets
    over :data:`MODEL_CANDIDATES` are narrowed by ``index`` first (the model only picks among
    what it was shown; when nothing shares a term with the query, no call is made). Names in
    ``exclude`` are neither shown nor chosen by the fallback. A caller that already made the
    keyword selection (``recall``, under its lock) passes it as ``fallback``.
    """
    if index is None and (fallback is None or len(candidates) > MODEL_CANDIDATES):
        index = KeywordIndex(candidates)
    shown = [c for c in candidates if c.name not in exclude]
    if not shown or limit <= 0:
        return [], None
    if len(shown) > MODEL_CANDIDATES:
        assert index is not None
        keep = set(index.select(query, MODEL_CANDIDATES, exclude=exclude))
        shown = [c for c in shown if c.name in keep]
        if not shown:
            return [], None
    from memory.model.answer_gate import AnswerRejected

    known = {c.name for c in shown}
    system, prompt = selection_prompt(query, shown, limit)
    try:
        completion = model.complete(system, prompt, max_tokens)
        return check_selection(completion, known, limit), None
    except AnswerRejected as exc:
        reason = f"model answer rejected: {exc}"
    except Exception as exc:  # any backend failure means "use the fallback"
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        reason = f"model call failed: {type(exc).__name__}" + (f": {first}" if first else "")
    if fallback is not None:
        return list(fallback), reason
    assert index is not None
    return index.select(query, limit, exclude=exclude), reason


def __getattr__(name: str) -> object:
    """``AnswerRejected`` stays importable from here without loading the gate eagerly."""
    if name == "AnswerRejected":
        from memory.model.answer_gate import AnswerRejected

        return AnswerRejected
    raise AttributeError(f"module 'memory.retrieval.select' has no attribute {name!r}")
