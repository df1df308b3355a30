"""Storage behind protocols: index, graph and vector stores, each a registered backend
(docs/storage.md), and the graph databases an index can be loaded into
(docs/graph-databases.md). Importing the package registers the defaults."""

from graphrag.stores import (  # noqa: F401 - registers the backends and the engines
    igraph_graph,
    ladybug_graph,
    lancedb_vectors,
    neo4j_graph,
    networkx_graph,
    numpy_vectors,
    parquet_folder,
)
from graphrag.stores.graph_db import (  # noqa: F401 - the public names
    GraphDatabase,
    GraphDatabaseError,
    GraphQueryError,
    GraphQueryTimeout,
    default_graph_db_path,
    open_graph_db,
)
from graphrag.stores.protocols import (  # noqa: F401 - the public names
    GraphStore,
    IndexStore,
    UnknownBackendError,
    VectorStore,
    backend,
    backend_of,
)
