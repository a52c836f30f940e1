"""Neo4j as the graph and vector backend: connection, Cypher statements, graph and vector index."""
