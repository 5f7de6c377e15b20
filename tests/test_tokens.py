"""One tokenizer (memory.retrieval.tokens): words, then the terms recall ranks by and the offline model compares."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dreamd.models.offline.text import make_name, raw_words, tokens
from memory.retrieval.select import plain_tokens, tokenize
from memory.retrieval.tokens import (
    CJK,
    CONNECTORS,
    cjk_grams,
    is_cjk,
    normalize,
    parts,
    stem,
    terms,
    words,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use node-18, c++ and a.b", ["use", "node-18", "c++", "and", "a.b"]),
        ("C# or F#? g++ -O2", ["c#", "or", "f#", "g++", "o2"]),
        ("v1.2.3 shipped 2023-05-07 at 10:30, 1,000 users", ["v1.2.3", "shipped", "2023-05-07", "at", "10", "30", "1", "000", "users"]),
        ("don't / user’s / users' / 'quoted'", ["don't", "user's", "users", "quoted"]),
        ("MAX_RETRIES in snake_case, __init__", ["max_retries", "in", "snake_case", "init"]),
        ("end. --flag e.g. x@y.com src/app.py", ["end", "flag", "e.g", "x", "y.com", "src", "app.py"]),
        ("Café naïve Ünïcode k8s", ["café", "naïve", "ünïcode", "k8s"]),
        ("使用tabs缩进，用户喜欢制表符", ["使用", "tabs", "缩进", "用户喜欢制表符"]),
        ("ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ", ["full-width", "abc"]),
    ],
)
def test_words_keep_compounds_whole_and_split_at_everything_else(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_parts_and_cjk_grams_are_the_layers_ranking_builds_from() -> None:
    assert parts("node-18") == ["node", "18"]
    assert parts("c++") == ["c"]
    assert parts("don't") == ["don", "t"]
    assert parts("k8s") == ["k8s"]
    assert cjk_grams("用户喜欢") == ["用户", "户喜", "喜欢"]
    assert cjk_grams("我") == ["我"]
    assert is_cjk("用户") and not is_cjk("users")


def test_recall_and_the_offline_model_share_one_layer_of_terms() -> None:
    text = "Pin node-18 for the c++ build; don’t touch a.b 使用tabs"
    assert words(text) == ["pin", "node-18", "for", "the", "c++", "build", "don't", "touch", "a.b", "使用", "tabs"]
    # the one layer: stems, stopwords dropped, apostrophes dropped, compounds whole then their
    # parts of 3+ characters, Chinese bigrams
    assert terms(text) == ["pin", "node-18", "node", "c++", "build", "dont", "touch", "a.b", "使用", "tab"]
    assert tokenize(text) == terms(text)
    # the offline model: the same terms as a set, a compound one value (no parts)
    assert tokens(text) == set(terms(text, compound_parts=False))
    assert tokens(text) == {"pin", "node-18", "c++", "build", "dont", "touch", "a.b", "使用", "tab"}
    assert plain_tokens(text) == ["pin", "node", "for", "the", "build", "don", "touch", "使用", "tabs"]
    assert raw_words(text) == ["pin", "node-18", "for", "the", "c++", "build", "dont", "touch", "a.b", "使用", "tabs"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("indent", "indentation"),
        ("deploy", "deployment"),
        ("deployed", "deploys"),
        ("configure", "configuration"),
        ("migrating", "migration"),
        ("stories", "story"),
    ],
)
def test_derived_forms_of_a_word_give_one_term(a: str, b: str) -> None:
    assert terms(a) == terms(b) == [stem(a)]


@pytest.mark.parametrize("word", ["café", "k8s", "2023", "用户", "ok"])
def test_stem_leaves_words_it_has_no_rule_for_alone(word: str) -> None:
    assert stem(word) == word


def test_relating_words_and_negations_stay_terms_while_function_words_go() -> None:
    assert terms("run the tests before pushing") != terms("run the tests after pushing")
    assert "dont" in terms("don't deploy on Fridays")
    assert terms("the user and it was what they would have") == []


def test_offline_names_fold_accented_words_to_ascii_and_skip_other_scripts() -> None:
    assert make_name("", "café au lait for Zoë") == "cafe-au-lait-zoe"
    assert make_name("pref", "чай tea") == "pref-tea"


_ALNUM_RUN = re.compile(rf"[{CJK}]+|[^\W_{CJK}]+")

text_strategy = st.text(
    alphabet=st.sampled_from([*"ab1Z é_ .-'+#/@:,\n", "’", "用", "户", "ａ", "²", "ß"]), max_size=40
) | st.text(max_size=40)


@given(text_strategy)
def test_words_lose_and_invent_no_letter_or_digit(text: str) -> None:
    """Splitting a text into words and the words into parts gives back exactly its letter/digit
    runs and Chinese runs, in order: no layer built on the words can miss a character."""
    flat = [p for w in words(text) for p in ([w] if is_cjk(w) else parts(w))]
    assert flat == _ALNUM_RUN.findall(normalize(text))


@given(text_strategy)
def test_a_word_neither_starts_nor_ends_with_a_connector_except_a_final_plus_or_hash(text: str) -> None:
    for w in words(text):
        assert w and not any(ch.isspace() for ch in w)
        assert w[0] not in CONNECTORS
        assert w[-1] not in CONNECTORS.replace("+", "").replace("#", "")


@given(text_strategy)
def test_the_offline_models_tokens_are_recalls_terms(text: str) -> None:
    """One tokenizer: every token the offline model compares is a term recall ranks by (recall
    leaves out the two-character ones)."""
    assert {t for t in tokens(text) if len(t) >= 3 or is_cjk(t)} <= set(tokenize(text))


_FULL_WORD = re.compile(rf"[{CJK}]++|[^\W_{CJK}]++(?:[._'+#-][^\W_{CJK}]++)*+(?:\+\+|[+#])?")
"""The one definition of a word, over any text; :func:`words` takes a cheaper pattern for ASCII."""

ascii_text = st.text(alphabet=st.sampled_from([*"abzAZ09_ .-'+#/@:,\t\n!~"]), max_size=60) | st.text(
    alphabet=st.characters(max_codepoint=127), max_size=60
)


@given(ascii_text)
def test_ascii_text_gives_the_words_and_parts_the_full_definition_gives(text: str) -> None:
    assert words(text) == _FULL_WORD.findall(normalize(text))
    for word in _FULL_WORD.findall(text):  # parts() of words not lowercased, too
        assert parts(word) == _ALNUM_RUN.findall(word)


@given(st.text(max_size=3) | st.sampled_from(["\u3400", "\u4dbf", "\u4e00", "\u9fff", "\uf900", "\ufaff", "\u33ff", "\u4dc0", "\ua000", "\ufb00"]))
def test_is_cjk_is_a_match_of_the_cjk_class(word: str) -> None:
    assert is_cjk(word) == (re.match(rf"[{CJK}]", word) is not None)
