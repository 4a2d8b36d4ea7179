/**
 * The daily verification pass (docs/audit.md): after a pass, `/metrics` reports how many streams'
 * hash chains are broken, and the log names each one. An event edited in events.sqlite while the
 * service runs turns the gauge to 1 at the next pass. The pass is run here as the service's
 * timer would run it (its first run is minutes after start).
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { AuditVerificationWorker } from '../../src/audit/application/verification-worker.js';
import { streamRow, tamperWithLog } from '../support/event-store-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { auditedIncident } from '../support/incident-fixtures.js';

describe('daily hash chain verification', () => {
  let t: TestApp;
  const logs: Array<Record<string, any>> = [];
  let incidentId: number;
  const metric = async (name: string): Promise<number | null> => {
    const text = (await t.request('GET', '/metrics')).body;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    return line === undefined ? null : Number(line.split(' ').pop());
  };

  beforeAll(async () => {
    t = await startTestApp({}, { logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }) });
    ({ incidentId } = await auditedIncident(t, { comment: false }));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('reports 0 broken streams after a pass over an intact log, then names an edited one', async () => {
    expect(await metric('monitor_audit_chain_verified_timestamp_seconds')).toBe(0);
    const worker = t.app.get(AuditVerificationWorker);
    await worker.pass();
    expect(await metric('monitor_audit_chain_broken_streams')).toBe(0);
    expect(await metric('monitor_audit_chain_verified_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 600);
    expect(logs.find((l) => l.msg === 'audit: every hash chain verified intact')).toMatchObject({ streams_checked: expect.any(Number), events_checked: expect.any(Number) });

    const edit = `UPDATE event_log SET data = replace(data, 'Checkout down', 'Checkout fine') WHERE ${streamRow(`incident-${incidentId}`)} AND revision = 0`;
    expect(tamperWithLog(join(t.dataDir, 'events.sqlite'), edit)).toBe(1);
    await worker.pass();
    expect(await metric('monitor_audit_chain_broken_streams')).toBe(1);
    const report = logs.find((l) => l.level === 50 && String(l.msg).startsWith('audit: 1 hash chain(s) broken'));
    expect(report?.broken).toEqual([{ stream: `incident-${incidentId}`, revision: 0, problem: 'altered' }]);
  });
});
