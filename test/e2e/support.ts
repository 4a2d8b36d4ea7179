import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_LATENCY_SETTINGS, type EndpointConfiguration } from '../../src/monitoring/domain/endpoint-configuration.js';
import {
  ENDPOINT_ENABLED,
  ENDPOINT_REGISTERED,
  endpointStream,
  type EndpointRegisteredData,
} from '../../src/monitoring/domain/events.js';
import type { RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import type { TestApp } from '../support/test-app.js';

/** A local HTTP target whose answer (status, delay) the test controls. */
export interface Target {
  url: string;
  mode: { status: number; delayMs: number };
  tokens: Map<number, string>;
  hits: number;
  close(): Promise<void>;
}

export async function startTarget(): Promise<Target> {
  const target = { mode: { status: 200, delayMs: 0 }, tokens: new Map<number, string>(), hits: 0 } as Target;
  const server: Server = createServer((request, response) => {
    const verification = /^\/\.well-known\/monitor-verification\/(\d+)$/.exec(request.url ?? '');
    if (verification) {
      const token = target.tokens.get(Number(verification[1]));
      response.writeHead(token ? 200 : 404).end(token ? `${token}\n` : 'unknown');
      return;
    }
    target.hits++;
    const { status, delayMs } = target.mode;
    setTimeout(() => response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 400 ? 'ok' : 'down'), delayMs);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  target.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return target;
}

export function configuration(url: string, overrides: Partial<EndpointConfiguration> = {}): EndpointConfiguration {
  return {
    ...DEFAULT_LATENCY_SETTINGS,
    url,
    method: 'GET',
    headers: {},
    request_payload: null,
    expected_status: 200,
    body_match_mode: 'none',
    expected_body: null,
    interval_seconds: 1,
    timeout_seconds: 2,
    ...overrides,
  };
}

let nextEndpointId = 900_000;

/**
 * Registers an endpoint. Uses the monitoring admin routes when they are served, and otherwise
 * appends the monitoring contract's EndpointRegistered event (the contract those routes write).
 */
export async function registerEndpoint(t: TestApp, teamId: number, config: EndpointConfiguration, token = 'a'.repeat(64)): Promise<{ id: number; token: string }> {
  const project = await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'P', description: '' });
  if (project.statusCode === 201) {
    const projectId = project.json().data.id;
    const created = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: projectId, name: 'Target', ...config });
    if (created.statusCode === 201) {
      const data = created.json().data;
      return { id: data.id, token: data.verification_token };
    }
  }
  const endpointId = nextEndpointId++;
  const data: EndpointRegisteredData = {
    endpoint_id: endpointId,
    team_id: teamId,
    project_id: 1,
    name: 'Target',
    description: '',
    configuration: config,
    verification_token: token,
    configuration_version: 1,
    created_at: new Date().toISOString(),
  };
  await t.platform.events.append(endpointStream(endpointId), [{ type: ENDPOINT_REGISTERED, data }], { expectedRevision: 'no_stream' });
  return { id: endpointId, token };
}

export async function enableEndpoint(t: TestApp, teamId: number, endpointId: number): Promise<void> {
  const response = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { enabled: true });
  if (response.statusCode === 200) return;
  await t.platform.events.append(endpointStream(endpointId), [{ type: ENDPOINT_ENABLED, data: { endpoint_id: endpointId, team_id: teamId, at: new Date().toISOString() } }], {
    expectedRevision: 'any',
  });
}

export async function allEvents(t: TestApp): Promise<RecordedEvent<any>[]> {
  const events: RecordedEvent<any>[] = [];
  let after: number | null = null;
  for (let page = 0; page < 10_000; page++) {
    const batch = await t.platform.events.readAll({ after, maxCount: 1000 });
    events.push(...batch);
    if (batch.length < 1000) break;
    after = batch[batch.length - 1].position;
  }
  return events;
}

export async function eventually<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
