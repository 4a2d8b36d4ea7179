/**
 * Right after an upgrade the incidents view is rebuilt into its new shape while the previous
 * generation still serves: a document of the first version holds the whole incident. Reads
 * answer from it as they did, with the new detail rules (newest 100 checks, checks_total).
 */
import { randomBytes } from 'node:crypto';
import { IncidentQueries } from '../../../src/incidents/views/incidents/queries.js';
import type { Platform } from '../../../src/platform/platform.js';
import type { Doc } from '../../../src/platform/read-store/read-store.port.js';
import { at, createCommand, failingCheck, history } from './fixtures.js';
import type { IncidentCommand } from '../../../src/incidents/domain/incident.js';

function versionOneDoc(): Doc {
  const links = Array.from({ length: 130 }, (_, i): [IncidentCommand, string] => [{ kind: 'link_check', check: failingCheck(100 + i, at(i)) }, at(i)]);
  const { state } = history([[createCommand(), at(0)], [{ kind: 'add_comment', comment_id: 5, body: 'old' }, at(1)], ...links]);
  // The first version stored the whole state, items as plain arrays, and no checks_total.
  const whole = JSON.parse(JSON.stringify(state));
  return { id: '10', incident_num: 10, team_id: 1, project_id: 5, state: whole };
}

function queriesOver(doc: Doc): IncidentQueries {
  const unknownCollection = () => {
    throw new Error('the item collections do not exist in a version-1 generation');
  };
  const platform = { cursorKey: randomBytes(32), reader: { get: async () => doc, find: unknownCollection } } as unknown as Platform;
  return new IncidentQueries(platform);
}

describe('incident reads from a version-1 document (during the upgrade rebuild)', () => {
  it('the detail keeps the newest 100 checks and counts them all', async () => {
    const detail = (await queriesOver(versionOneDoc()).detail(1, 10))!;
    expect(detail.checks_total).toBe(130);
    expect(detail.checks.map((c) => c.id)).toEqual(Array.from({ length: 100 }, (_, i) => 130 + i));
    expect(detail.comments.map((c) => c.body)).toEqual(['old']);
  });

  it('the checks route pages through every check, newest first', async () => {
    const doc = versionOneDoc();
    const queries = queriesOver(doc);
    const head = (await queries.head(1, 10))!;
    const ids: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await queries.checks(head, 50, cursor);
      ids.push(...page.data.map((c) => c.id));
      cursor = page.pagination.next_cursor ?? undefined;
    } while (cursor);
    expect(ids).toEqual(Array.from({ length: 130 }, (_, i) => 229 - i));
  });
});
