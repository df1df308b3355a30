"""Settings: defaults, TOML, environment, overrides, and errors that name the setting."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from graphrag.llm.client import EMBEDDED_PLACEHOLDER_URL, ChatLLM
from graphrag.settings import REPO_ROOT, Settings, SettingsError, load_settings

pytestmark = pytest.mark.usefixtures("isolated_cwd")  # no graphrag.toml but the tests' own


def write_toml(folder: Path, text: str) -> Path:
    path = folder / "graphrag.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_use_the_embedded_model_without_starting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHRAG_HOME", str(tmp_path / "home"))
    settings = load_settings(
        path=None, env={}, overrides={"cache": {"path": str(tmp_path / "cache")}}
    )
    assert settings.llm.base_url == ""
    assert settings.cache.mode == "on"
    assert (settings.chunking.size, settings.chunking.overlap) == (600, 100)
    assert settings.index.max_cluster_size == 10

    llm = ChatLLM(settings)
    assert llm.base_url == EMBEDDED_PLACEHOLDER_URL
    assert llm.server is not None
    assert llm.server.process is None  # started only when a request misses the cache
    assert llm.server.home == tmp_path / "home"
    llm.close()


def test_relative_paths_resolve_from_the_project_root(tmp_path: Path) -> None:
    # the working directory (isolated_cwd: tmp_path) is the project when no root is named
    settings = load_settings(path=None, env={})
    assert settings.root == tmp_path.resolve()
    assert settings.resolve_path(settings.cache.path) == tmp_path.resolve() / "cache" / "llm"
    assert settings.resolve_path(str(tmp_path / "x")) == tmp_path / "x"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for settings in (
        load_settings(env={}, root=elsewhere),
        load_settings(env={"GRAPHRAG_ROOT": str(elsewhere)}),
    ):
        assert settings.resolve_path(settings.project.output) == elsewhere.resolve() / "output"


def test_the_repository_is_the_demo_project_and_names_its_recorded_cache() -> None:
    settings = load_settings(env={}, root=REPO_ROOT)
    assert settings.resolve_path(settings.cache.path) == REPO_ROOT / "data" / "llm_cache"
    assert settings.source("cache.path") == str(REPO_ROOT / "graphrag.toml")
    # not the default: a user's project records into its own folder
    assert Settings().cache.path == "cache/llm"


def test_toml_file_values(tmp_path: Path) -> None:
    path = write_toml(
        tmp_path,
        """
[llm]
base_url = "http://localhost:8000/v1"
model = "my-model"
timeout = 30.5
concurrency = 2

[chunking]
size = 300
overlap = 50

