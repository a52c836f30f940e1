"""Every Cypher statement the Neo4j backend sends, as named constants.

Values always travel as $parameters; labels, relationship types and index names are fixed strings
of this module, never user input. Every statement that reads or writes :Memory or :Entity nodes
carries the scope: $store (the store's id, so stores sharing a database stay apart) and $user_id (or
$user_ids for a list of users). Nodes of both kinds also carry :RippleNode and a unique `key`
($store + ':' + id), which lets an edge find either end by one index lookup. The checks in
tests/unit/store/test_neo4j_cypher.py parse each statement with Neo4j's own parser.
"""

from __future__ import annotations

from ripplemem.store.tables.graph import EDGE_TYPES

VECTOR_INDEX = "ripplemem_memory_embedding"
FULLTEXT_INDEX = "ripplemem_memory_content"
MAX_DIMENSIONS = 4096

# -- schema (no user data; run once per database) -------------------------------------------------
SCHEMA = (
    "CREATE CONSTRAINT ripplemem_memory_key IF NOT EXISTS FOR (m:Memory) REQUIRE m.key IS UNIQUE",
    "CREATE CONSTRAINT ripplemem_entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE e.key IS UNIQUE",
    "CREATE CONSTRAINT ripplemem_node_key IF NOT EXISTS FOR (n:RippleNode) REQUIRE n.key IS UNIQUE",
    "CREATE INDEX ripplemem_node_scope IF NOT EXISTS FOR (n:RippleNode) ON (n.store, n.user_id)",
    "CREATE FULLTEXT INDEX ripplemem_memory_content IF NOT EXISTS FOR (m:Memory) ON EACH [m.content]",
)


def vector_index_statement(dimensions: int) -> str:
    """CREATE VECTOR INDEX for the embedder's dimension (index options take no parameters)."""
    valid = isinstance(dimensions, int) and not isinstance(dimensions, bool)
    if not valid or not 1 <= dimensions <= MAX_DIMENSIONS:
        raise ValueError(f"a Neo4j vector index needs 1..{MAX_DIMENSIONS} dimensions; got {dimensions!r}")
    return (
        "CREATE VECTOR INDEX ripplemem_memory_embedding IF NOT EXISTS FOR (m:Memory) ON (m.embedding) "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dimensions}, "
        "`vector.similarity_function`: 'cosine'}}"
    )


# The dimension of an existing vector index (another store's embedder may have made it).
SCHEMA_VECTOR_DIMENSIONS = """
SHOW INDEXES YIELD name, options
WHERE name = 'ripplemem_memory_embedding'
RETURN options.indexConfig['vector.dimensions'] AS dimensions
"""

# A new index is queryable only once online; waits at most 300 s.
SCHEMA_AWAIT_INDEXES = "CALL db.awaitIndexes(300)"


# -- vectors (index.py) -------------------------------------------------------------------------
# The filter columns are written beside the vector, so a search can filter before the graph
# mirror has flushed the memory's other properties.
SET_VECTORS = """
UNWIND $rows AS row
MERGE (m:Memory:RippleNode {key: $store + ':' + row.id})
  ON CREATE SET m.store = $store, m.user_id = $user_id, m.id = row.id
WITH m, row WHERE m.store = $store AND m.user_id = $user_id
SET m.agent_id = row.agent_id, m.session_id = row.session_id, m.type = row.type,
    m.occurred_at = row.occurred_at, m.indexed = true
WITH m, row
CALL db.create.setNodeVectorProperty(m, 'embedding', row.embedding)
"""

# A memory that leaves the index (cold, superseded, deleted) keeps its node for the graph mirror.
UNSET_VECTORS = """
UNWIND $ids AS id
MATCH (m:Memory {key: $store + ':' + id})
WHERE m.store = $store AND m.user_id = $user_id
SET m.indexed = false
REMOVE m.embedding
"""

UNSET_ALL_VECTORS = """
MATCH (m:Memory)
WHERE m.store = $store AND m.user_id = $user_id AND m.indexed = true
SET m.indexed = false
REMOVE m.embedding
"""

