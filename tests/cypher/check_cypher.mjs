// Parse Cypher statements with Neo4j's own parser (@neo4j-cypher/language-support).
// stdin: {"NAME": "statement", ...}; stdout: {"NAME": {"errors": {"CYPHER 5": [...], "CYPHER 25": [...]},
// "params": [...]}}. Procedure calls are checked against the signatures Neo4j's package ships.
import { readFileSync } from 'node:fs';
import { isNotParamError, lintCypherQuery, parseParameters, testData } from '@neo4j-cypher/language-support';

const VERSIONS = ['CYPHER 5', 'CYPHER 25'];
const statements = JSON.parse(readFileSync(0, 'utf8'));
const report = {};
for (const [name, query] of Object.entries(statements)) {
  const errors = {};
  for (const version of VERSIONS) {
    const schema = {
      procedures: testData.mockSchema.procedures,
      functions: testData.mockSchema.functions,
      defaultLanguage: version,
    };
    // Parameters are bound by the driver at run time, so "not defined" is not a fault here.
    errors[version] = lintCypherQuery(query, schema).diagnostics
      .filter(isNotParamError)
      .map((d) => `${d.message} (at ${d.offsets.start})`);
  }
  report[name] = { errors, params: [...new Set(parseParameters(query, false))].sort() };
}
process.stdout.write(JSON.stringify(report));
