"""One settings tree for the whole workbench: the sections (one module each) and the loader.

Import the tree and the loader from here: ``from graphrag.settings import Settings,
load_settings``; a section's dataclass from its module (``graphrag.settings.models``...).
"""

# ruff: noqa: F401 - this module only re-exports: callers import from graphrag.settings.
from graphrag.settings.index import IndexSettings
from graphrag.settings.load import REPO_ROOT, Settings, SettingsError, load_settings, repo_relative
from graphrag.settings.models import EMBEDDED_ENDPOINT, endpoint_name, judge_settings
from graphrag.settings.query import QuerySettings