# The vector index spans every store and user: ask for $fetch neighbours and keep this scope's.
# `seen` is how many neighbours the index gave; fewer than $fetch means there are no others.
QUERY_VECTORS = """
CALL db.index.vector.queryNodes('ripplemem_memory_embedding', $fetch, $vector) YIELD node, score
WITH count(*) AS seen, collect(CASE
  WHEN node.store = $store AND node.user_id = $user_id AND node.indexed = true
   AND ($agent_id IS NULL OR node.agent_id = $agent_id)
   AND ($session_id IS NULL OR node.session_id = $session_id)
   AND ($types IS NULL OR node.type IN $types)
   AND ($since IS NULL OR node.occurred_at >= $since)
   AND ($until IS NULL OR node.occurred_at < $until)
  THEN {id: node.id, score: score} END) AS hits
RETURN seen, hits[0..$k] AS hits
"""

# The exact search when the nearest $fetch of every store held too few of this scope's: a scan of
# the scope's own vectors (index seek on store and user), scored as the vector index scores.
QUERY_VECTORS_EXACT = """
MATCH (m:RippleNode {store: $store, user_id: $user_id})
WHERE m:Memory AND m.indexed = true
  AND ($agent_id IS NULL OR m.agent_id = $agent_id)
  AND ($session_id IS NULL OR m.session_id = $session_id)
  AND ($types IS NULL OR m.type IN $types)
  AND ($since IS NULL OR m.occurred_at >= $since)
  AND ($until IS NULL OR m.occurred_at < $until)
WITH m, vector.similarity.cosine(m.embedding, $vector) AS score
RETURN m.id AS id, score
ORDER BY score DESC
LIMIT $k
"""

COUNT_VECTORS = """
MATCH (m:Memory)
WHERE m.store = $store AND m.user_id = $user_id AND m.indexed = true
RETURN count(m) AS vectors
"""

VECTOR_IDS = """
MATCH (m:Memory)
WHERE m.store = $store AND m.user_id = $user_id AND m.indexed = true
RETURN m.id AS id
"""

# Vectors of the users outside $user_ids (all of them when it is empty), per user.
FOREIGN_VECTORS = """
MATCH (m:Memory)
WHERE m.store = $store AND NOT m.user_id IN $user_ids AND m.indexed = true
RETURN m.user_id AS user_id, count(m) AS vectors
"""

# Lucene's score is BM25 as well; $query is built from escaped terms by store/neo4j/index.lucene_query.
QUERY_KEYWORDS = """
CALL db.index.fulltext.queryNodes('ripplemem_memory_content', $query, {limit: $fetch}) YIELD node, score
WHERE node.store = $store AND node.user_id = $user_id AND node.indexed = true
RETURN node.id AS id, score
ORDER BY score DESC
LIMIT $k
"""

# -- graph mirror (graph.py) --------------------------------------------------------------------
MERGE_MEMORIES = """
UNWIND $rows AS row
MERGE (m:Memory:RippleNode {key: $store + ':' + row.id})
  ON CREATE SET m.store = $store, m.user_id = $user_id, m.id = row.id
WITH m, row WHERE m.store = $store AND m.user_id = $user_id
SET m.agent_id = row.agent_id, m.session_id = row.session_id, m.type = row.type,
    m.modality = row.modality, m.tier = row.tier, m.status = row.status,
    m.importance = row.importance, m.created_at = row.created_at, m.occurred_at = row.occurred_at,
    m.content = row.content, m.sync = $stamp
"""

MERGE_ENTITIES = """
UNWIND $rows AS row
MERGE (e:Entity:RippleNode {key: $store + ':' + row.id})
  ON CREATE SET e.store = $store, e.user_id = $user_id, e.id = row.id
WITH e, row WHERE e.store = $store AND e.user_id = $user_id
SET e.name = row.name, e.canonical = row.canonical, e.type = row.type, e.sync = $stamp
"""

DELETE_NODES = """
UNWIND $ids AS id
MATCH (n:RippleNode {key: $store + ':' + id})
WHERE n.store = $store AND n.user_id = $user_id
DETACH DELETE n
"""

