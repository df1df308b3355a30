"""Sentence embeddings, batched, normalized and cached: the local sentence-transformers model, or
an endpoint (llm/embedding_endpoint.py). Vectors come from the committed packs, then the SQLite
cache, then the model (another CPU gives other last bits), keyed by the embedder's recipe and
the text. A long text is embedded as overlapping windows, averaged."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sqlite3
import threading
from abc import ABC, abstractmethod
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from graphrag.settings import Settings
from graphrag.text import tokens
from graphrag.text.digests import folder_sha256

PACK_GLOB = "vectors-*.npz"  # a pack: ``keys`` (cache keys) and ``vectors`` (one row each)
# Texts embedded per batch: sentence-transformers' own default. A batch pads its texts to the
# longest, which can move a vector in its last bits, so the cached vectors assume this value.
BATCH_SIZE = 32
# Word pieces shared by consecutive windows of a text longer than the model's input (in the
# recipe, so a changed value misses every cached vector).
WINDOW_OVERLAP = 32
POOLING = "windows averaged weighted by characters, unit length"
# The vector key scheme: 1 hashed model id and text; 2 hashes the recipe with that.
VECTOR_KEY_FORMAT = 2
VECTOR_FORMAT_FILE = "vector_format.json"  # in a packs folder and beside a SQLite cache
# What each embeddings endpoint reported of its model (graphrag/llm/embedding_endpoint.py),
# beside a SQLite cache and copied into a packs folder with the vectors it keys
ENDPOINT_IDENTITIES_FILE = "embedding_identities.json"


class EmbeddingError(RuntimeError):
    """The embedding model or a recorded pack could not be read; the message names which."""


@lru_cache(maxsize=4)
def _read_packs(folder: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    vectors: dict[str, np.ndarray] = {}
    for name in names:
        path = Path(folder) / name
        try:
            with np.load(path, allow_pickle=False) as pack:
                keys, rows = pack["keys"], pack["vectors"]
        except (OSError, ValueError, KeyError) as err:
            raise EmbeddingError(f"recorded vectors {path} could not be read: {err}") from err
        rows.flags.writeable = False  # shared by every Embedder of the process
        vectors.update(zip(keys.tolist(), rows, strict=True))
    return vectors


def recorded_vectors(folder: Path) -> dict[str, np.ndarray]:
    """Return the vectors of every pack in ``folder`` by cache key (read once, read-only); a
    folder keyed by an older scheme is an error that says what to do."""
    names = tuple(sorted(p.name for p in folder.glob(PACK_GLOB))) if folder.is_dir() else ()
    if names and pack_format(folder) != VECTOR_KEY_FORMAT:
        raise EmbeddingError(
            f"the recorded vectors in {folder} are keyed by format {pack_format(folder)}, which "
            f"this workbench no longer reads (format {VECTOR_KEY_FORMAT} adds the embedder's "
            "recipe): re-key them with the workbench of commit a08b5045 (python -m graphrag "
            "cache migrate), or remove them and record the vectors again"
        )
    return _read_packs(str(folder), names) if names else {}


def pack_format(folder: Path) -> int:
    """Return the key scheme of the packs in ``folder`` (no marker file: 1)."""
    marker = Path(folder) / VECTOR_FORMAT_FILE
    return int(json.loads(marker.read_text())["format"]) if marker.is_file() else 1


def write_pack(folder: Path, cache_path: Path) -> Path | None:
    """Return a new pack in ``folder`` of the cache's vectors no pack holds (None: none); packs are
    never rewritten, so the committed folder grows by whole files."""
    if not cache_path.is_file():
        raise EmbeddingError(f"no vector cache at {cache_path} to record from")
    have = recorded_vectors(folder)
    with sqlite3.connect(cache_path) as db:
        rows = [
            (key, np.frombuffer(blob, dtype=np.float32))
            for key, blob in db.execute("SELECT key, v FROM vectors ORDER BY key")
            if key not in have
        ]
    if not rows:
        return None
    if not (folder / VECTOR_FORMAT_FILE).is_file() and not list(folder.glob(PACK_GLOB)):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / VECTOR_FORMAT_FILE).write_text(json.dumps({"format": VECTOR_KEY_FORMAT}) + "\n")
    sizes = sorted({len(vector) for _, vector in rows})
    if len(sizes) > 1:
        raise EmbeddingError(
            f"{cache_path} holds vectors of {sizes} dimensions (several models): record one "
            "model's cache at a time"
        )
    keys = np.array([key for key, _ in rows])
    vectors = np.stack([vector for _, vector in rows])
    digest = hashlib.sha256(keys.tobytes() + vectors.tobytes()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"vectors-{digest}.npz"
    np.savez_compressed(path, keys=keys, vectors=vectors)
    _copy_identities(cache_path.with_name(ENDPOINT_IDENTITIES_FILE), folder)
    return path


def _copy_identities(book: Path, folder: Path) -> None:
    """Add what endpoints reported (``book``, beside a cache) to the packs folder's own."""
    if not book.is_file():
        return
    kept = folder / ENDPOINT_IDENTITIES_FILE
    known = json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else {}
    known.update(json.loads(book.read_text(encoding="utf-8")))
    kept.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def resolve_model_path(model: str) -> Path:
    """Return the folder of the sentence-transformers model named by ``embeddings.model``: a
    model folder, or a package that ships one (``get_model_path()`` or a ``model/`` folder)."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    try:
        package = importlib.import_module(model)
    except ImportError as err:
        raise EmbeddingError(
            f"setting embeddings.model={model!r} is neither a folder nor an installed package "
            "that ships a sentence-transformers model"
        ) from err
    getter = getattr(package, "get_model_path", None)
    folder = Path(getter()) if getter else Path(package.__file__).parent / "model"
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise EmbeddingError(f"setting embeddings.model={model!r}: no model files in {folder}")
    return folder


class Embedder(ABC):
    """Unit vectors of texts (a dot product is the cosine), from the recorded packs, the vector
    cache, else the backend (:class:`LocalEmbedder`; an endpoint's in llm/embedding_endpoint.py)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        cache_path = settings.resolve_path(settings.embeddings.cache_path)
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(cache_path, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")
        self._lock = threading.Lock()

    # A backend gives ``model_id`` (what an index's manifest names), ``dimension``, ``recipe``
    # (all that decides a vector but the text: part of every vector's key) and the vectors.
    model_id: str
    dimension: int
    recipe: dict[str, object]

    @abstractmethod
    def _embed_uncached(self, texts: list[str]) -> list[np.ndarray]:
        """Return the unit vectors of ``texts``, none of which is cached."""

    @cached_property
    def recorded(self) -> dict[str, np.ndarray]:
        """The committed vectors (``embeddings.recorded_path``), by cache key."""
        folder = self.settings.embeddings.recorded_path
        return recorded_vectors(self.settings.resolve_path(folder)) if folder else {}

    @cached_property
    def recipe_digest(self) -> str:
        return hashlib.sha256(json.dumps(self.recipe, sort_keys=True).encode()).hexdigest()

    def _key(self, text: str) -> str:
        return vector_key(self.recipe_digest, self.model_id, text)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an (n, d) float32 array of unit vectors, one row per text."""
        keys = [self._key(t) for t in texts]
        found = {k: self.recorded[k] for k in keys if k in self.recorded}
        cached = list(dict.fromkeys(k for k in keys if k not in found))
        with self._lock:
            for start in range(0, len(cached), 500):
                batch = cached[start : start + 500]
                marks = ",".join("?" * len(batch))
                rows = self._db.execute(f"SELECT key, v FROM vectors WHERE key IN ({marks})", batch)
                found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            vectors = self._embed_uncached([by_key[k] for k in missing])
            found.update(zip(missing, vectors, strict=True))
            with self._lock:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                    [(k, np.asarray(found[k], dtype=np.float32).tobytes()) for k in missing],
                )
                self._db.commit()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class LocalEmbedder(Embedder):
    """The sentence-transformers model of ``embeddings.model``, on this machine's CPU."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.model_path = resolve_model_path(settings.embeddings.model)
        self._model_id = f"{settings.embeddings.model}:{self.model_path.name}"

    @property
    def model_id(self) -> str:
        return self._model_id

    @cached_property
    def model(self):  # noqa: ANN201 - sentence_transformers is imported lazily (slow import)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        # Loading prints a progress bar to stderr: noise in logs, and in notebooks an output
        # that differs between a cold and a warm embedding cache.
        transformers_logging.disable_progress_bar()
        try:
            return SentenceTransformer(str(self.model_path), device="cpu", local_files_only=True)
        except Exception as err:
            raise EmbeddingError(
                f"could not load the embedding model from {self.model_path}: {err}"
            ) from err

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    @cached_property
    def recipe(self) -> dict[str, object]:
        """The model's files, the windowing, batching and pooling."""
        cache = self.settings.resolve_path(self.settings.embeddings.cache_path)
        book = cache.with_name("hashes.json")
        return {
            "format": VECTOR_KEY_FORMAT,
            "model": self.model_id,
            "model_files_sha256": folder_sha256(self.model_path, book),
            "window_overlap": WINDOW_OVERLAP,
            "batch_size": BATCH_SIZE,
            "pooling": POOLING,
        }

    def windows(self, text: str) -> list[str]:
        """Return ``text`` split into overlapping pieces that each fit the model's input."""
        limit = int(self.model.max_seq_length) - 2  # room for [CLS] and [SEP]
        encoded = self.model.tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        offsets = encoded["offset_mapping"]
        if len(offsets) <= limit:
            return [text]
        starts = tokens.window_starts(len(offsets), limit, WINDOW_OVERLAP)
        spans = [offsets[s : s + limit] for s in starts]
        return [text[span[0][0] : span[-1][1]] for span in spans]

    def _embed_uncached(self, texts: list[str]) -> list[np.ndarray]:
        pieces: list[str] = []
        owners: list[int] = []
        for i, text in enumerate(texts):
            for piece in self.windows(text) if text.strip() else [text]:
                pieces.append(piece)
                owners.append(i)
        options = {"normalize_embeddings": True, "convert_to_numpy": True}
        encoded = self.model.encode(
            pieces, batch_size=BATCH_SIZE, show_progress_bar=False, **options
        )
        weights = np.array([max(len(p), 1) for p in pieces], dtype=np.float32)
        pooled = np.zeros((len(texts), encoded.shape[1]), dtype=np.float32)
        np.add.at(pooled, owners, encoded * weights[:, None])
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return list(pooled / np.where(norms == 0, 1, norms))


def vector_key(recipe_digest: str, model_id: str, text: str) -> str:
    """Return the cache key of ``text``'s vector: the recipe's digest over the hash of model id
    and text (that inner hash was format 1's whole key; kept so every recorded key holds)."""
    text_key = hashlib.sha256(f"{model_id}\0{text}".encode()).hexdigest()
    return hashlib.sha256(f"{recipe_digest}\0{text_key}".encode()).hexdigest()