[index]
entity_types = ["person", "ship"]
aliases = { KBMI = "Kestrel Bay Marine Institute" }
max_cluster_size = 8
""",
    )
    settings = load_settings(path=path, env={})
    assert settings.llm.base_url == "http://localhost:8000/v1"
    assert settings.llm.model == "my-model"
    assert settings.llm.timeout == pytest.approx(30.5)
    assert settings.llm.concurrency == 2
    assert (settings.chunking.size, settings.chunking.overlap) == (300, 50)
    assert settings.index.entity_types == ["person", "ship"]
    assert settings.index.aliases == {"KBMI": "Kestrel Bay Marine Institute"}
    assert settings.index.max_cluster_size == 8
    # untouched settings keep their defaults
    assert settings.llm.max_tokens == 1024


def test_graphrag_toml_in_the_working_directory_is_read(tmp_path: Path) -> None:
    write_toml(tmp_path, '[llm]\nmodel = "from-cwd"\n')  # the test runs in tmp_path
    assert load_settings(env={}).llm.model == "from-cwd"


def test_graphrag_config_env_names_the_file(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text('[llm]\nmodel = "from-env-file"\n')
    assert load_settings(env={"GRAPHRAG_CONFIG": str(other)}).llm.model == "from-env-file"


def test_environment_overrides_the_file_and_overrides_win(tmp_path: Path) -> None:
    path = write_toml(tmp_path, '[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\n')
    env = {
        "GRAPHRAG_LLM__BASE_URL": "http://env/v1",
        "GRAPHRAG_LLM__MAX_TOKENS": "256",
        "GRAPHRAG_LLM__TIMEOUT": "0.5",
        "GRAPHRAG_INDEX__ENTITY_TYPES": '["geo", "event"]',
        "GRAPHRAG_INDEX__ALIASES": '{"Okafor": "Mara Okafor"}',
        "UNRELATED": "ignored",
    }
    settings = load_settings(path=path, env=env)
    assert settings.llm.base_url == "http://env/v1"
    assert settings.llm.model == "file-model"
    assert settings.llm.max_tokens == 256
    assert settings.llm.timeout == pytest.approx(0.5)
    assert settings.index.entity_types == ["geo", "event"]
    assert settings.index.aliases == {"Okafor": "Mara Okafor"}

    overridden = load_settings(path=path, env=env, overrides={"llm": {"max_tokens": 64}})
    assert overridden.llm.max_tokens == 64
    assert overridden.llm.base_url == "http://env/v1"


def test_graphrag_cache_shortcut_sets_the_cache_mode() -> None:
    assert load_settings(env={"GRAPHRAG_CACHE": "replay"}).cache.mode == "replay"
    assert load_settings(env={"GRAPHRAG_CACHE": "off"}).cache.mode == "off"
    with pytest.raises(SettingsError, match=r"cache\.mode='sometimes'.*on, off, replay"):
        load_settings(env={"GRAPHRAG_CACHE": "sometimes"})


def test_unknown_key_in_the_file_is_named(tmp_path: Path) -> None:
    path = write_toml(tmp_path, '[llm]\nbase_ur = "http://x/v1"\n')
    with pytest.raises(SettingsError, match=r"unknown setting .*llm\.base_ur\b") as info:
        load_settings(path=path, env={})
    assert str(path) in str(info.value)
    assert "base_url" in str(info.value)  # the known keys are listed


def test_budget_shares_that_do_not_fit_one_budget_are_named() -> None:
    with pytest.raises(SettingsError, match=r"query\.local\.text_unit_share \(0\.96\).*at most 1"):
        load_settings(env={"GRAPHRAG_QUERY__LOCAL__TEXT_UNIT_SHARE": "0.96"})
    assert load_settings(env={}, overrides={"query": {"local": {"text_unit_share": 0.8}}})


def test_a_method_table_loads_from_the_file_and_from_the_environment(tmp_path: Path) -> None:
    path = write_toml(
        tmp_path, "[query]\nanswer_max_tokens = 300\n[query.local]\ntop_entities = 5\n"
    )
    settings = load_settings(
        path=path,
        env={
            "GRAPHRAG_QUERY__GLOBAL__REDUCE_SEEDS": "[]",
            "GRAPHRAG_QUERY__PPR__PASSAGE_WEIGHT": "0.7",
        },
    )
    assert settings.query.answer_max_tokens == 300
    assert settings.query.methods["local"].top_entities == 5
    assert settings.query.methods["global"].reduce_seeds == []
    assert settings.query.methods["ppr"].passage_weight == pytest.approx(0.7)
    assert settings.to_dict()["query"]["local"]["top_entities"] == 5  # as the TOML names it
    assert settings.query.flat()["local.top_entities"] == 5
    with pytest.raises(SettingsError, match=r"unknown setting .*query\.local\.top_entitie\b"):
        load_settings(env={"GRAPHRAG_QUERY__LOCAL__TOP_ENTITIE": "5"})
    with pytest.raises(SettingsError, match=r"query\.local is a table"):
        load_settings(env={}, overrides={"query": {"local": 5}})
    with pytest.raises(SettingsError, match=r"method naive has no settings of its own"):
        load_settings(env={}, overrides={"query": {"naive": {"top_k": 5}}})


@pytest.mark.parametrize("old", ["hyde_max_tokens", "global_point_order", "local_text_unit_share"])
def test_a_round_2_flat_name_is_an_unknown_setting(old: str) -> None:
    """The round-2 flat names (moved to [query.<method>] tables or removed) have done their
    job: one is now an unknown setting, whose error lists the known ones and the tables."""
    with pytest.raises(SettingsError, match=rf"unknown setting override\.query\.{old} .*local"):
        load_settings(env={}, overrides={"query": {old: 1}})


def test_top_k_under_the_budget_context_is_rejected() -> None:
    """Under chunk_context = "budget" every chunk method fills the budget and the ranking is
    RANKING_DEPTH deep, so a top_k of its own would silently do nothing."""
    with pytest.raises(SettingsError, match=r"query\.top_k=5 does nothing.*budget"):
        load_settings(env={"GRAPHRAG_QUERY__TOP_K": "5"})
    chosen = load_settings(env={}, overrides={"query": {"top_k": 5, "chunk_context": "top_k"}})
    assert chosen.query.top_k == 5


@pytest.mark.parametrize("route", ["router", "oracle"])
def test_a_router_route_to_itself_or_to_no_method_is_rejected(route: str) -> None:
    with pytest.raises(SettingsError, match=f"query.router.thematic_method='{route}'"):
        load_settings(env={"GRAPHRAG_QUERY__ROUTER__THEMATIC_METHOD": route})
    assert load_settings(env={"GRAPHRAG_QUERY__ROUTER__THEMATIC_METHOD": "drift"})


def test_unknown_section_and_unknown_env_key_are_named() -> None:
    with pytest.raises(SettingsError, match=r"unknown setting .*\.retrieval"):
        load_settings(env={}, overrides={"retrieval": {"top_k": 3}})
    with pytest.raises(SettingsError, match=r"unknown setting env:GRAPHRAG\.llm\.bogus"):
        load_settings(env={"GRAPHRAG_LLM__BOGUS": "1"})


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"GRAPHRAG_LLM__MAX_TOKENS": "lots"}, "llm.max_tokens='lots'"),
        ({"GRAPHRAG_LLM__TIMEOUT": "warm"}, "llm.timeout='warm'"),
        ({"GRAPHRAG_LLM__JSON_MODE": "xml"}, "llm.json_mode='xml'"),
        ({"GRAPHRAG_INDEX__ENTITY_TYPES": "person, geo"}, "index.entity_types"),
        ({"GRAPHRAG_INDEX__ALIASES": '["not", "a", "dict"]'}, "index.aliases"),
    ],
)
def test_bad_type_in_the_environment_names_the_setting(env: dict, setting: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(env=env)
    assert setting in str(info.value)


@pytest.mark.parametrize(
    ("toml", "setting"),
    [
        ('[llm]\nmax_tokens = "many"\n', "llm.max_tokens"),
        ("[llm]\nconcurrency = true\n", "llm.concurrency"),
        ("[chunking]\nsize = 600.5\n", "chunking.size"),
        ('[llm]\ntimeout = "soon"\n', "llm.timeout"),
        ('[index]\nentity_types = "person"\n', "index.entity_types"),
        ('llm = "not a table"\n', "llm is a section"),
    ],
)
def test_bad_type_in_the_file_names_the_setting(tmp_path: Path, toml: str, setting: str) -> None:
    path = write_toml(tmp_path, toml)
    with pytest.raises(SettingsError) as info:
        load_settings(path=path, env={})
    assert setting in str(info.value)


def test_integral_float_for_an_int_setting_is_accepted(tmp_path: Path) -> None:
    path = write_toml(tmp_path, "[chunking]\nsize = 400.0\n")
    settings = load_settings(path=path, env={})
    assert settings.chunking.size == 400
    assert isinstance(settings.chunking.size, int)


@pytest.mark.parametrize("overlap", [600, 700])
def test_overlap_not_smaller_than_size_is_an_error(overlap: int) -> None:
    with pytest.raises(SettingsError, match=r"chunking\.overlap"):
        load_settings(env={}, overrides={"chunking": {"size": 600, "overlap": overlap}})
    load_settings(env={}, overrides={"chunking": {"size": 600, "overlap": 599}})


def test_concurrency_below_one_is_an_error() -> None:
    with pytest.raises(SettingsError, match=r"llm\.concurrency"):
        load_settings(env={"GRAPHRAG_LLM__CONCURRENCY": "0"})


def test_missing_and_malformed_files_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(SettingsError, match="nope.toml does not exist"):
        load_settings(path=missing, env={})
    broken = write_toml(tmp_path, "[llm\nmodel = 1\n")
    with pytest.raises(SettingsError, match=str(broken)):
        load_settings(path=broken, env={})


def test_settings_round_trip_to_a_dict() -> None:
    data = load_settings(env={}, overrides={"llm": {"model": "m"}}).to_dict()
    assert data["llm"]["model"] == "m"
    assert set(data) == {
        "project",
        "llm",
        "embedded",
        "judge",
        "cache",
        "embeddings",
        "chunking",
        "index",
        "query",
        "eval",
        "prompts",
    }


def test_a_corpus_settings_file_pins_only_what_differs_from_the_defaults() -> None:
    """A corpus's graphrag.toml holds the settings its recorded answers were made with where
    they differ from the defaults: a line equal to its default is stale (the defaults moved
    to it), and must go."""
    config = REPO_ROOT / "data" / "musique" / "graphrag.toml"
    pinned = tomllib.loads(config.read_text(encoding="utf-8"))
    assert pinned and defaults_among(pinned, Settings()) == []


def defaults_among(pinned: dict, section: object, prefix: str = "") -> list[str]:
    """Return the names of the settings in ``pinned`` (a TOML tree) equal to their default in
    ``section`` (the default tree; a [query.<method>] table is a section too)."""
    same = []
    for key, value in pinned.items():
        tables = getattr(section, "methods", {}) if prefix == "query." else {}
        default = tables[key] if key in tables else getattr(section, key)
        if isinstance(value, dict) and dataclasses.is_dataclass(default):
            same += defaults_among(value, default, f"{prefix}{key}.")
        elif default == value:
            same.append(f"{prefix}{key}")
    return same
