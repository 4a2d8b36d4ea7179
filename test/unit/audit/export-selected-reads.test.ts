/**
 * A team's export reads the log through stream selections (`ReadAllOptions.streams`): the
 * team's streams are found with the streams already known left out of the read, then only they
 * are read. The export must be the one a read of the whole log gives, byte for byte, and read
 * each event of the log about once instead of twice.
 */
import { generateKeyPairSync } from 'node:crypto';
import { exportHistory } from '../../../src/audit/application/export.js';
import { auditPublicKey, auditSigner } from '../../../src/audit/domain/signing.js';
import { verifyExport } from '../../../src/audit/domain/verify-export.js';
import { chainedEventStore } from '../../../src/platform/event-store/chained-event-store.js';
import { DelegatingEventStore } from '../../../src/platform/event-store/delegating-event-store.js';
import { isSelected, type EventStore, type ReadAllOptions, type RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';

/** Reads whole pages of the log from the store and selects streams here, as the export read before (and the EventStoreDB adapter does). */
class WholeLogReads extends DelegatingEventStore {
  override async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    const selected: RecordedEvent[] = [];
    for (let after = options.after ?? null; ; ) {
      const page = await this.inner.readAll({ after, maxCount: options.maxCount });
      for (const event of page) {
        if (!isSelected(options.streams, event.streamId)) continue;
        selected.push(event);
        if (selected.length === options.maxCount) return selected;
      }
      if (page.length < options.maxCount) return selected;
      after = page[page.length - 1].position;
    }
  }
}

async function exported(store: EventStore, teamId: number, signer: ReturnType<typeof auditSigner>): Promise<string> {
  let text = '';
  for await (const chunk of exportHistory(store, { teamId }, { signer, now: () => new Date('2026-11-28T12:00:00.000Z') })) text += chunk;
  return text;
}

describe("a team's export through stream selections", () => {
  it('is the export a read of the whole log gives, byte for byte, signed and verifying, reading each event about once', async () => {
    const inner = chainedEventStore(new SqliteEventStore(':memory:'));
    try {
      // Two teams' streams interleaved over more than one page (1,000) of the log; a stream that
      // is team 1's only from a later event; a channel stream of team 1 (withheld); a sequence
      // stream with no team at all.
      const revisions = new Map<string, number>();
      const append = async (stream: string, data: Record<string, unknown>) => {
        const revision = revisions.get(stream) ?? -1;
        await inner.append(stream, [{ type: 'Noted', data }], { expectedRevision: revision === -1 ? 'no_stream' : revision });
        revisions.set(stream, revision + 1);
      };
      for (let n = 0; n < 2000; n++) {
        await append(`incident-${1 + (n % 3)}`, { team_id: 1, n });
        await append(`incident-${4 + (n % 3)}`, { team_id: 2, n });
        if (n % 50 === 0) await append('sequence-ids', { next: n });
        if (n % 100 === 10) await append('moved-7', n < 1000 ? { team_id: 2, n } : { team_id: 1, n });
        if (n % 500 === 0) await append('notification-channel-9', { team_id: 1, n, secret: 'whsec_x' });
      }
      const logSize = [...revisions.values()].reduce((sum, revision) => sum + revision + 1, 0);
      const teamEvents = [...revisions.entries()].filter(([stream]) => /^incident-[123]$|^moved-7$/.test(stream)).reduce((sum, [, revision]) => sum + revision + 1, 0);
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const signer = auditSigner(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());

      // The events the store hands out of its log during the selected export.
      let read = 0;
      const readAll = inner.readAll.bind(inner);
      inner.readAll = async (options) => {
        const page = await readAll(options);
        read += page.length;
        return page;
      };
      const selected = await exported(inner, 1, signer);
      const readBySelected = read;
      const whole = await exported(new WholeLogReads(inner), 1, signer);
      expect(selected).toBe(whole);

      const lines = selected.trimEnd().split('\n');
      expect(lines).toHaveLength(teamEvents + 1);
      const manifest = JSON.parse(lines[lines.length - 1]).manifest;
      expect(manifest).toMatchObject({ team_id: 1, events: teamEvents, withheld_streams: ['notification-channel-9'] });
      expect(Object.keys(manifest.streams).sort()).toEqual(['incident-1', 'incident-2', 'incident-3', 'moved-7']);
      const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const verified = await verifyExport(lines, { text: lines[lines.length - 1], number: lines.length }, auditPublicKey(pem));
      expect(verified).toMatchObject({ ok: true, events: teamEvents, streams: 4 });

      // Finding the streams reads the other streams' events, each of the team's up to its first
      // event of the team (moved-7's 11th) and the rest of the first page (read before any
      // stream was known); writing them reads the team's. Twice the log before.
      const firstPass = logSize - teamEvents + 3 + 11 + 1000;
      expect(readBySelected).toBeLessThanOrEqual(firstPass + teamEvents);
      expect(firstPass + teamEvents).toBeLessThan(1.5 * logSize);
    } finally {
      await inner.close();
    }
  });
});
