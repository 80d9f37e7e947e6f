"""What ``lmsupply.generatorModel`` names (a path, a repository and pattern, an alias, ``gguf:auto``, nothing: the
packaged model), what ``gguf:auto`` picks for a machine, and which file of a repository is the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_providers.local.hub import pick_files
from hive_providers.local.model_source import UnknownModel
from hive_providers.local.model_source import model_source
from hive_providers.local.model_table import AUTO_POOL
from hive_providers.local.model_table import MODEL_TABLE
from hive_providers.local.model_table import auto_choice
from hive_providers.local.model_table import table_model

GIB = 1024**3


@pytest.mark.parametrize(
    "name", [None, "", "  ", "default", "gguf:default", "smollm2-135m", "GGUF:SmolLM2-135M"]
)
def test_nothing_or_the_default_names_is_the_packaged_model(name: str | None) -> None:
    assert model_source(name).kind == "packaged"


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("/models/a.gguf", "/models/a.gguf"),
        ("models/b.GGUF", "models/b.GGUF"),
        ("./c", "c"),
        ("~/d.gguf", str(Path("~/d.gguf").expanduser())),
    ],
)
def test_a_path_is_a_file(name: str, path: str) -> None:
    source = model_source(name)
    assert (source.kind, source.path) == ("path", Path(path))


def test_an_existing_file_is_a_path_whatever_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "model").write_bytes(b"GGUF")
    monkeypatch.chdir(tmp_path)
    assert model_source("org/model").kind == "path"
    assert model_source("org/other").kind == "hub"


@pytest.mark.parametrize(
    ("name", "repo", "pattern"),
    [
        ("Qwen/Qwen2.5-0.5B-Instruct-GGUF", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", None),
        ("Qwen/Qwen3-4B-GGUF:*Q8_0*", "Qwen/Qwen3-4B-GGUF", "*Q8_0*"),
        (
            "org/name:exact-file.gguf",
            "org/name",
            "exact-file.gguf",
        ),  # a pattern ending in .gguf: still the hub
        ("org/name:", "org/name", None),
    ],
)
def test_a_repository_with_an_optional_pattern(name: str, repo: str, pattern: str | None) -> None:
    source = model_source(name)
    assert (source.kind, source.repo, source.pattern) == ("hub", repo, pattern)
    assert source.name == name


@pytest.mark.parametrize("alias", ["qwen2.5-1.5b", "gguf:qwen2.5-1.5b", "Qwen2.5-1.5B"])
def test_an_alias_is_its_repository_and_pattern(alias: str) -> None:
    source = model_source(alias)
    assert (source.kind, source.repo, source.pattern) == (
        "hub",
        "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        "*q4_k_m.gguf",
    )
    assert source.name == alias  # what `hive models pull` is told
    assert "Qwen/Qwen2.5-1.5B-Instruct-GGUF" in source.why


@pytest.mark.parametrize("name", ["gguf:nonesuch", "nonesuch", "org/../x", "a b/c", "org/"])
def test_a_name_of_nothing_is_refused_with_the_reason(name: str) -> None:
    with pytest.raises(UnknownModel) as refused:
        model_source(name)
    assert repr(name) in str(refused.value)


def test_every_alias_of_the_table_is_unique_and_named_by_a_repository_and_a_gguf_pattern() -> None:
    aliases = [model.alias for model in MODEL_TABLE]
    assert len(set(aliases)) == len(aliases)
    packaged = [model for model in MODEL_TABLE if model.repo is None]
    assert [model.alias for model in packaged] == ["smollm2-135m"]
    for model in MODEL_TABLE:
        if model.repo is not None:
            assert model.pattern is not None
            assert model.pattern.endswith(".gguf"), model
            assert model.repo.count("/") == 1, model
        assert 0 < model.size_gb < model.ram_gb, model
    families = {model.alias.split("-")[0].rstrip("0123456789.") for model in MODEL_TABLE}
    assert families >= {"qwen", "llama", "gemma", "smollm"}
    assert set(AUTO_POOL) <= set(aliases)


# gguf:auto as a function of (memory, cores): the largest Qwen 2.5 whose memory need fits min(memory - 4 GiB,
# memory / 2) and whose file is at most 0.5 GB a core; the packaged model when none fits.
@pytest.mark.parametrize(
    ("memory_gib", "cores", "picked"),
    [
        (None, 8, "smollm2-135m"),  # memory unknown: nothing is assumed
        (1, 16, "smollm2-135m"),
        (4, 16, "smollm2-135m"),  # min(0, 2) GiB leaves nothing
        (6, 16, "qwen2.5-1.5b"),  # min(2, 3) GiB ≈ 2.1 GB: the 1.5B's 2 GB fits, the 3B's 3.2 does not
        (8, 1, "qwen2.5-0.5b"),  # one core: 0.5 GB of file at most
        (8, 2, "qwen2.5-0.5b"),  # 1.1 GB > 2 x 0.5 GB
        (8, 4, "qwen2.5-1.5b"),  # 4 GiB ≈ 4.3 GB of memory, 2 GB of file
        (8, 8, "qwen2.5-3b"),
        (16, 8, "qwen2.5-3b"),  # 4 GB of file at most: not the 7B's 4.7
        (16, 10, "qwen2.5-7b"),
        (64, 64, "qwen2.5-7b"),
        (24, 2, "qwen2.5-0.5b"),  # plenty of memory, too few cores
        (2, None, "smollm2-135m"),
    ],
)
def test_auto_picks_the_largest_model_the_machine_runs_well(
    memory_gib: int | None, cores: int | None, picked: str
) -> None:
    choice = auto_choice(memory_gib * GIB if memory_gib is not None else None, cores)
    assert choice.model.alias == picked
    assert choice.describe().startswith(f"gguf:auto → {picked} (")


def test_auto_as_a_name_resolves_to_the_pick_for_the_given_machine() -> None:
    source = model_source("gguf:auto", memory_bytes=32 * GIB, cores=8)
    assert (source.kind, source.repo) == ("hub", "Qwen/Qwen2.5-3B-Instruct-GGUF")
    assert source.auto is not None
    assert "32 GiB memory, 8 cores" in source.why
    tiny = model_source("auto", memory_bytes=2 * GIB, cores=1)
    assert tiny.kind == "packaged"
    assert "gguf:auto → smollm2-135m" in tiny.why


def test_table_lookup_ignores_case_and_the_gguf_prefix() -> None:
    assert table_model("GGUF:Gemma3-4B") is table_model("gemma3-4b")
    assert table_model("gemma3-5b") is None


# --- the file of a repository -------------------------------------------------------------------------------

SIZES = {
    "README.md": 10,
    "mmproj-model-q4_k_m.gguf": 50,
    "model-q8_0.gguf": 800,
    "model-Q4_K_M.gguf": 500,
    "model-q2_k.gguf": 300,
    "model-f16.gguf": 1600,
}


def test_without_a_pattern_the_preferred_quantization_is_picked() -> None:
    picked = pick_files(SIZES, None)
    assert picked is not None
    assert (picked.names, picked.size) == (("model-Q4_K_M.gguf",), 500)


def _names(files: dict[str, int | None], pattern: str | None) -> tuple[str, ...] | None:
    picked = pick_files(files, pattern)
    return picked.names if picked is not None else None


def test_a_pattern_picks_among_the_matching_files_case_insensitively() -> None:
    sizes: dict[str, int | None] = {**SIZES}
    assert _names(sizes, "*Q8_0*") == ("model-q8_0.gguf",)
    # Several match: the preferred quantization among them; none preferred: the smallest.
    assert _names(sizes, "model-*.gguf") == ("model-Q4_K_M.gguf",)
    assert _names(sizes, "*-[fq][12]*.gguf") == ("model-q2_k.gguf",)
    assert _names(sizes, "*q3_k*") is None
    assert _names({"README.md": 1}, None) is None


def test_a_split_model_is_all_its_parts_and_incomplete_it_is_nothing() -> None:
    files = {
        "big-q4_k_m-00002-of-00002.gguf": 2,
        "big-q4_k_m-00001-of-00002.gguf": 3,
        "big-q8_0-00001-of-00003.gguf": 1,
    }
    picked = pick_files(files, "*q4_k_m*")
    assert picked is not None
    assert picked.names == ("big-q4_k_m-00001-of-00002.gguf", "big-q4_k_m-00002-of-00002.gguf")
    assert picked.size == 5
    assert pick_files(files, "*q8_0*") is None  # two of its three parts are missing


def test_sizes_unknown_are_no_total() -> None:
    picked = pick_files({"m-q4_k_m.gguf": None}, None)
    assert picked is not None
    assert picked.size is None
