/**
 * What each kind of channel receives for one notification. The webhook body is the Standard
 * Webhooks envelope `{ type, timestamp, data }`; Slack, Discord, email and PagerDuty get their
 * own formats, all built from one plain summary (title, severity, state, the incident's status,
 * affected endpoints, and a posted update's text or a merge's sources).
 */
import type { IncidentSummary } from '../../incidents/domain/detail-view.js';
import type { NotificationType } from './notification-types.js';

export interface WebhookPayload {
  type: NotificationType;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The facts every human-readable format is made of. */
export interface MessageFacts {
  headline: string;
  title: string;
  severity: 'critical' | 'warning' | 'info';
  state: 'open' | 'resolved' | 'triggered' | 'ok' | 'test';
  endpoints: string[];
  incident_id: number | null;
  /** The incident's status name as the API shows it (Investigating, Identified...); null for alerts. */
  status: string | null;
  /** A posted checkpoint: the public update's text (never a private comment). */
  update: { title: string; body: string; status_label: string } | null;
  /** A merge's sources, `#id title`. */
  merged: string[];
  timestamp: string;
}

/** `Update (Identified): title`, or `Update: title` without a label. */
export function updateHeading(update: NonNullable<MessageFacts['update']>): string {
  return `Update${update.status_label.trim() === '' ? '' : ` (${update.status_label})`}: ${update.title}`;
}

const HEADLINES: Record<NotificationType, string> = {
  'incident.opened': 'Incident opened',
  'incident.resolved': 'Incident resolved',
  'incident.reopened': 'Incident reopened',
  'incident.updated': 'Incident updated',
  'incident.merged': 'Incidents merged',
  'incident.checkpoint_added': 'Incident update posted',
  'alert.triggered': 'Alert triggered',
  'alert.recovered': 'Alert recovered',
  ping: 'Test notification',
};

/** `endpointNames`: id -> name for the endpoints the payload names (unknown ids show as `#id`). */
export function messageFacts(payload: WebhookPayload, endpointNames: Map<number, string>): MessageFacts {
  const name = (id: number) => endpointNames.get(id) ?? `#${id}`;
  const incident = payload.data.incident as IncidentSummary | undefined;
  if (incident) {
    const checkpoint = payload.data.checkpoint as { title: string; body: string; status_label: string } | undefined;
    const merged = (payload.data.merged_incidents as Array<{ id: number; title: string }> | undefined) ?? [];
    return {
      headline: HEADLINES[payload.type],
      title: incident.title,
      severity: incident.severity,
      state: incident.resolved_at === null ? 'open' : 'resolved',
      endpoints: incident.endpoint_ids.map(name),
      incident_id: incident.id,
      status: incident.status_name,
      update: checkpoint ? { title: checkpoint.title, body: checkpoint.body, status_label: checkpoint.status_label } : null,
      merged: merged.map((m) => `#${m.id} ${m.title}`),
      timestamp: payload.timestamp,
    };
  }
  if (payload.type === 'alert.triggered' || payload.type === 'alert.recovered') {
    const signal = payload.data.signal as { type: string; state: 'ok' | 'triggered' };
    const endpoint = name(payload.data.endpoint_id as number);
    const what = signal.type === 'latency' ? 'is responding slowly' : 'is unavailable';
    const incidentId = (payload.data.incident_id as number | null) ?? null;
    // The flapping rule keeps the incident open through this recovery: say so, as status pages do.
    const watched = payload.type === 'alert.recovered' && payload.data.flapping === true;
    return {
      headline: HEADLINES[payload.type],
      title: payload.type === 'alert.triggered' ? `${endpoint} ${what}` : `${endpoint} recovered (${signal.type})`,
      severity: payload.type === 'alert.recovered' ? 'info' : signal.type === 'latency' ? 'warning' : 'critical',
      state: signal.state,
      endpoints: [endpoint],
      incident_id: incidentId,
      status: watched ? `Monitoring: the endpoint is flapping, so ${incidentId === null ? 'its incident' : `incident #${incidentId}`} stays open` : null,
      update: null,
      merged: [],
      timestamp: payload.timestamp,
    };
  }
  return { headline: HEADLINES.ping, title: 'This channel is set up correctly.', severity: 'info', state: 'test', endpoints: [], incident_id: null, status: null, update: null, merged: [], timestamp: payload.timestamp };
}

function lines(facts: MessageFacts): string[] {
  return [
    `Severity: ${facts.severity}`,
    `State: ${facts.state}`,
    ...(facts.status !== null ? [`Status: ${facts.status}`] : []),
    ...(facts.endpoints.length > 0 ? [`Endpoints: ${facts.endpoints.join(', ')}`] : []),
    ...(facts.incident_id !== null ? [`Incident: #${facts.incident_id}`] : []),
    ...(facts.merged.length > 0 ? [`Merged: ${facts.merged.join(', ')}`] : []),
  ];
}

/** The update's heading and body as lines (the body may be empty). */
function updateLines(update: NonNullable<MessageFacts['update']>): string[] {
  return [updateHeading(update), ...(update.body.trim() === '' ? [] : [update.body])];
}

/** Slack's three control characters: `<!channel>` in a checkpoint must not ping anyone. */
const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Slack incoming webhook (also spoken by Mattermost, Rocket.Chat and others). */
export function slackMessage(facts: MessageFacts): Record<string, unknown> {
  const text = `*${slackEscape(`${facts.headline}: ${facts.title}`)}*`;
  return {
    text: slackEscape(`${facts.headline}: ${facts.title}`),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text } },
      { type: 'section', fields: lines(facts).map((line) => ({ type: 'mrkdwn', text: slackEscape(line) })) },
      ...(facts.update ? [{ type: 'section', text: { type: 'mrkdwn', text: slackEscape([`*${updateHeading(facts.update)}*`, ...updateLines(facts.update).slice(1)].join('\n')) } }] : []),
      { type: 'context', elements: [{ type: 'mrkdwn', text: facts.timestamp }] },
    ],
  };
}

