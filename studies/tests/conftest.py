"""The study tests share the package tests' fixtures (the demo and MuSiQue indexes replayed
from the committed cache), so both suites build them the same way."""

import sys

from graphrag.settings import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests"))

from conftest import (  # noqa: E402, F401 - fixtures, registered by being named here
    demo_index,
    embedding_model,
    musique_index,
    musique_settings,
    replay_embedder,
    replay_settings,
)