_MERGE_EDGE = """
UNWIND $rows AS row
MATCH (a:RippleNode {key: $store + ':' + row.src})
MATCH (b:RippleNode {key: $store + ':' + row.dst})
WHERE a.user_id = $user_id AND b.user_id = $user_id
MERGE (a)-[r:%s {predicate: row.predicate}]->(b)
SET r.store = $store, r.user_id = $user_id, r.weight = row.weight, r.confidence = row.confidence,
    r.created_at = row.created_at, r.last_activated = row.last_activated,
    r.activations = row.activations, r.sync = $stamp
"""

_DELETE_EDGE = """
UNWIND $rows AS row
MATCH (a:RippleNode {key: $store + ':' + row.src})
      -[r:%s {predicate: row.predicate}]->(b:RippleNode {key: $store + ':' + row.dst})
WHERE a.user_id = $user_id AND r.store = $store AND r.user_id = $user_id
DELETE r
"""

# One statement per relationship type: Neo4j 5 has no parameterised relationship types.
MERGE_EDGES = {edge_type: _MERGE_EDGE % edge_type for edge_type in EDGE_TYPES}
DELETE_EDGES = {edge_type: _DELETE_EDGE % edge_type for edge_type in EDGE_TYPES}

# A re-sync stamps everything it writes, then sweeps what it did not stamp, $batch at a time.
SWEEP_NODES = """
MATCH (n:RippleNode)
WHERE n.store = $store AND n.user_id = $user_id AND (n.sync IS NULL OR n.sync <> $stamp)
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
"""

SWEEP_EDGES = """
MATCH (a:RippleNode)-[r]->(:RippleNode)
WHERE a.store = $store AND a.user_id = $user_id AND r.store = $store AND r.user_id = $user_id
  AND (r.sync IS NULL OR r.sync <> $stamp)
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
"""

# What the SQLite ledger is compared with on open, one row per user of $user_ids.
NODE_FINGERPRINTS = """
UNWIND $user_ids AS user_id
OPTIONAL MATCH (n:RippleNode {store: $store, user_id: user_id})
WITH user_id, n
RETURN user_id,
       sum(CASE WHEN n:Memory THEN 1 ELSE 0 END) AS memories,
       sum(CASE WHEN n:Memory AND n.status = 'active' THEN 1 ELSE 0 END) AS active,
       sum(CASE WHEN n:Memory THEN n.importance ELSE 0.0 END) AS importance,
       sum(CASE WHEN n:Memory AND n.indexed = true THEN 1 ELSE 0 END) AS indexed,
       sum(CASE WHEN n:Entity THEN 1 ELSE 0 END) AS entities
"""

EDGE_FINGERPRINTS = """
UNWIND $user_ids AS user_id
OPTIONAL MATCH (:RippleNode {store: $store, user_id: user_id})-[r]->(:RippleNode)
WHERE r.store = $store AND r.user_id = user_id
RETURN user_id, count(r) AS edges, sum(coalesce(r.weight, 0.0)) AS weight
"""

# -- reading the graph back ---------------------------------------------------------------------
SCOPE_EDGES = """
MATCH (a:RippleNode {store: $store, user_id: $user_id})-[r]->(b:RippleNode)
WHERE r.store = $store AND r.user_id = $user_id AND b.store = $store AND b.user_id = $user_id
RETURN a.id AS src, b.id AS dst, type(r) AS type, r.weight AS weight, r.confidence AS confidence,
       r.predicate AS predicate, r.created_at AS created_at, r.last_activated AS last_activated,
       r.activations AS activations
"""

# Spreading activation inside Neo4j: every path of at most three hops from a seed passes on
# seed score × Π(damping × edge weight); a node's activation is the sum over its paths.
SPREAD = """
UNWIND $seeds AS seed
MATCH (s:RippleNode {key: $store + ':' + seed.id})
WHERE s.user_id = $user_id
MATCH p = (s)-[rels*1..3]-(t:RippleNode)
WHERE t.store = $store AND t.user_id = $user_id
  AND all(r IN rels WHERE r.store = $store AND r.user_id = $user_id)
WITH t, seed.score * reduce(a = 1.0, r IN rels | a * $damping * r.weight) AS passed
RETURN t.id AS id, sum(passed) AS activation
ORDER BY activation DESC
LIMIT $limit
"""