const DISCORD_COLORS = { critical: 0xd92d20, warning: 0xf79009, info: 0x12b76a } as const;

/** Discord webhook: one embed. */
export function discordMessage(facts: MessageFacts): Record<string, unknown> {
  return {
    content: `${facts.headline}: ${facts.title}`,
    // Titles and updates are the team's text: an "@everyone" in them must not ping the server.
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: facts.title,
        description: facts.headline,
        color: DISCORD_COLORS[facts.severity],
        timestamp: facts.timestamp,
        fields: [
          { name: 'Severity', value: facts.severity, inline: true },
          { name: 'State', value: facts.state, inline: true },
          ...(facts.status !== null ? [{ name: 'Status', value: facts.status, inline: true }] : []),
          ...(facts.endpoints.length > 0 ? [{ name: 'Endpoints', value: facts.endpoints.join(', ') }] : []),
          ...(facts.incident_id !== null ? [{ name: 'Incident', value: `#${facts.incident_id}`, inline: true }] : []),
          ...(facts.merged.length > 0 ? [{ name: 'Merged', value: facts.merged.join(', ') }] : []),
          // Discord refuses a field name over 256 characters or a value over 1,024 (or empty).
          ...(facts.update ? [{ name: updateHeading(facts.update).slice(0, 256), value: (facts.update.body.trim() === '' ? '-' : facts.update.body).slice(0, 1024) }] : []),
        ],
      },
    ],
  };
}

export function emailMessage(facts: MessageFacts): { subject: string; text: string } {
  return {
    subject: `[${facts.severity}] ${facts.headline}: ${facts.title}`,
    text: [`${facts.headline}: ${facts.title}`, '', ...lines(facts), `Time: ${facts.timestamp}`, '', ...(facts.update ? [...updateLines(facts.update), ''] : [])].join('\n'),
  };
}

/**
 * The PagerDuty events of one notification, sent in order: a merge first resolves each source's
 * own alert (`incident-<source>`, triggered when it opened; the source no longer exists on its
 * own and no other event will resolve it), then the target's event. Resending all of them on a
 * retry is harmless: PagerDuty ignores a resolve of a resolved alert and deduplicates triggers.
 */
export function pagerdutyEvents(payload: WebhookPayload, facts: MessageFacts, routingKey: string, deliveryId: string): Array<Record<string, unknown>> {
  const sources = payload.type === 'incident.merged' ? ((payload.data.merged_incidents as Array<{ id: number }> | undefined) ?? []) : [];
  return [
    ...sources.map((source) => ({ routing_key: routingKey, event_action: 'resolve', dedup_key: `incident-${source.id}` })),
    pagerdutyEvent(payload, facts, routingKey, deliveryId),
  ];
}

/**
 * PagerDuty Events API v2. Incidents trigger and resolve under `incident-<id>`, so updates of
 * one incident land on one PagerDuty alert; alerts without an incident use
 * `endpoint-<id>-<signal>`; a test triggers under a key of its own. A recovery while the
 * endpoint flaps leaves its incident open: it updates the alert (a trigger under the same key,
 * which PagerDuty adds to the open alert) instead of resolving it, or every flap would resolve
 * the alert and the next trigger page again.
 */
function pagerdutyEvent(payload: WebhookPayload, facts: MessageFacts, routingKey: string, deliveryId: string): Record<string, unknown> {
  const alert = payload.data.signal as { type: string } | undefined;
  const dedupKey =
    facts.incident_id !== null
      ? `incident-${facts.incident_id}`
      : alert
        ? `endpoint-${payload.data.endpoint_id}-${alert.type}`
        : `test-${deliveryId}`;
  const heldOpen = payload.type === 'alert.recovered' && payload.data.flapping === true && facts.incident_id !== null;
  const resolves = payload.type === 'incident.resolved' || (payload.type === 'alert.recovered' && !heldOpen) || (payload.type === 'incident.merged' && facts.state === 'resolved');
  if (resolves) return { routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey };
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    payload: {
      summary: `${facts.headline}: ${facts.title}`.slice(0, 1024),
      source: facts.endpoints[0] ?? 'http-monitor',
      severity: facts.severity,
      timestamp: facts.timestamp,
      component: facts.endpoints.join(', ') || undefined,
      class: payload.type,
      custom_details: {
        state: facts.state,
        endpoints: facts.endpoints,
        incident_id: facts.incident_id,
        type: payload.type,
        ...(facts.status !== null ? { status: facts.status } : {}),
        ...(facts.update ? { update: facts.update } : {}),
        ...(facts.merged.length > 0 ? { merged: facts.merged } : {}),
      },
    },
  };
}
