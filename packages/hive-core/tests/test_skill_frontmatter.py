"""The SKILL.md frontmatter rules, one case per rule: the fences (byte-order mark, CRLF), the allowed keys and
``acceptUnknownFields``, the name's pattern, length and NFKC equality with its directory, the lengths of the
description and compatibility, metadata of text to text, allowed-tools parsed; and reading a skill's file only
from inside its directory (a FIFO refused without waiting)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hive_core.agents_md import AgentsMdSettings
from hive_core.agents_md import read_agents_md
from hive_core.skills import SkillCatalog
from hive_core.skills import SkillsSettings
from hive_core.skills import discover_skills
from hive_core.skills import parse_skill_file
from hive_core.skills import read_skill

VALID = "---\nname: pdf\ndescription: Fill PDF forms.\n---\n\nBody.\n"


def _doc(*lines: str, body: str = "Body.") -> str:
    return "---\n" + "".join(f"{line}\n" for line in lines) + f"---\n{body}\n"


@pytest.mark.parametrize(
    ("text", "directory"),
    [
        (VALID, "pdf"),
        ("\ufeff" + VALID, "pdf"),  # a byte-order mark
        (VALID.replace("\n", "\r\n"), "pdf"),  # CRLF
        ("---  \nname: pdf\ndescription: d\n---\t\n", "pdf"),  # fences with trailing blanks
        (_doc("name: a-1-b2", "description: d"), "a-1-b2"),
        (_doc("name: " + "a" * 64, "description: d"), "a" * 64),
        (_doc("name: pdf", "description: " + "d" * 1024), "pdf"),
        (_doc("name: pdf", "description: d", "compatibility: " + "c" * 500), "pdf"),
        (_doc("name: pdf", "description: d", "license: Apache-2.0"), "pdf"),
        (_doc("name: pdf", "description: d", "metadata:", "  author: me", '  version: "1.0"'), "pdf"),
        (_doc("name: pdf", "description: d"), "\uff50\uff44\uff46"),  # fullwidth "pdf": equal once NFKC
    ],
)
def test_valid_frontmatter(text: str, directory: str) -> None:
    parsed = parse_skill_file(text, directory)
    assert parsed.problems == ()
    assert parsed.metadata is not None


@pytest.mark.parametrize(
    ("text", "directory", "problem"),
    [
        ("name: pdf\ndescription: d\n", "pdf", "does not start with a '---' line"),
        ("\n---\nname: pdf\ndescription: d\n---\n", "pdf", "does not start with a '---' line"),
        ("---\nname: pdf\ndescription: d\n", "pdf", "no closing '---' line"),
        (
            "---\nname: pdf\ndescription: [d\n---\n",
            "pdf",
            "while parsing a flow sequence",
        ),
        (
            _doc("name: pdf", "name: pdf", "description: d"),
            "pdf",
            "(line 3 of SKILL.md): the key 'name' is given twice",
        ),
        (_doc("name: pdf", "description: d", "metadata: {a: x, a: y}"), "pdf", "the key 'a' is given twice"),
        (
            _doc("name: pdf", "description: !!python/object:os.system x"),
            "pdf",
            "not valid YAML (line 3 of SKILL.md)",
        ),
        (_doc("- name"), "pdf", "must be a mapping of keys, not a list"),
        ("---\n---\n", "pdf", "must be a mapping of keys, not empty"),
        (_doc("description: d"), "pdf", "the frontmatter has no 'name'"),
        (_doc("name: pdf"), "pdf", "the frontmatter has no 'description'"),
        (_doc("name: pdf", "description: d", "model: x"), "pdf", "unknown frontmatter keys 'model'"),
        (_doc("name: PDF", "description: d"), "PDF", "may hold only lower-case letters"),
        (_doc("name: pdf--x", "description: d"), "pdf--x", "may hold only lower-case letters"),
        (_doc("name: -pdf", "description: d"), "-pdf", "may hold only lower-case letters"),
        (_doc("name: pdf-", "description: d"), "pdf-", "may hold only lower-case letters"),
        (_doc("name: pdf_x", "description: d"), "pdf_x", "may hold only lower-case letters"),
        (_doc("name: " + "a" * 65, "description: d"), "a" * 65, "1 to 64 characters long (it has 65)"),
        (_doc('name: ""', "description: d"), "pdf", "1 to 64 characters long (it has 0)"),
        (_doc("name: 12", "description: d"), "12", "'name' must be text, not a number"),
        (_doc("name: pdf", "description: d"), "docx", "differs from the skill's directory name 'docx'"),
        (_doc("name: pdf", 'description: "  "'), "pdf", "'description' must be 1 to 1,024 characters"),
        (_doc("name: pdf", "description: " + "d" * 1025), "pdf", "1 to 1,024 characters long (it has 1,025)"),
        (_doc("name: pdf", "description: d", "compatibility: " + "c" * 501), "pdf", "1 to 500 characters"),
        (_doc("name: pdf", "description: d", "license: [a]"), "pdf", "'license' must be text, not a list"),
        (_doc("name: pdf", "description: d", "metadata: x"), "pdf", "'metadata' must be a mapping"),
        (
            _doc("name: pdf", "description: d", "metadata:", "  version: 1.0"),
            "pdf",
            "'version' holds a number",
        ),
        (_doc("name: pdf", "description: d", "allowed-tools: {a: b}"), "pdf", "'allowed-tools' must be"),
    ],
)
def test_invalid_frontmatter(text: str, directory: str, problem: str) -> None:
    parsed = parse_skill_file(text, directory)
    assert parsed.metadata is None
    assert any(problem in each for each in parsed.problems), parsed.problems


def test_unknown_keys_are_dropped_with_a_warning_when_accepted() -> None:
    text = _doc("name: pdf", "description: d", "model: x", "user-invocable: true")
    parsed = parse_skill_file(text, "pdf", accept_unknown_fields=True)
    assert parsed.metadata is not None
    assert parsed.warnings == ("unknown frontmatter keys dropped: 'model', 'user-invocable'",)


def test_the_fields_and_body_as_read() -> None:
    text = _doc(
        "name: pdf",
        "description: >-",
        "  Fill forms.",
        "  Any PDF.",
        "allowed-tools: Bash(python:*)  Read",
        "metadata: {author: me}",
        body="\n\n# Title\n\n---\nnot a fence for the body\n\n",
    )
    parsed = parse_skill_file(text, "pdf")
    assert parsed.metadata is not None
    assert parsed.metadata.description == "Fill forms. Any PDF."
    assert parsed.metadata.allowed_tools == ("Bash(python:*)", "Read")
    assert parsed.metadata.metadata == {"author": "me"}
    assert parsed.body == "# Title\n\n---\nnot a fence for the body"
    listed = parse_skill_file(_doc("name: pdf", "description: d", "allowed-tools: [Read, Grep Glob]"), "pdf")
    assert listed.metadata is not None
    assert listed.metadata.allowed_tools == ("Read", "Grep", "Glob")


def _catalog(tmp_path: Path) -> SkillCatalog:
    folder = tmp_path / "skills" / "pdf"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(VALID, encoding="utf-8")
    return discover_skills(SkillsSettings(roots=("skills",)), tmp_path)


def test_a_fifo_in_a_skill_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    os.mkfifo(tmp_path / "skills" / "pdf" / "pipe")
    outcome = read_skill(catalog, "pdf", "pipe")
    assert not outcome.success
    assert "it is not a regular file" in outcome.content


def test_a_large_or_binary_file_is_refused(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    folder = tmp_path / "skills" / "pdf"
    (folder / "big.txt").write_bytes(b"x" * (256 * 1024 + 1))
    (folder / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    assert "it is larger than 262,144 bytes" in read_skill(catalog, "pdf", "big.txt").content
    assert "it is not UTF-8 text" in read_skill(catalog, "pdf", "image.png").content


def test_a_skill_md_linked_from_outside_its_directory_is_not_loaded(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text(VALID, encoding="utf-8")
    folder = tmp_path / "skills" / "pdf"
    folder.mkdir(parents=True)
    os.symlink(elsewhere, folder / "SKILL.md")
    catalog = discover_skills(SkillsSettings(roots=("skills",)), tmp_path)
    assert catalog.skills == ()
    assert [each.kind for each in catalog.diagnostics] == ["unreadable"]


def test_the_same_root_written_twice_shadows_nothing(tmp_path: Path) -> None:
    _catalog(tmp_path)
    catalog = discover_skills(
        SkillsSettings(roots=("skills", "./skills/", str(tmp_path / "skills"))), tmp_path
    )
    assert [skill.name for skill in catalog.skills] == ["pdf"]
    assert catalog.diagnostics == ()


def test_a_nearest_file_alone_over_the_limit_keeps_its_beginning(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("far\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    # 20 four-byte characters: a read of 4 * 10 + 4 bytes splits none of the first ten.
    (tmp_path / "sub" / "AGENTS.md").write_text("\U0001f600" * 20, encoding="utf-8")
    found = read_agents_md(tmp_path, tmp_path / "sub", AgentsMdSettings(max_characters=10))
    assert [(file.relative, file.text, file.cut) for file in found.files] == [
        ("sub/AGENTS.md", "\U0001f600" * 10, True)
    ]
    assert found.left_out == ("AGENTS.md",)
    assert found.warnings == ()
