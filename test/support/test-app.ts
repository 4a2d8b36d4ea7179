import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { startService } from '../../src/app/start-service.js';
import { projections, upcasters } from '../../src/app/contexts.js';
import { loadConfig } from '../../src/platform/config/config.js';
import { silentLogger, type Logger } from '../../src/platform/logging/logger.js';
import { createPlatform, type Platform } from '../../src/platform/platform.js';
import type { Projection } from '../../src/platform/projections/projection.js';
import { LOADED_MACHINE_ENV } from './loaded-machine.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface InjectResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json<T = any>(): T;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface TestApp {
  app: NestFastifyApplication;
  platform: Platform;
  dataDir: string;
  /** Settles once the projection runner has started (see `TestAppOptions.untilRunning`). */
  running: Promise<void>;
  request(method: string, url: string, options?: RequestOptions): Promise<InjectResponse>;
  /** Admin (application API) request. */
  admin(method: string, url: string, body?: unknown): Promise<InjectResponse>;
  createTeam(name?: string): Promise<{ id: number; name: string }>;
  issueToken(teamId: number, scopes: string[], role?: 'editor' | 'viewer', extra?: Record<string, unknown>): Promise<{ id: number; token: string }>;
  close(): Promise<void>;
}

/**
 * The whole service in this process, embedded (SQLite, in-process transport) under a temp
 * DATA_DIR, served through Fastify inject.
 */
export interface TestAppOptions {
  logger?: Logger;
  /** Replaces the service's projections (e.g. to hold one back and watch what waits for it). */
  projections?: (list: Projection[]) => Projection[];
  /** false: no projection runner, as in an API-only process (see second-api.ts). Default true. */
  runner?: boolean;
  /**
   * false: return once the app answers, while the runner still starts (an on-start rebuild
   * under way), as src/main.ts does; `running` settles when it has. Default true.
   */
  untilRunning?: boolean;
}

export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  // A given DATA_DIR is the caller's (a restart on the same files): close() leaves it in place.
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'monitor-test-'));
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent', ...LOADED_MACHINE_ENV, ...env });
  const platform = await createPlatform(config, {
    projections: options.projections ? options.projections(projections()) : projections(),
    upcasters: upcasters(),
    withRunner: options.runner ?? true,
    withTransport: true,
    logger: options.logger ?? silentLogger,
  });
  // The start order of src/main.ts: the app answers first, then the runner starts.
  const service = await startService(platform, (app) => app.getHttpAdapter().getInstance().ready());
  const { app, running } = service;
  if (options.untilRunning ?? true) {
    try {
      await running;
    } catch (error) {
      await service.stop().catch(() => undefined);
      throw error;
    }
  }

  const request = async (method: string, url: string, options: RequestOptions = {}): Promise<InjectResponse> => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await app.inject({ method: method as any, url, headers, payload, query: options.query });
    return {
      statusCode: response.statusCode,
      headers: response.headers,
      body: response.body,
      json: () => JSON.parse(response.body),
    };
  };
  const admin = (method: string, url: string, body?: unknown) => request(method, url, { token: ADMIN_TOKEN, body });

  return {
    app,
    platform,
    dataDir,
    running,
    request,
    admin,
    async createTeam(name = 'Team') {
      const response = await admin('POST', '/api/v2/teams', { name });
      if (response.statusCode !== 201) throw new Error(`createTeam: ${response.statusCode} ${response.body}`);
      return response.json().data;
    },
    async issueToken(teamId, scopes, role = 'editor', extra = {}) {
      const response = await admin('POST', `/api/v2/teams/${teamId}/tokens`, { name: 'test', scopes, role, ...extra });
      if (response.statusCode !== 201) throw new Error(`issueToken: ${response.statusCode} ${response.body}`);
      return response.json().data;
    },
    async close() {
      await service.stop();
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The test app listening on a real socket as well (127.0.0.1, a free `port`), for the tests that
 * speak raw HTTP or disconnect mid-request.
 */
export async function startListeningTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp & { port: number }> {
  const t = await startTestApp(env, options);
  try {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    await t.close();
    throw error;
  }
  return Object.assign(t, { port: (t.app.getHttpServer().address() as AddressInfo).port });
}

export const ALL_SCOPES = ['monitoring:read', 'analytics:read', 'incidents:read', 'incidents:write'];
