"""Settings of the judge model: ``[judge]``, and the settings tree the judge's client is built
from (:func:`judge_settings`), so the chat client and the embedded server need no judge code.

By default the answering model judges its own answers ("self-judged"); a report says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag.settings.models import EmbeddedServerSettings, LLMSettings

if TYPE_CHECKING:  # the tree (load.py) holds this section: only its type is needed here
    from graphrag.settings.load import Settings

# The endpoint a report names for a judge served by the embedded server
EMBEDDED_ENDPOINT = "embedded"


@dataclass
class JudgeSettings:
    """The model that scores the answers (RAGAS, planted controls, pairwise ratings). Empty
    settings: the answering model judges itself, and every report says "self-judged". Every
    other ``[llm]`` setting (timeout, concurrency, max_tokens…) applies to it too."""

    base_url: str = ""
    """OpenAI-compatible endpoint of the judge; empty: the answering model's (llm.base_url)."""
    model: str = ""
    """Judge model name sent with its requests; empty: llm.model (or judge.model_file's name)."""
    api_key_env: str = ""
    """Environment variable holding the judge endpoint's API key; empty: llm.api_key_env."""
    model_file: str = ""
    """A GGUF the judge is served from by a second embedded server; empty: the answerer's."""


def _model_file(settings: Settings) -> str:
    """Return the judge's GGUF as a resolved path, "" when it is the answerer's."""
    chosen = settings.judge.model_file
    if not chosen:
        return ""
    path = str(settings.resolve_path(chosen))
    answerer = settings.embedded.model_file
    return "" if answerer and path == str(settings.resolve_path(answerer)) else path


def _llm(settings: Settings) -> LLMSettings:
    """Return the ``[llm]`` section the judge's client is built from."""
    judge, llm = settings.judge, settings.llm
    own_file = _model_file(settings)
    base_url = "" if own_file else (judge.base_url or llm.base_url)
    model = judge.model or (Path(own_file).stem if own_file else llm.model)
    api_key_env = judge.api_key_env or llm.api_key_env
    return dataclasses.replace(llm, base_url=base_url, model=model, api_key_env=api_key_env)


def self_judged(settings: Settings) -> bool:
    """Return whether the answering model is also the judge (same endpoint, model and file)."""
    judge = _llm(settings)
    same = (judge.base_url, judge.model) == (settings.llm.base_url, settings.llm.model)
    return same and not _model_file(settings)


def judge_settings(settings: Settings) -> Settings:
    """Return the settings the judge's ChatLLM is built from: ``settings`` itself when the
    answering model judges itself, else a copy whose ``[llm]`` (and ``[embedded]``, for a
    judge served from its own GGUF) name the judge."""
    if self_judged(settings):
        return settings
    own_file = _model_file(settings)
    embedded: EmbeddedServerSettings = settings.embedded
    if own_file:
        embedded = dataclasses.replace(embedded, model_file=own_file)
    return dataclasses.replace(settings, llm=_llm(settings), embedded=embedded)


def endpoint_name(base_url: str) -> str:
    """Return how a report names an endpoint: "embedded" for the embedded server (an empty
    ``base_url``), else its host and port (no path, no credentials)."""
    if not base_url:
        return EMBEDDED_ENDPOINT
    rest = base_url.split("://", 1)[-1]
    return rest.split("/", 1)[0].rsplit("@", 1)[-1]
