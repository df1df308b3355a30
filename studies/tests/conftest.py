"""The study tests share the package tests' fixtures (the demo and MuSiQue indexes replayed
from the committed cache), so both suites build them the same way."""

import sys

from graphrag.settings import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests"))

from conftest import (  # noqa: E402, F401 - fixtures, registered by being named here
    demo_index,
    demo_mentions,
    demo_subset,
    embedding_model,
    fake_llm,
    isolated_cwd,
    karate_index,
    make_embedder,
    make_llm,
    make_settings,
    musique_index,
    musique_settings,
    replay_embedder,
    replay_settings,
)
