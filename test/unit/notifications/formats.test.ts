import { discordMessage, messageFacts, slackMessage, type WebhookPayload } from '../../../src/notifications/domain/formats.js';

describe('human-readable formats', () => {
  const checkpointPayload = (body: string): WebhookPayload => ({
    type: 'incident.checkpoint_added',
    timestamp: '2026-11-20T10:00:00.000Z',
    data: {
      incident: { id: 7, title: 'A & B <down>', severity: 'critical', resolved_at: null, endpoint_ids: [1], status_name: 'Identified' },
      checkpoint: { id: 1, title: 'Cause', body, status_label: '', created_at: '2026-11-20T10:00:00.000Z', updated_at: '2026-11-20T10:00:00.000Z' },
    },
  });

  test('Slack: a checkpoint cannot ping a channel or make a link; its text reads as written', () => {
    const message = slackMessage(messageFacts(checkpointPayload('<!channel> see <https://evil|here> & retry'), new Map([[1, 'Shop <api>']]))) as any;
    expect(message.text).toBe('Incident update posted: A &amp; B &lt;down&gt;');
    expect(message.blocks[1].fields.map((f: any) => f.text)).toContain('Endpoints: Shop &lt;api&gt;');
    expect(message.blocks[2].text.text).toBe('*Update: Cause*\n&lt;!channel&gt; see &lt;https://evil|here&gt; &amp; retry');
  });

  test('Discord: no mention in a title or update pings anyone (@everyone, @here, roles, users)', () => {
    const message = discordMessage(messageFacts(checkpointPayload('@everyone look'), new Map())) as any;
    expect(message.allowed_mentions).toEqual({ parse: [] });
  });

  test('a recovery while the endpoint flaps says its incident stays open; any other recovery does not', () => {
    const recovery = (flapping: boolean): WebhookPayload => ({
      type: 'alert.recovered',
      timestamp: '2026-11-20T10:00:00.000Z',
      data: { endpoint_id: 1, signal: { type: 'availability', state: 'ok' }, incident_id: 7, ...(flapping ? { flapping: true } : {}) },
    });
    expect(messageFacts(recovery(true), new Map()).status).toBe('Monitoring: the endpoint is flapping, so incident #7 stays open');
    expect(messageFacts(recovery(false), new Map()).status).toBeNull();
  });

  test('an update without a body or label is its title alone', () => {
    const facts = messageFacts(checkpointPayload('  '), new Map());
    expect((slackMessage(facts) as any).blocks[2].text.text).toBe('*Update: Cause*');
  });
});
