"""One settings tree for the whole workbench: the sections (one module each) and the loader.

Import what you need from here: ``from graphrag.settings import Settings, load_settings``.
"""

# ruff: noqa: F401 - this module only re-exports: callers import from graphrag.settings.
from graphrag.settings.eval import EvalSettings
from graphrag.settings.index import ChunkingSettings, IndexSettings
from graphrag.settings.judge import (
    EMBEDDED_ENDPOINT,
    JudgeSettings,
    endpoint_name,
    judge_settings,
    self_judged,
)
from graphrag.settings.load import (
    REPO_ROOT,
    Settings,
    SettingsError,
    load_settings,
    repo_relative,
)
from graphrag.settings.models import (
    CacheSettings,
    EmbeddedServerSettings,
    EmbeddingSettings,
    LLMSettings,
)
from graphrag.settings.prompts import PromptSettings
from graphrag.settings.query import QuerySettings
