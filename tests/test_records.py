"""Record files (DESIGN §2.1): real files as tools write them, defensive reading, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory.errors import RecordError
from memory.store.records import (
    MAX_BODY_BYTES,
    MAX_FRONTMATTER_BYTES,
    NAME_RE,
    TYPES,
    Record,
    make_record,
    parse_record,
    render_record,
    slugify,
    validate_fields,
)


def real_record_files(shared_data: Path) -> list[Path]:
    return sorted(p for p in (shared_data / "memory_dirs").glob("*/*.md") if p.name != "MEMORY.md")


def test_every_real_record_file_parses_with_a_slug_key_and_a_known_type(shared_data: Path) -> None:
    files = real_record_files(shared_data)
    assert len(files) >= 20
    for path in files:
        rec = parse_record(path.read_bytes(), where=str(path), stem=path.stem)
        assert NAME_RE.match(rec.name), path
        assert rec.name == slugify(path.stem), path  # the key is the slug of the file stem
        assert rec.type in TYPES, path
        assert rec.description and "\n" not in rec.description, path
        assert rec.body.strip() and rec.body.endswith("\n"), path
        # Rendering what was read gives a file that reads back to the same record.
        again = parse_record(render_record(rec), where="rendered")
        assert again.as_fields() == rec.as_fields(), path


def test_claude_code_free_text_name_becomes_the_title_and_the_stem_the_key(shared_data: Path) -> None:
    path = shared_data / "memory_dirs/4444J99__application-pipeline__.claude-memory/feedback_data_hygiene.md"
    rec = parse_record(path.read_bytes(), where=str(path), stem=path.stem)
    assert rec.name == "feedback_data_hygiene"
    assert rec.title == "Data hygiene — dynamic vs observation"
    assert rec.type == "feedback"
    assert rec.description.startswith("Never delete system observations.")
    assert rec.body.startswith("Two categories of pipeline data")


def test_claude_code_slug_name_that_differs_from_the_stem_keeps_the_stem_as_key(shared_data: Path) -> None:
    path = shared_data / "memory_dirs/4444J99__application-pipeline__.claude-memory/project_system_purpose.md"
    rec = parse_record(path.read_bytes(), where=str(path), stem=path.stem)
    assert (rec.name, rec.title, rec.type) == ("project_system_purpose", "system_purpose", "project")


def test_learn_claude_code_name_md_files(shared_data: Path) -> None:
    base = shared_data / "memory_dirs"
    path = base / "learn-claude-code__JinxinWu__learn-claude-code__.memory/prefer_clear_comments.md"
    rec = parse_record(path.read_bytes(), where=str(path), stem=path.stem, strict=True)
    assert rec == Record(
        name="prefer_clear_comments",
        type="user",
        description="喜欢代码中有清晰的注释",
        body="用户偏好代码中有清晰、详细的注释风格。在编写代码时应该添加适当的注释来解释代码逻辑和关键部分。\n",
    )
    path = base / "learn-claude-code__Xiangx520__claude-harness-study__.memory/user_name.md"
    rec = parse_record(path.read_bytes(), where=str(path), stem=path.stem, strict=True)
    assert (rec.name, rec.type, rec.description, rec.body, rec.title) == (
        "user_name", "user", "User's name", "xiangx\n", None
    )


# Shaped like 15088134140/LCAITool's files: nested metadata (with a trailing space after the key),
# Chinese free-text name, and no trailing newline.
METADATA_FILE = (
    "---\n"
    "name: 项目子系统划分\n"
    "description: LCAITool 由三个子系统组成\n"
    "metadata: \n"
    "  type: project\n"
    "  node_type: memory\n"
    "  originSessionId: 5b0c3f1e-2a4d-4c8e-9f7a-1d2e3f4a5b6c\n"
    "  priority: high\n"
    "---\n"
    "前端、后端和计算引擎三部分，接口在 docs/api.md。"
).encode()


def test_type_nested_under_metadata_and_no_trailing_newline() -> None:
    rec = parse_record(METADATA_FILE, where="project_subsystems.md", stem="project_subsystems")
    assert rec.name == "project_subsystems"
    assert rec.title == "项目子系统划分"
    assert rec.type == "project"
    assert rec.description == "LCAITool 由三个子系统组成"
    assert rec.body == "前端、后端和计算引擎三部分，接口在 docs/api.md。\n"
    assert rec.extra["metadata"]["originSessionId"] == "5b0c3f1e-2a4d-4c8e-9f7a-1d2e3f4a5b6c"


def test_metadata_type_with_windows_path_in_body() -> None:
    data = (
        "---\nname: 中文路径\ndescription: 用反斜杠的路径\nmetadata: {type: feedback}\n---\n"
        "配置在 C:\\Users\\zheng\\AppData\\Roaming\\app\\config.json\n"
    ).encode()
    rec = parse_record(data, where="feedback_paths.md", stem="feedback_paths")
    assert rec.type == "feedback"
    assert "C:\\Users\\zheng\\AppData" in rec.body


def test_missing_type_is_inferred_from_the_file_name_prefix_else_project() -> None:
    data = b"---\nname: x\ndescription: d\n---\nbody\n"
    assert parse_record(data, where="w", stem="reference_dashboards").type == "reference"
    assert parse_record(data, where="w", stem="user-role").type == "user"
    assert parse_record(data, where="w", stem="notes").type == "project"


BASE = b"---\nname: prefers-tabs\ndescription: User prefers tabs\ntype: user\n---\nUse tabs.\n"
EXPECTED = Record(name="prefers-tabs", type="user", description="User prefers tabs", body="Use tabs.\n")


@pytest.mark.parametrize(
    "data",
    [
        BASE,
        BASE.rstrip(b"\n"),
        b"\xef\xbb\xbf" + BASE,
        BASE.replace(b"\n", b"\r\n"),
        b"\xef\xbb\xbf" + BASE.replace(b"\n", b"\r\n").rstrip(b"\r\n"),
        BASE.replace(b"Use tabs.\n", b"\n\nUse tabs.\n\n\n"),
    ],
    ids=["plain", "no-trailing-newline", "bom", "crlf", "bom-crlf-no-newline", "blank-lines"],
)
def test_encodings_and_line_endings_read_the_same(data: bytes) -> None:
    assert parse_record(data, where="prefers-tabs.md", stem="prefers-tabs", strict=True) == EXPECTED


def test_body_may_contain_a_horizontal_rule() -> None:
    data = BASE + b"\n---\n\nmore after the rule\n"
    rec = parse_record(data, where="w", strict=True)
    assert rec.body == "Use tabs.\n\n---\n\nmore after the rule\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (BASE.replace(b"User prefers", b"Us\xe9r prefers"), "not valid UTF-8"),
        (b"---\nname: &a x\ndescription: *a\ntype: user\n---\nb\n", "anchors and aliases"),
        (b"---\nname: x\ndescription: d\ntype: user\nextra: *nothing\n---\nb\n", "invalid YAML"),
        (b"---\nname: x\ndescription: " + b"d" * MAX_FRONTMATTER_BYTES + b"\ntype: user\n---\nb\n", "frontmatter over 8192 bytes"),
        (BASE + b"x" * MAX_BODY_BYTES, "body over 65536 bytes"),
        (b"no frontmatter here\n", "no YAML frontmatter"),
        (b"---\nname: x\ndescription: d\ntype: user\nbody without a closing line\n", "not closed"),
        (b"---\n- a\n- b\n---\nbody\n", "not a mapping"),
    ],
    ids=["non-utf8", "alias", "undefined-alias", "frontmatter-cap", "body-cap", "no-frontmatter", "unclosed", "list"],
)
def test_malformed_files_are_rejected_with_the_file_named(data: bytes, message: str) -> None:
    where = "/mem/feedback_broken.md"
    with pytest.raises(RecordError, match=message) as info:
        parse_record(data, where=where, stem="feedback_broken")
    assert str(info.value).startswith(where + ":")
    assert "\n" not in str(info.value)


def test_yaml_bomb_is_refused_before_it_expands() -> None:
    bomb = b"---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    bomb += b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nname: x\ndescription: d\ntype: user\n---\nb\n"
    with pytest.raises(RecordError, match="anchors and aliases"):
        parse_record(bomb, where="bomb.md")


def test_strict_mode_refuses_unknown_type_missing_description_and_free_text_name() -> None:
    with pytest.raises(RecordError, match="w: type 'preference' is not one of user, feedback"):
        parse_record(BASE.replace(b"type: user", b"type: preference"), where="w", strict=True)
    with pytest.raises(RecordError, match="description is missing"):
        parse_record(BASE.replace(b"description: User prefers tabs\n", b""), where="w", strict=True)
    with pytest.raises(RecordError, match="not a slug"):
        parse_record(BASE.replace(b"name: prefers-tabs", b"name: Prefers Tabs"), where="w", strict=True)
    # The same files are read leniently when they come from a directory.
    assert parse_record(BASE.replace(b"type: user", b"type: preference"), where="w", stem="x").type == "project"


def test_unknown_frontmatter_fields_are_kept_and_importance_is_read() -> None:
    data = BASE.replace(b"type: user\n", b"type: user\nimportance: 0.9\nexpires: 2027-01-01\ntags: [a, b]\n")
    rec = parse_record(data, where="w", strict=True)
    assert rec.importance == 0.9
    assert rec.expires == "2027-01-01"
    assert rec.extra["tags"] == ["a", "b"]
    assert parse_record(render_record(rec), where="w", strict=True) == rec


def test_validate_fields_wants_exactly_the_four_fields() -> None:
    good = {"name": "a", "type": "user", "description": "d", "body": "b"}
    assert validate_fields(good, where="item 0").name == "a"
    with pytest.raises(RecordError, match=r"item 0: record fields must be exactly .*missing body; unexpected extra"):
        validate_fields({"name": "a", "type": "user", "description": "d", "extra": 1}, where="item 0")
    with pytest.raises(RecordError, match="name 'Not A Slug'"):
        validate_fields({**good, "name": "Not A Slug"}, where="item 0")
    with pytest.raises(RecordError, match="description must be one line"):
        validate_fields({**good, "description": "two\nlines"}, where="item 0")


def test_slugify_free_text_and_non_latin_names() -> None:
    assert slugify("Data hygiene — dynamic vs observation") == "data-hygiene-dynamic-vs-observation"
    assert slugify("Café Ünïcode") == "cafe-unicode"
    chinese = slugify("项目子系统划分")
    assert NAME_RE.match(chinese) and chinese.startswith("r-") and chinese == slugify("项目子系统划分")
    assert len(slugify("x" * 200)) == 64


# ---------------------------------------------------------------- property: round trip

names = st.from_regex(NAME_RE, fullmatch=True)
one_line = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\n\r"), min_size=1, max_size=120
)
bodies = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=400)


@st.composite
def valid_records(draw: st.DrawFn) -> Record:
    extra = draw(st.sampled_from([None, {"importance": 0.75}, {"expires": "2027-01-01", "tags": ["x"]}]))
    try:
        return make_record(draw(names), draw(st.sampled_from(TYPES)), draw(one_line), draw(bodies), extra=extra)
    except RecordError:
        assume(False)
        raise


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_records())
def test_render_then_strict_parse_gives_the_record_back(rec: Record) -> None:
    assert parse_record(render_record(rec), where="roundtrip", strict=True) == rec


FRONTMATTERS = [
    "name: r-000003\ndescription: Always run the rulo queue before pushing\ntype: feedback\n",
    "name: a\ndescription: 'quoted: yes'\ntype: project\nexpires: '2026-11-20'\n",
    "name: a\ndescription: d\ntype: project\nexpires: 2026-11-20\nimportance: 0.8\n",
    "name: a\ndescription: d\ntype: user\ncreated: 2026-11-20T10:00:00Z\nflag: yes\nnothing: null\nn: 12\n",
    "name: a\nmetadata:\n  type: user\n  tags: [x, y]\n",
    "name: !!str 12\ndescription: !!str 2026-01-01\ntype: \"feedback\"\n",
    "<<: {type: user}\nname: a\n",
    "=: value\nname: a\n",
    "name: first\nname: second\n",
    "? [complex, key]\n: value\n",
    "- a\n- b\n",
    "plain scalar\n",
    "",
    "name: a\ndescription: |\n  two\n  lines\n",
    "12: twelve\nname: a\n",
]


@pytest.mark.parametrize("text", FRONTMATTERS)
def test_the_flat_loader_reads_every_frontmatter_as_the_safe_c_loader_does(text: str) -> None:
    import yaml

    from memory.store.records import _flat_loader

    def outcome(loader: object) -> object:
        try:
            data = yaml.load(text, Loader=loader)  # type: ignore[arg-type]
        except yaml.YAMLError as exc:
            return type(exc), str(exc)
        return type(data), data

    assert outcome(_flat_loader()) == outcome(yaml.CSafeLoader)
