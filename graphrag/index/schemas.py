"""Column and table names of the index, declared once.

Names follow Microsoft GraphRAG's output tables where the concept is the same, so a user can
load either with the same code.
"""

# shared
ID = "id"
HUMAN_ID = "human_readable_id"
TITLE = "title"
TEXT = "text"
DESCRIPTION = "description"
TEXT_UNIT_IDS = "text_unit_ids"
ENTITY_IDS = "entity_ids"
RELATIONSHIP_IDS = "relationship_ids"

# documents
SOURCE = "source"

# text_units
N_TOKENS = "n_tokens"
DOCUMENT_IDS = "document_ids"
START_TOKEN = "start_token"
TEXT_EMBEDDING = "text_embedding"

# entities
TYPE = "type"
FREQUENCY = "frequency"
DEGREE = "degree"
DESCRIPTION_EMBEDDING = "description_embedding"
NAME_KEY = "name_key"  # the normalized name entities are merged on

# relationships
SOURCE_ENTITY = "source"
TARGET_ENTITY = "target"
WEIGHT = "weight"
COMBINED_DEGREE = "combined_degree"

# communities
COMMUNITY = "community"
LEVEL = "level"
PARENT = "parent"
CHILDREN = "children"
SIZE = "size"

# community_reports
SUMMARY = "summary"
FULL_CONTENT = "full_content"
RANK = "rank"
RATING_EXPLANATION = "rating_explanation"
FINDINGS = "findings"
FULL_CONTENT_EMBEDDING = "full_content_embedding"
CONTEXT_SOURCE = "context_source"  # "entities" or "child_reports"

# entity/relationship mentions (before merging)
TEXT_UNIT_ID = "text_unit_id"

# errors: every item an LLM stage could not do, kept so nothing is lost silently
STAGE = "stage"
ITEM_ID = "item_id"
ERROR = "error"
ERROR_COLUMNS = [STAGE, ITEM_ID, ERROR]

# dropped: extracted items kept out of the graph, with why (a name its chunk never mentions,
# a relationship of an entity with itself), so nothing is only counted
REASON = "reason"

TABLES = (
    "documents",
    "text_units",
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "errors",
    "dropped",
)
