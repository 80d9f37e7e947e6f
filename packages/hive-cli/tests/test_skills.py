"""Skills end to end: ``hive -p`` and ``hive run --server`` against the scripted model (whose request log shows
the instructions and the tool results the model was sent), and ``hive doctor``.

The "# Skills" listing in the instructions; ``load_skill`` returning a skill's body and one of its files, and
refusing ``..``, an absolute path and links leading out; an invalid SKILL.md reported (run and doctor) while the
rest load; ``enabled`` and ``exclude``; an earlier root shadowing a later one (``~`` expanded); the listing's
limit, past which skills still load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer


def _skill(root: Path, directory: str, description: str, body: str = "", **more: str) -> Path:
    """A skill folder ``root/directory`` whose SKILL.md names it ``directory`` (or ``more['name']``)."""
    folder = root / directory
    folder.mkdir(parents=True, exist_ok=True)
    fields = {"name": directory, "description": description, **more}
    frontmatter = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}---\n\n{body}", encoding="utf-8")
    return folder


def _config(ws: Workspace, yaml_text: str) -> None:
    (ws.project / ".hive" / "config.yaml").write_text(yaml_text, encoding="utf-8")


def _instructions(server: ScriptedModelServer) -> str:
    value = model_requests(server)[0].body.get("instructions")
    assert isinstance(value, str)
    return value


def _listing(server: ScriptedModelServer) -> list[str]:
    """The ``- **name**: description`` lines of the first request's instructions."""
    return [line for line in _instructions(server).splitlines() if line.startswith("- **")]


def _outputs(server: ScriptedModelServer) -> dict[str, str]:
    """Each tool call's result as the model was sent it, by call id (from the last request)."""
    items = input_items(model_requests(server)[-1], "function_call_output")
    return {item["call_id"]: str(item["output"]) for item in items}


def _tool_names(server: ScriptedModelServer) -> list[str]:
    body: dict[str, Any] = model_requests(server)[0].body
    return [str(spec.get("name")) for spec in body.get("tools") or []]


