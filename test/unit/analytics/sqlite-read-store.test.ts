import fc from 'fast-check';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { queryOver } from './support/checks.js';
import { expectObjectMatchesReference, facts, scenario, toChecks } from './support/scenario.js';

/** The same proof against the real SQLite adapter: its `in`, aggregate and keyset semantics too. */
describe('analytics over the SQLite read store', () => {
  it('equals brute force for team, project and endpoint analytics', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const checks = toChecks(s.checks);
        const { store, query } = await queryOver(checks, facts, s.batchSize, new SqliteReadStore(':memory:'));
        try {
          await expectObjectMatchesReference(query, checks, s);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
