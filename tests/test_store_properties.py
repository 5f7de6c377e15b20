"""Property test: random sequences of commits, hand edits, hand deletions, hand-written files,
reconciles and rollbacks against a plain in-memory model of the set.

The model maps name -> (type, description, body). After every step the set read back through
``MemoryStore.records()`` equals the model, and the manifest is consistent with the directory.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memory.errors import StoreError
from memory.store.history import rollback
from memory.store.records import TYPES, make_record, render_record, sha256_hex
from memory.store.transaction import INDEX, Change, MemoryStore

Content = tuple[str, str, str]
NAMES = st.sampled_from(["alpha", "beta", "gamma", "user_delta"])
TYPE = st.sampled_from(TYPES)
WORDS = st.text(alphabet="abcdefghij XYZ", min_size=1, max_size=12).filter(lambda s: s.strip() != "")


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory(prefix="dreamd-prop-")
        self.path = Path(self.tmp.name) / "mem"
        self.store = MemoryStore.init(self.path, history_generations=10_000)
        self.model: dict[str, Content] = {}
        # generation -> (model at that generation, file+sha of each record at that generation)
        self.snapshots: dict[int, tuple[dict[str, Content], set[tuple[str, str]]]] = {0: ({}, set())}
        self.clobbered: set[tuple[str, str]] = set()  # versions whose only bytes a person destroyed
        self.counter = 0

    def teardown(self) -> None:
        self.tmp.cleanup()

    # -------------------------------------------------------------- helpers

    def content(self, type_: str, desc: str, words: str) -> Content:
        self.counter += 1
        return (type_, " ".join(desc.split()), f"{words.strip()} #{self.counter}\n")

    def snapshot(self) -> None:
        m = self.store.read()
        self.snapshots[m.generation] = (dict(self.model), {(e.file, e.sha256) for e in m.records})

    def entry_file(self, name: str) -> Path:
        return self.path / self.store.read().by_name()[name].file

    # -------------------------------------------------------------- commits

    @rule(name=NAMES, type_=TYPE, desc=WORDS, words=WORDS)
    def add(self, name: str, type_: str, desc: str, words: str) -> None:
        c = self.content(type_, desc, words)
        result = self.store.commit(Change(add=[make_record(name, *c)]))
        [added] = result.added
        if added != name:
            event("add got a suffixed name")
        assert added not in self.model
        assert added == name or added.startswith(name + "-")
        self.model[added] = c
        self.snapshot()

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data(), type_=TYPE, desc=WORDS, words=WORDS)
    def replace(self, data: Any, type_: str, desc: str, words: str) -> None:
        name = data.draw(st.sampled_from(sorted(self.model)))
        c = self.content(type_, desc, words)
        result = self.store.commit(Change(replace={name: make_record(name, *c)}))
        assert result.updated == [name]
        self.model[name] = c
        self.snapshot()

    @rule(data=st.data())
    def remove(self, data: Any) -> None:
        name = data.draw(st.sampled_from([*sorted(self.model), "never-existed"]))
        result = self.store.commit(Change(remove=[name]))
        assert result.removed == ([name] if name in self.model else [])
        self.model.pop(name, None)
        self.snapshot()

    # -------------------------------------------------------------- what people do by hand

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data(), type_=TYPE, desc=WORDS, words=WORDS)
    def hand_edit_then_reconcile(self, data: Any, type_: str, desc: str, words: str) -> None:
        name = data.draw(st.sampled_from(sorted(self.model)))
        path = self.entry_file(name)
        entry = self.store.read().by_name()[name]
        c = self.content(type_, desc, words)
        path.write_bytes(render_record(make_record(name, *c)))  # in place, like a simple editor
        self.clobbered.add((entry.file, entry.sha256))
        self.model[name] = c
        self.check_set()  # visible at once, before reconcile
        report = self.store.reconcile()
        assert report.updated == [name] and report.generation is not None
        self.snapshot()

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def hand_delete_then_reconcile(self, data: Any) -> None:
        name = data.draw(st.sampled_from(sorted(self.model)))
        entry = self.store.read().by_name()[name]
        (self.path / entry.file).unlink()
        self.clobbered.add((entry.file, entry.sha256))
        del self.model[name]
        self.check_set()
        report = self.store.reconcile()
        assert report.dropped == [name]
        self.snapshot()

    @rule(stem=st.sampled_from(["feedback_style", "project_goal", "notes"]), desc=WORDS, words=WORDS)
    def person_writes_a_new_file(self, stem: str, desc: str, words: str) -> None:
        path = self.path / f"{stem}.md"
        if path.exists():
            return
        event("a person wrote a new file")
        type_ = stem.split("_")[0] if "_" in stem else "project"
        c = self.content(type_, desc, words)
        path.write_bytes(render_record(make_record(stem, *c)))
        report = self.store.reconcile()
        [adopted] = report.adopted
        assert adopted == stem or adopted.startswith(stem + "-")
        self.model[adopted] = c
        self.snapshot()

    @rule()
    def reconcile_without_changes(self) -> None:
        report = self.store.reconcile()
        assert not report.changed and report.generation is None

    # -------------------------------------------------------------- rollback

    @rule(back=st.integers(min_value=1, max_value=6))
    def rollback(self, back: int) -> None:
        current = self.store.read().generation
        to = max(current - back, 0)
        if to == current:
            return
        want, versions = self.snapshots[to]
        try:
            rollback(self.store, to=to)
        except StoreError as exc:
            # Only allowed when a person destroyed the only copy of a version it needs.
            assert "no longer kept" in str(exc)
            assert versions & self.clobbered, str(exc)
            assert self.store.read().generation == current
            event("rollback refused: a needed version was destroyed by hand")
            return
        event("rollback restored an old set")
        self.model = dict(want)
        self.snapshot()

    # -------------------------------------------------------------- invariants

    def check_set(self) -> None:
        got = {e.name: (r.type, r.description, r.body) for e, r in self.store.records()}
        assert got == self.model

    @invariant()
    def set_equals_model_and_manifest_is_consistent(self) -> None:
        self.check_set()
        m = self.store.read()
        names = [e.name for e in m.records]
        assert len(names) == len(set(names))
        for e in m.records:
            assert sha256_hex((self.path / e.file).read_bytes()) == e.sha256
        assert sha256_hex((self.path / INDEX).read_bytes()) == m.index_sha256


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(
    max_examples=30,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
