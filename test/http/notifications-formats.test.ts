/**
 * Slack, Discord, PagerDuty and email formats, delivered to local receivers and a local SMTP
 * server (the `smtp-server` package) on real sockets, checked field by field.
 */
import { jest } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { eventually } from '../e2e/support.js';
import { ALERT_SIGNAL_FLAPPING_STARTED, ALERT_SIGNAL_RECOVERED, ALERT_SIGNAL_TRIGGERED } from '../../src/alerting/domain/endpoint-alerts.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

interface Mail {
  from: string;
  to: string[];
  raw: string;
}

describe('notification formats', () => {
  let t: TestApp;
  let receiver: Receiver;
  let smtp: SMTPServer;
  const mails: Mail[] = [];
  let teamId: number;
  let token: string;
  let projectId: number;
  let endpointId: number;

  beforeAll(async () => {
    receiver = await startReceiver();
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ from: String(session.envelope.mailFrom && session.envelope.mailFrom.address), to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${port}`, EMAIL_FROM: 'alerts@monitor.test' });
    teamId = (await t.createTeam('Formats')).id;
    token = (await t.issueToken(teamId, ALL_SCOPES)).token;
    projectId = (await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'Shop' })).json().data.id;
    endpointId = (await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: projectId, name: 'Checkout API', url: 'https://shop.example.com/health' })).json().data.id;
    const channels = `/api/v2/teams/${teamId}/notification-channels`;
    const create = async (body: object) => {
      const response = await t.admin('POST', channels, body);
      expect(response.statusCode).toBe(201);
      expect(response.json().data.secret).toBeUndefined();
      return response.json().data;
    };
    await create({ name: 'Slack', kind: 'slack', config: { url: `${receiver.url}/slack/T000/B000/XXXX` } });
    await create({ name: 'Discord', kind: 'discord', config: { url: `${receiver.url}/discord/123/abc` } });
    const pd = await create({ name: 'PD', kind: 'pagerduty', config: { routing_key: 'R0UT1NGKEY', url: `${receiver.url}/pagerduty` } });
    expect(pd).toMatchObject({ config: { routing_key_configured: true } });
    const mail = await create({ name: 'Mail', kind: 'email', config: { to: ['oncall@example.com', 'lead@example.com'] } });
    expect(mail.config).toEqual({ to: ['oncall@example.com', 'lead@example.com'] });

    const incident = await t.request('POST', '/api/public/v2/incidents', {
      token,
      body: { title: 'Checkout failing', project_id: projectId, endpoint_ids: [endpointId], severity: 'critical' },
    });
    expect(incident.statusCode).toBe(201);
    await t.request('PATCH', `/api/public/v2/incidents/${incident.json().data.id}/status`, { token, body: { resolved: true } });
    await eventually('every channel to get both events', async () => receiver.received.length >= 6 && mails.length >= 2);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  const at = (path: string) => receiver.received.filter((r) => r.path.startsWith(path)).map((r) => r.json);
  const mailAbout = (what: string) => mails.find((m) => m.raw.includes(what))!;

  it('Slack: text and blocks with title, severity, state and endpoint names', () => {
    const [opened, resolved] = at('/slack');
    expect(opened.text).toBe('Incident opened: Checkout failing');
    expect(opened.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: '*Incident opened: Checkout failing*' } });
    expect(opened.blocks[1].fields.map((f: any) => f.text)).toEqual(['Severity: critical', 'State: open', 'Status: Investigating', 'Endpoints: Checkout API', expect.stringMatching(/^Incident: #\d+$/)]);
    expect(resolved.text).toBe('Incident resolved: Checkout failing');
    expect(resolved.blocks[1].fields[1].text).toBe('State: resolved');
  });

  it('Discord: content and one embed with fields', () => {
    const [opened] = at('/discord');
    expect(opened.content).toBe('Incident opened: Checkout failing');
    expect(opened.embeds).toHaveLength(1);
    expect(opened.embeds[0]).toMatchObject({ title: 'Checkout failing', description: 'Incident opened', color: 0xd92d20, timestamp: expect.any(String) });
    expect(opened.embeds[0].fields).toEqual([
      { name: 'Severity', value: 'critical', inline: true },
      { name: 'State', value: 'open', inline: true },
      { name: 'Status', value: 'Investigating', inline: true },
      { name: 'Endpoints', value: 'Checkout API' },
      { name: 'Incident', value: expect.stringMatching(/^#\d+$/), inline: true },
    ]);
  });

  it('PagerDuty Events API v2: trigger then resolve under one dedup key per incident', () => {
    const [trigger, resolve] = at('/pagerduty');
    expect(trigger).toMatchObject({
      routing_key: 'R0UT1NGKEY',
      event_action: 'trigger',
      dedup_key: expect.stringMatching(/^incident-\d+$/),
      payload: { summary: 'Incident opened: Checkout failing', source: 'Checkout API', severity: 'critical', timestamp: expect.any(String), class: 'incident.opened' },
    });
    expect(resolve).toEqual({ routing_key: 'R0UT1NGKEY', event_action: 'resolve', dedup_key: trigger.dedup_key });
  });

  it('a posted update carries its text, a status change its status, a merge its sources', async () => {
    // Before, an "Incident update posted" mail said which incident but not what was posted,
    // and a status change read "State: open" with the new status nowhere.
    const open = async (title: string) =>
      (await t.request('POST', '/api/public/v2/incidents', { token, body: { title, project_id: projectId, endpoint_ids: [endpointId], severity: 'warning' } })).json().data;
    const incident = await open('Payments slow');
    const source = await open('Card errors');
    const path = `/api/public/v2/incidents/${incident.id}`;
    expect((await t.request('POST', `${path}/checkpoints`, { token, body: { title: 'Provider outage', body: 'Card payments fail.\nRetry later.', status_label: 'Identified' } })).statusCode).toBe(201);
    expect((await t.request('PATCH', `${path}/status`, { token, body: { status: 'Identified' } })).statusCode).toBe(200);
    expect((await t.request('POST', `${path}/merge`, { token, body: { source_incident_ids: [source.id] } })).statusCode).toBe(200);
    const about = (channel: string, text: string) => at(channel).find((m) => JSON.stringify(m).includes(text));
    await eventually('the update, the status change and the merge on every channel', async () =>
      ['Incident update posted', 'Incident updated', 'Incidents merged'].every(
        (headline) => about('/slack', `${headline}: Payments slow`) && about('/discord', `${headline}: Payments slow`) && mails.some((m) => m.raw.includes(`${headline}: Payments slow`)),
      ) && at('/pagerduty').filter((e) => e.dedup_key === `incident-${incident.id}`).length >= 4,
    );
    const mail = (headline: string) => mails.find((m) => m.raw.includes(`Subject: [warning] ${headline}: Payments slow`))!.raw;
    expect(mail('Incident update posted')).toContain('Update (Identified): Provider outage\r\nCard payments fail.\r\nRetry later.');
    expect(mail('Incident updated')).toContain('Status: Identified');
    expect(mail('Incidents merged')).toContain(`Merged: #${source.id} Card errors`);

    const slack = about('/slack', 'Incident update posted: Payments slow');
    expect(slack.blocks).toContainEqual({ type: 'section', text: { type: 'mrkdwn', text: '*Update (Identified): Provider outage*\nCard payments fail.\nRetry later.' } });
    expect(about('/slack', 'Incident updated: Payments slow').blocks[1].fields.map((f: any) => f.text)).toContain('Status: Identified');
    expect(about('/slack', 'Incidents merged: Payments slow').blocks[1].fields.map((f: any) => f.text)).toContain(`Merged: #${source.id} Card errors`);
    const discord = about('/discord', 'Incident update posted: Payments slow');
    expect(discord.embeds[0].fields).toContainEqual({ name: 'Update (Identified): Provider outage', value: 'Card payments fail.\nRetry later.' });
    const pagerduty = at('/pagerduty').find((e) => e.payload?.class === 'incident.checkpoint_added' && e.dedup_key === `incident-${incident.id}`);
    expect(pagerduty.payload.custom_details.update).toEqual({ title: 'Provider outage', body: 'Card payments fail.\nRetry later.', status_label: 'Identified' });
    // The source's own PagerDuty alert (triggered when it opened) is resolved by the merge, or
    // on-call would keep an alert open for an incident that no longer exists on its own.
    await eventually('the source resolved on PagerDuty', async () => at('/pagerduty').some((e) => e.dedup_key === `incident-${source.id}` && e.event_action === 'resolve'));
    const sourceEvents = at('/pagerduty').filter((e) => e.dedup_key === `incident-${source.id}`);
    expect(sourceEvents.map((e) => e.event_action)).toEqual(['trigger', 'resolve']);
  });

  it('email: through SMTP_URL to every recipient, subject and text with the facts', () => {
    const [opened, resolved] = [mailAbout('Incident opened'), mailAbout('Incident resolved')];
    expect(opened.from).toBe('alerts@monitor.test');
    expect(opened.to).toEqual(['oncall@example.com', 'lead@example.com']);
    expect(opened.raw).toMatch(/Subject: \[critical\] Incident opened: Checkout failing/);
    expect(opened.raw).toContain('Endpoints: Checkout API');
    expect(opened.raw).toContain('State: open');
    expect(resolved.raw).toMatch(/Subject: \[critical\] Incident resolved: Checkout failing/);
  });

  it('responses show the host, never the URL or routing key', async () => {
    const listed = await t.admin('GET', `/api/v2/teams/${teamId}/notification-channels`);
    expect(listed.json().data.map((c: any) => [c.kind, c.url_configured])).toEqual([
      ['slack', true],
      ['discord', true],
      ['pagerduty', true],
      ['email', false],
    ]);
    for (const secret of ['/slack/T000', '/discord/123', 'R0UT1NGKEY', '/pagerduty']) expect(listed.body).not.toContain(secret);
  });

  it('a recovery while the endpoint flaps says its incident stays open, as status pages say "monitoring"', async () => {
    // Before, "Alert recovered" with the incident named read as the end of it, while the
    // flapping rule kept the incident open (and the status page said "Recovered, monitoring").
    const flappy = (await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: projectId, name: 'Flappy API', url: 'https://shop.example.com/flappy' })).json().data.id;
    const record = async (type: string, data: Record<string, unknown>) =>
      t.platform.events.append(
        checksStream(flappy),
        [{ type, data: { endpoint_id: flappy, team_id: teamId, project_id: projectId, signal: 'availability', check_id: 0, at: new Date().toISOString(), ...data } }],
        { expectedRevision: 'any' },
      );
    await record(ALERT_SIGNAL_TRIGGERED, {});
    await eventually('the automatic incident', async () => (await t.request('GET', `/api/public/v2/endpoints/${flappy}/alert-status`, { token })).json().data.signals[0].incident_id !== null);
    await record(ALERT_SIGNAL_FLAPPING_STARTED, { changes: 3, window_seconds: 3600 });
    await record(ALERT_SIGNAL_RECOVERED, { flapping: true });
    const recovered = () => at('/slack').find((m) => m.text === 'Alert recovered: Flappy API recovered (availability)');
    await eventually('the recovery on Slack', async () => recovered() !== undefined && mailAbout('Flappy API recovered') !== undefined);
    const incidentId = (await t.request('GET', `/api/public/v2/incidents?endpoint_id=${flappy}`, { token })).json().data[0].id;
    const status = `Status: Monitoring: the endpoint is flapping, so incident #${incidentId} stays open`;
    expect(recovered()!.blocks[1].fields.map((f: any) => f.text)).toContain(status);
    expect(mailAbout('Flappy API recovered').raw).toContain(status);
    expect((await t.request('GET', `/api/public/v2/incidents/${incidentId}`, { token })).json().data.resolved_at).toBeNull();
    // PagerDuty: the alert stays open (resolved, the next flap's trigger would page again).
    const paged = () => at('/pagerduty').filter((e) => e.dedup_key === `incident-${incidentId}`);
    const recoveryEvent = () => paged().find((e) => e.event_action === 'resolve' || e.payload?.class === 'alert.recovered');
    await eventually('the recovery on PagerDuty', async () => recoveryEvent() !== undefined);
    expect(recoveryEvent()).toMatchObject({ event_action: 'trigger', payload: { class: 'alert.recovered', severity: 'info', custom_details: { status: expect.stringContaining('stays open') } } });
    expect(paged().map((e) => e.event_action)).not.toContain('resolve');
  });
});
