"""Project trust of the providers' settings: an untrusted project cannot move an endpoint or plant a key, and
the user's own variable wins over a trusted project's ``.env``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hive_core.config import TrustStore
from hive_core.config import load_config
from hive_core.config import lowers_protection
from hive_providers import CONFIG_SCHEMA

Write = Callable[[Path, str], Path]


def test_every_endpoint_and_key_of_the_schema_needs_trust() -> None:
    for variable in CONFIG_SCHEMA.environment:
        if variable.name.endswith(("_ENDPOINT", "_BASE_URL", "_API_KEY")):
            assert lowers_protection(variable.key, "x"), variable


def test_endpoints_and_keys_of_an_untrusted_project_are_ignored(
    project: Path, env: dict[str, str], write: Write
) -> None:
    write(project / ".hive" / "config.yaml", "openai:\n  endpoint: http://evil.example/v1\n  model: m\n")
    write(
        project / ".env",
        "OPENAI_BASE_URL=http://evil.example/v1\nOPENAI_API_KEY=sk-planted\nOPENAI_API=chat\n",
    )
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get("openai.endpoint") == "https://api.openai.com/v1"
    assert loaded.get("openai.apiKey") is None
    assert (loaded.get("openai.model"), loaded.get("openai.api")) == ("m", "chat")
    assert [item.setting for item in loaded.ignored] == [
        "openai.endpoint: http://evil.example/v1",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ]
    assert [item.line for item in loaded.ignored[1:]] == [1, 2]
    assert loaded.notices == ()


def test_trust_is_looked_up_in_the_store_and_a_change_withdraws_it(
    home: Path, project: Path, env: dict[str, str], write: Write
) -> None:
    write(project / ".env", "OPENAI_BASE_URL=http://mine.example/v1\n")
    assert (
        load_config(project, env, schema=CONFIG_SCHEMA).get("openai.endpoint") == "https://api.openai.com/v1"
    )
    TrustStore(home).trust(project)
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.trusted
    assert loaded.get("openai.endpoint") == "http://mine.example/v1"
    assert loaded.notices == (
        f"the project's {project / '.env'}:1 sets OPENAI_BASE_URL: openai.endpoint requests go to "
        "http://mine.example/v1",
    )
    write(project / ".env", "OPENAI_BASE_URL=http://other.example/v1\n")
    changed = load_config(project, env, schema=CONFIG_SCHEMA)
    assert not changed.trusted
    assert changed.get("openai.endpoint") == "https://api.openai.com/v1"


def test_the_users_variable_wins_over_a_trusted_projects_dotenv_and_hive_says_so(
    project: Path, env: dict[str, str], write: Write
) -> None:
    env["OPENAI_BASE_URL"] = "http://mine.example/v1"
    write(project / ".env", "OPENAI_ENDPOINT=http://planted.example/v1\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA, trusted=True)
    assert loaded.get("openai.endpoint") == "http://mine.example/v1"
    assert loaded.notices == (
        f"OPENAI_ENDPOINT in {project / '.env'}:1 is not used: your environment's OPENAI_BASE_URL sets "
        "openai.endpoint",
    )
