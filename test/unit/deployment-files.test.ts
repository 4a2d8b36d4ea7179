import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { load } from 'js-yaml';

/** docker-compose.yml and the Dockerfile, read as Docker reads them. */
interface Service {
  image?: string;
  build?: unknown;
  ports?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] | string };
}
/** YAML merge keys (`<<: *anchor`), which Compose applies and this js-yaml leaves as keys. */
function merged(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(merged);
  if (node === null || typeof node !== 'object') return node;
  const { '<<': base, ...own } = node as Record<string, unknown>;
  const resolved = Object.fromEntries(Object.entries(own).map(([key, value]) => [key, merged(value)]));
  return base === undefined ? resolved : { ...(merged(base) as object), ...resolved };
}
const compose = merged(load(readFileSync('docker-compose.yml', 'utf8'))) as { services: Record<string, Service> };
const services = compose.services;
const STORES = ['eventstore', 'mongo', 'nats'];
const roles = Object.keys(services).filter((name) => !STORES.includes(name));

/** What the mongo healthcheck's script exits with, run against a node in the given state. */
function mongoHealthcheckExit(state: { initiated: boolean; writablePrimary: boolean }): { code: number; initiated: boolean } {
  const test = services.mongo.healthcheck!.test as string[];
  expect(test.slice(0, 5)).toEqual(['CMD', 'mongosh', '--quiet', '--eval', expect.any(String)]);
  let initiated = state.initiated;
  let code = 0; // mongosh --eval exits 0 unless the script says otherwise
  class Quit extends Error {}
  const rs = {
    status() {
      if (!initiated) throw new Error('no replset config has been received');
      return { ok: 1 };
    },
    initiate() {
      initiated = true;
      return { ok: 1 };
    },
  };
  const db = { hello: () => ({ isWritablePrimary: state.writablePrimary }) };
  const quit = (exit = 0) => {
    code = exit;
    throw new Quit();
  };
  try {
    runInNewContext(test[4], { rs, db, quit });
  } catch (error) {
    if (!(error instanceof Quit)) throw error;
  }
  return { code, initiated };
}

describe('docker-compose.yml', () => {
  it('reports MongoDB healthy only once the node is the writable primary, initiating the replica set on first start', () => {
    expect(mongoHealthcheckExit({ initiated: false, writablePrimary: false })).toEqual({ code: 1, initiated: true });
    expect(mongoHealthcheckExit({ initiated: true, writablePrimary: false })).toEqual({ code: 1, initiated: true });
    expect(mongoHealthcheckExit({ initiated: true, writablePrimary: true })).toEqual({ code: 0, initiated: true });
  });

  it('builds one image, once, that every role runs', () => {
    expect([...roles].sort()).toEqual(['api-1', 'api-2', 'prober-1', 'prober-2', 'projector', 'scheduler']);
    expect(roles.filter((name) => services[name].build !== undefined)).toEqual(['api-1']);
    expect(new Set(roles.map((name) => services[name].image))).toEqual(new Set(['http-monitor:local']));
    expect(roles.map((name) => services[name].environment?.ROLE).sort()).toEqual(['api', 'api', 'prober', 'prober', 'projector', 'scheduler']);
  });

  it('publishes the stores\' ports on 127.0.0.1 unless STORE_BIND says otherwise', () => {
    for (const store of STORES) {
      for (const port of services[store].ports ?? []) expect(port).toMatch(/^\$\{STORE_BIND:-127\.0\.0\.1\}:\d+:\d+$/);
    }
  });

  it('ships no default secret: ADMIN_TOKEN and CURSOR_SIGNING_KEY come from the operator', () => {
    for (const name of roles) {
      expect(services[name].environment).toMatchObject({ ADMIN_TOKEN: '${ADMIN_TOKEN:-}', CURSOR_SIGNING_KEY: '${CURSOR_SIGNING_KEY:-}' });
    }
  });
});

describe('Dockerfile', () => {
  it('runs the service as a non-root user that owns only DATA_DIR', () => {
    const runtime = readFileSync('Dockerfile', 'utf8').split(/^FROM /m).at(-1)!;
    const users = [...runtime.matchAll(/^USER\s+(\S+)/gm)].map((match) => match[1]);
    expect(users).toEqual(['node']);
    expect(runtime.indexOf('USER node')).toBeLessThan(runtime.indexOf('CMD '));
    expect(runtime).toMatch(/chown node:node \/data/);
  });
});