def test_skills_are_listed_and_load_skill_returns_the_body_and_a_file(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    skills = ws.project / ".hive" / "skills"
    pdf = _skill(
        skills,
        "pdf-forms",
        "Fill PDF forms.\nUse when a task mentions a PDF form.",
        "# Filling forms\n\nRun scripts/fill.py with the field values.\n",
        license="MIT",
    )
    (pdf / "scripts").mkdir()
    (pdf / "scripts" / "fill.py").write_text("raise SystemExit('never run by loading')\n", encoding="utf-8")
    (pdf / "reference.md").write_text("Field names are case-sensitive.\n", encoding="utf-8")
    _skill(skills, "commit-messages", "Write commit messages.", "Say why.\n")
    (skills / "notes").mkdir()  # no SKILL.md: not a skill, not a problem
    _config(ws, "skills:\n  roots: [.hive/skills]\n")
    server.add(
        calls(
            ("c1", "load_skill", {"name": "pdf-forms"}),
            ("c2", "load_skill", {"name": "pdf-forms", "path": "reference.md"}),
            ("c3", "load_skill", {"name": "pdf-forms", "path": "scripts/fill.py"}),
        ),
        text("Loaded."),
    )
    with ws.use(server).serve() as proc:
        events = proc.turn("fill the form")
    ends = {event["call_id"]: event for event in events if event["type"] == "tool_end"}
    assert [ends[call]["success"] for call in ("c1", "c2", "c3")] == [True, True, True]
    assert events[-1]["type"] == "turn_end"

    instructions = _instructions(server)
    assert "# Skills\n\nSkills are instructions and files" in instructions
    assert _listing(server) == [
        "- **commit-messages**: Write commit messages.",
        "- **pdf-forms**: Fill PDF forms. Use when a task mentions a PDF form.",
    ]
    assert "load_skill" in _tool_names(server)
    outputs = _outputs(server)
    assert outputs["c1"] == "# Filling forms\n\nRun scripts/fill.py with the field values."
    assert outputs["c2"] == "Field names are case-sensitive.\n"
    assert outputs["c3"] == "raise SystemExit('never run by loading')\n"  # read, not run
    assert "---" not in outputs["c1"]


def test_load_skill_refuses_paths_that_lead_out(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET-OUTSIDE\n", encoding="utf-8")
    skill = _skill(ws.project / "skills", "helper", "Helps.", "Body.\n")
    (skill / "inner.md").write_text("Inner text.\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", skill / "secret-link.txt")
    os.symlink(outside, skill / "data")
    os.symlink(skill / "inner.md", skill / "alias.md")  # a link that stays inside is fine
    _config(ws, "skills:\n  roots: [skills]\n")
    refused = {
        "up": "../../../outside/secret.txt",
        "absolute": str(outside / "secret.txt"),
        "link": "secret-link.txt",
        "through": "data/secret.txt",
    }
    server.add(
        calls(
            *((call, "load_skill", {"name": "helper", "path": path}) for call, path in refused.items()),
            ("inside", "load_skill", {"name": "helper", "path": "alias.md"}),
            ("unknown", "load_skill", {"name": "nope"}),
        ),
        text("Done."),
    )
    with ws.use(server).serve() as proc:
        events = proc.turn("use the helper")
    ends = {event["call_id"]: event for event in events if event["type"] == "tool_end"}
    assert {call: ends[call]["success"] for call in (*refused, "inside", "unknown")} == {
        **dict.fromkeys(refused, False),
        "inside": True,
        "unknown": False,
    }
    outputs = _outputs(server)
    assert all("SECRET-OUTSIDE" not in output for output in outputs.values())
    assert "goes up out of the skill's directory with '..'" in outputs["up"]
    assert "is an absolute path" in outputs["absolute"]
    assert "'secret-link.txt' is a symbolic link that leads out of the skill's directory" in outputs["link"]
    assert "'data' is a symbolic link that leads out of the skill's directory" in outputs["through"]
    assert outputs["inside"] == "Inner text.\n"
    assert outputs["unknown"] == "There is no skill named 'nope'. The skills: helper."


def test_an_invalid_skill_is_reported_and_the_rest_load(ws: Workspace, server: ScriptedModelServer) -> None:
    skills = ws.project / ".hive" / "skills"
    _skill(skills, "good", "A good skill.")
    _skill(skills, "wrong-name", "Its name is not its folder's.", name="other-name")
    _skill(skills, "extra", "Written for another client.", model="some-model")
    _config(ws, "skills:\n  roots: [.hive/skills]\n")
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello")

    assert result.code == 0, result
    assert _listing(server) == ["- **good**: A good skill."]
    assert "hive: warning: 2 skill problems (`hive doctor` lists them):" in result.stderr

    doctor = ws.run("doctor")
    assert "✓ skills root .hive/skills: 1 skill(s)" in doctor.stdout, doctor
    assert "✓ skills offered: good" in doctor.stdout
    assert (
        f"! skills: {skills / 'extra' / 'SKILL.md'}: not loaded: unknown frontmatter keys 'model'"
        in doctor.stdout
    )
    assert (
        f"! skills: {skills / 'wrong-name' / 'SKILL.md'}: not loaded: 'name' 'other-name' differs from the "
        "skill's directory name 'wrong-name'" in doctor.stdout
    )


def test_accepting_unknown_fields_loads_a_skill_written_for_another_client(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _skill(ws.project / "skills", "extra", "Written for another client.", model="some-model")
    _config(ws, "skills:\n  roots: [skills]\n  acceptUnknownFields: true\n")
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello")

    assert result.code == 0, result
    assert _listing(server) == ["- **extra**: Written for another client."]
    assert "skill problem" not in result.stderr
    assert "unknown frontmatter keys dropped: 'model'" in ws.run("doctor").stdout


def test_enabled_selects_and_orders_and_exclude_removes(ws: Workspace, server: ScriptedModelServer) -> None:
    skills = ws.project / "skills"
    for name in ("alpha", "beta", "gamma", "delta"):
        _skill(skills, name, f"The {name} skill.", f"{name} body\n")
    _config(
        ws,
        "skills:\n  roots: [skills]\n  enabled: [gamma, missing, alpha, delta]\n  exclude: [delta]\n",
    )
    server.add(
        calls(("c1", "load_skill", {"name": "delta"}), ("c2", "load_skill", {"name": "beta"})),
        text("Done."),
    )

    result = ws.use(server).run("-p", "hello")

    assert result.code == 0, result
    assert _listing(server) == ["- **gamma**: The gamma skill.", "- **alpha**: The alpha skill."]
    assert "skills.enabled names 'missing', but no root has a valid skill of that name" in result.stderr
    outputs = _outputs(server)
    assert outputs["c1"] == "There is no skill named 'delta'. The skills: gamma, alpha."
    assert outputs["c2"] == "There is no skill named 'beta'. The skills: gamma, alpha."


def test_an_earlier_root_shadows_a_later_one(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path
) -> None:
    user_home = tmp_path / "user-home"
    _skill(user_home / "skills", "review", "The user's review skill.", "Review the user's way.\n")
    _skill(
        ws.project / ".hive" / "skills",
        "review",
        "The project's review skill.",
        "Review the project's way.\n",
    )
    _skill(ws.project / ".hive" / "skills", "deploy", "Deploy.", "Deploy body.\n")
    _config(ws, "skills:\n  roots: [~/skills, .hive/skills]\n")
    server.add(calls(("c1", "load_skill", {"name": "review"})), text("Done."))
    env = {"HOME": str(user_home)}

    result = ws.use(server).run("-p", "hello", env=env)

    assert result.code == 0, result
    assert _listing(server) == ["- **review**: The user's review skill.", "- **deploy**: Deploy."]
    assert _outputs(server)["c1"] == "Review the user's way."
    doctor = ws.run("doctor", env=env)
    assert (
        f"! skills: {ws.project / '.hive' / 'skills' / 'review' / 'SKILL.md'}: the skill 'review' is shadowed by "
        f"the one in {(user_home / 'skills' / 'review').resolve()} (an earlier root wins)" in doctor.stdout
    ), doctor


def test_past_the_listing_limit_skills_are_not_listed_but_still_load(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    skills = ws.project / "skills"
    for name in ("one", "two", "three", "four"):
        _skill(skills, name, f"Skill {name}.", f"{name} body\n")
    # "- **four**: Skill four." and "- **one**: Skill one." are 23 and 21 characters, each with its newline.
    _config(ws, "skills:\n  roots: [skills]\n  maxMetadataCharacters: 46\n")
    server.add(calls(("c1", "load_skill", {"name": "two"})), text("Done."))

    result = ws.use(server).run("-p", "hello")

    assert result.code == 0, result
    assert _listing(server) == ["- **four**: Skill four.", "- **one**: Skill one."]
    assert "(2 more skills are not listed here, for want of room;" in _instructions(server)
    assert _outputs(server)["c1"] == "two body"


def test_without_roots_there_is_no_listing_and_no_tool(ws: Workspace, server: ScriptedModelServer) -> None:
    _skill(ws.project / ".hive" / "skills", "unused", "Not configured.")
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello")

    assert result.code == 0, result
    assert "# Skills" not in _instructions(server)
    assert "load_skill" not in _tool_names(server)
    assert "skills: off (skills.roots names no directory)" in ws.run("doctor").stdout


def test_planning_mode_keeps_load_skill(ws: Workspace, server: ScriptedModelServer) -> None:
    _skill(ws.project / "skills", "plan-it", "Plans.", "How to plan.\n")
    _config(ws, "skills:\n  roots: [skills]\n")
    server.add(calls(("c1", "load_skill", {"name": "plan-it"})), text("Planned."))

    result = ws.use(server).run("-p", "make a plan", "--plan")

    assert result.code == 0, result
    assert _outputs(server)["c1"] == "How to plan."
