/**
 * The life cycle of checks on disk, measured as an operator would: a fresh DATA_DIR, checks
 * imported over the admin import route, the service stopped cleanly, the files summed.
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createHttpApp } from '../src/app/http-app.js';
import { projections, upcasters } from '../src/app/contexts.js';
import { loadConfig } from '../src/platform/config/config.js';
import { silentLogger } from '../src/platform/logging/logger.js';
import { createPlatform, type Platform } from '../src/platform/platform.js';
import type { BenchFigure, BenchModule } from './bench.js';

const ADMIN = 'bench-admin-token-0123456789';
const DAY_MS = 86_400_000;

interface Service {
  platform: Platform;
  admin(method: string, url: string, body?: unknown): Promise<any>;
  close(): Promise<void>;
}

async function startService(dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  mkdirSync(dataDir, { recursive: true });
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'silent', ...env });
  const platform = await createPlatform(config, { projections: projections(), upcasters: upcasters(), withRunner: true, withTransport: true, logger: silentLogger });
  await platform.runner!.start();
  const app = await createHttpApp(platform);
  await app.getHttpAdapter().getInstance().ready();
  const admin = async (method: string, url: string, body?: unknown) => {
    const response = await app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, payload: body === undefined ? undefined : JSON.stringify(body) });
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json().data;
  };
  return {
    platform,
    admin,
    async close() {
      await app.close();
      await platform.close();
    },
  };
}

/** A team, one project and `count` endpoints, created over the application API. */
async function provision(service: Service, count: number): Promise<{ teamId: number; endpointIds: number[] }> {
  const team = await service.admin('POST', '/api/v2/teams', { name: 'Bench' });
  const project = await service.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Web' });
  const endpointIds: number[] = [];
  for (let i = 0; i < count; i++) {
    const endpoint = await service.admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: `e${i}`, url: `https://example.com/${i}` });
    endpointIds.push(endpoint.id);
  }
  return { teamId: team.id, endpointIds };
}

/** A realistic mix: one check in 20 fails (503, or a timeout with no status). */
function check(n: number, at: number) {
  const failed = n % 20 === 0;
  return failed
    ? { checked_at: new Date(at).toISOString(), success: false, status_code: n % 40 === 0 ? 0 : 503, latency_ms: 900 + (n % 300), failure_reason: n % 40 === 0 ? 'timeout: no response within 10000 ms' : 'status: 503' }
    : { checked_at: new Date(at).toISOString(), success: true, status_code: 200, latency_ms: 40 + ((n * 7919) % 160) };
}

/** Imports `perEndpoint` checks into each endpoint, `intervalMs` apart, ending at `endMs`. */
async function importChecks(service: Service, teamId: number, endpointIds: number[], perEndpoint: number, endMs: number, intervalMs: number): Promise<void> {
  const chunk = 5000;
  for (const endpointId of endpointIds) {
    for (let start = 0; start < perEndpoint; start += chunk) {
      const checks = [];
      for (let i = start; i < Math.min(perEndpoint, start + chunk); i++) checks.push(check(i, endMs - (perEndpoint - i) * intervalMs));
      await service.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`, { checks });
    }
  }
}

function filesBytes(dataDir: string): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const name of readdirSync(dataDir)) sizes[name] = statSync(join(dataDir, name)).size;
  return sizes;
}

function total(sizes: Record<string, number>): number {
  return Object.values(sizes).reduce((a, b) => a + b, 0);
}

/** Bytes per table and index (dbstat), for "where the bytes go". */
function bytesByObject(file: string): Array<[string, number]> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all() as Array<{ name: string; bytes: number }>;
    return rows.map((r) => [r.name, r.bytes]);
  } finally {
    db.close();
  }
}

async function bytesPerCheck(workDir: string, checks: number, log: (line: string) => void): Promise<{ perCheck: number; events: number; views: number; where: string[] }> {
  const dataDir = join(workDir, 'bytes');
  const provisioning = await startService(dataDir);
  const { teamId, endpointIds } = await provision(provisioning, 10);
  await provisioning.close();
  const emptyBytes = filesBytes(dataDir);
  const service = await startService(dataDir);
  log(`importing ${checks} checks into 10 endpoints`);
  await importChecks(service, teamId, endpointIds, checks / 10, Date.now() - 60_000, 30_000);
  await service.close();
  const sizes = filesBytes(dataDir);
  const perCheck = (total(sizes) - total(emptyBytes)) / checks;
  const where: string[] = [];
  for (const file of ['events.sqlite', 'views.sqlite']) {
    const objects = bytesByObject(join(dataDir, file)).filter(([, bytes]) => bytes / checks >= 5);
    where.push(`${file}: ${objects.map(([name, bytes]) => `${name} ${Math.round(bytes / checks)}`).join(', ')} (bytes per check)`);
  }
  return {
    perCheck,
    events: ((sizes['events.sqlite'] ?? 0) - (emptyBytes['events.sqlite'] ?? 0)) / checks,
    views: ((sizes['views.sqlite'] ?? 0) - (emptyBytes['views.sqlite'] ?? 0)) / checks,
    where,
  };
}

const bench: BenchModule = {
  name: 'lifecycle',
  async run({ quick, workDir, log }) {
    const figures: BenchFigure[] = [];
    const notes: string[] = [];
    const checks = quick ? 10_000 : 100_000;
    const bytes = await bytesPerCheck(workDir, checks, log);
    figures.push({ name: `bytes per check on disk (${checks} imported, 10 endpoints, events + views)`, value: bytes.perCheck, unit: 'B', aim: '<= 400' });
    figures.push({ name: 'of which event log', value: bytes.events, unit: 'B' });
    figures.push({ name: 'of which views', value: bytes.views, unit: 'B' });
    notes.push(...bytes.where);
    bytes.where.forEach(log);
    void DAY_MS;
    return { title: 'Check life cycle: bytes per check, retention, rebuild', figures, notes };
  },
};

export default bench;
