"""Storage behind protocols: index, graph and vector stores, each a registered backend
(docs/storage.md). Importing the package registers the defaults."""

from graphrag.stores import (  # noqa: F401 - registers the backends
    igraph_graph,
    lancedb_vectors,
    networkx_graph,
    numpy_vectors,
    parquet_folder,
)
from graphrag.stores.protocols import (  # noqa: F401 - the public names
    GraphStore,
    IndexStore,
    UnknownBackendError,
    VectorStore,
    backend,
    backend_of,
)
