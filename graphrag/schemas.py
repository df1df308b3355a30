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
DESCRIPTIONS = "descriptions"  # every distinct description, until they are summarized into one
FREQUENCY = "frequency"
DEGREE = "degree"
DESCRIPTION_EMBEDDING = "description_embedding"
NAME_KEY = "name_key"  # the normalized name entities are merged on

# relationships
SOURCE_ENTITY = "source"
TARGET_ENTITY = "target"
SOURCE_ID = "source_id"  # the entity id of SOURCE_ENTITY
TARGET_ID = "target_id"  # the entity id of TARGET_ENTITY
WEIGHT = "weight"
COMBINED_DEGREE = "combined_degree"
FACT_EMBEDDING = "fact_embedding"  # of "source -> target: description", what PPR matches

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
RATING = RANK  # the LLM's 0-10 importance rating of a report; "rank" is MS GraphRAG's name
RATING_EXPLANATION = "rating_explanation"
FINDINGS = "findings"
FULL_CONTENT_EMBEDDING = "full_content_embedding"
CONTEXT_SOURCE = "context_source"  # "entities", "child_summaries", "mixed", "child_reports"

# the columns that name a community, first in both the communities and the reports table
COMMUNITY_KEY_COLUMNS = [ID, HUMAN_ID, COMMUNITY, LEVEL, PARENT, CHILDREN, TITLE]

# entity/relationship mentions (before merging)
TEXT_UNIT_ID = "text_unit_id"
SOURCE_KEY = "source_key"  # the normalized names the relationship mentions are merged on
TARGET_KEY = "target_key"
STRENGTH = "strength"  # the LLM's 1-10 strength of one mention; summed into WEIGHT

# errors: every item an LLM stage could not do, kept so nothing is lost silently
STAGE = "stage"
ITEM_ID = "item_id"
ERROR = "error"
ERROR_COLUMNS = [STAGE, ITEM_ID, ERROR]

# dropped: extracted items kept out of the graph, with why (a name its chunk never mentions,
# a relationship of an entity with itself), so nothing is only counted
REASON = "reason"
NAME = "name"  # the entity name, or "source -> target" of a relationship
DROPPED_COLUMNS = [TEXT_UNIT_ID, NAME, REASON, DESCRIPTION]

# tables
DOCUMENTS = "documents"
TEXT_UNITS = "text_units"
ENTITIES = "entities"
RELATIONSHIPS = "relationships"
COMMUNITIES = "communities"
COMMUNITY_REPORTS = "community_reports"
ERRORS = "errors"
DROPPED = "dropped"
TABLES = (
    DOCUMENTS,
    TEXT_UNITS,
    ENTITIES,
    RELATIONSHIPS,
    COMMUNITIES,
    COMMUNITY_REPORTS,
    ERRORS,
    DROPPED,
)
