import { existsSync, readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { load } from 'js-yaml';
import { SERVICE_NODE_FLAGS } from '../../bench/bench.js';

/** docker-compose.yml, the Dockerfile and the workflow, read as Docker and GitHub read them. */
interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
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
const APP_IMAGE = 'http-monitor:local';
const roles = Object.keys(services).filter((name) => services[name].image === APP_IMAGE);
const dockerfile = readFileSync('Dockerfile', 'utf8');
/** The Node version the image is built on (ARG NODE_VERSION). */
const imageNode = /^ARG NODE_VERSION=(\S+)$/m.exec(dockerfile)?.[1];

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
interface Job {
  env?: Record<string, string>;
  strategy?: { matrix?: { node?: number[] } };
  steps: Step[];
}
const workflow = load(readFileSync('.github/workflows/distributed.yml', 'utf8')) as { env?: Record<string, string>; jobs: Record<string, Job> };
const STORE_URLS = ['EVENTSTORE_URL', 'MONGODB_URL', 'NATS_URL'];

/** The roles table of docs/operations.md: role -> the "how many" cell. */
function recommendedCounts(): Map<string, string> {
  const rows = readFileSync('docs/operations.md', 'utf8').split('\n').filter((line) => /^\| `(api|projector|scheduler|prober)` \|/.test(line));
  return new Map(rows.map((row) => {
    const cells = row.split('|').map((cell) => cell.trim());
    return [cells[1].replace(/`/g, ''), cells[4]];
  }));
}

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

/** The services `docker compose up` starts (no profile). */
const deployment = roles.filter((name) => services[name].profiles === undefined);

describe('docker-compose.yml', () => {
  it('has a profile of three probers, each in its own region', () => {
    const regional = roles.filter((name) => services[name].profiles !== undefined);
    expect(regional.map((name) => [name, services[name].profiles, services[name].environment?.ROLE, services[name].environment?.PROBE_REGION])).toEqual([
      ['prober-eu-west', ['regions'], 'prober', 'eu-west'],
      ['prober-us-east', ['regions'], 'prober', 'us-east'],
      ['prober-ap-south', ['regions'], 'prober', 'ap-south'],
    ]);
  });

  it('reports MongoDB healthy only once the node is the writable primary, initiating the replica set on first start', () => {
    expect(mongoHealthcheckExit({ initiated: false, writablePrimary: false })).toEqual({ code: 1, initiated: true });
    expect(mongoHealthcheckExit({ initiated: true, writablePrimary: false })).toEqual({ code: 1, initiated: true });
    expect(mongoHealthcheckExit({ initiated: true, writablePrimary: true })).toEqual({ code: 0, initiated: true });
  });

  it('builds one image, once, that every role runs', () => {
    expect([...deployment].sort()).toEqual(['api-1', 'api-2', 'prober-1', 'prober-2', 'projector-1', 'projector-2', 'scheduler-1', 'scheduler-2']);
    expect(roles.filter((name) => services[name].build !== undefined)).toEqual(['api-1']);
    expect(deployment.map((name) => services[name].environment?.ROLE).sort()).toEqual(['api', 'api', 'prober', 'prober', 'projector', 'projector', 'scheduler', 'scheduler']);
    expect(Object.keys(services).filter((name) => !roles.includes(name) && !STORES.includes(name))).toEqual(['target']);
    expect(services.target.profiles).toEqual(['e2e']); // the end-to-end target is no part of a deployment
  });

  it('runs each role as many times as docs/operations.md recommends (at least two where it says "as many as")', () => {
    const counts = recommendedCounts();
    expect([...counts.keys()].sort()).toEqual(['api', 'prober', 'projector', 'scheduler']);
    for (const [role, cell] of counts) {
      const running = deployment.filter((name) => services[name].environment?.ROLE === role).length;
      const stated = /^(\d+)\b/.exec(cell);
      expect([role, running]).toEqual([role, stated ? Number(stated[1]) : expect.any(Number)]);
      expect([role, running >= 2]).toEqual([role, true]);
    }
  });

  it('pins every image to an exact version, the test target to the image\'s Node', () => {
    for (const name of [...STORES, 'target']) {
      expect([name, services[name].image]).toEqual([name, expect.stringMatching(/^[\w./-]+:\d+\.\d+\.\d+(-[\w.-]+)?$/)]);
    }
    expect(services.target.image).toBe(`node:${imageNode}-trixie-slim`);
  });

  it('starts the roles once NATS is healthy, and NATS is healthy once JetStream is enabled', () => {
    expect(services.nats.command).toEqual(expect.arrayContaining(['-js', '-m', '8222']));
    expect(services.nats.healthcheck!.test).toEqual(['CMD', 'wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:8222/healthz?js-enabled-only=true']);
    for (const name of roles) {
      expect(services[name].depends_on).toEqual({ eventstore: { condition: 'service_healthy' }, mongo: { condition: 'service_healthy' }, nats: { condition: 'service_healthy' } });
    }
  });

  it('publishes the stores\' ports on 127.0.0.1 unless STORE_BIND says otherwise', () => {
    for (const store of STORES) {
      for (const port of services[store].ports ?? []) expect(port).toMatch(/^\$\{STORE_BIND:-127\.0\.0\.1\}:\d+:\d+$/);
    }
  });

  it('ships no default secret: compose refuses to start without ADMIN_TOKEN and CURSOR_SIGNING_KEY', () => {
    for (const name of roles) {
      expect(services[name].environment!.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?[^}]+\}$/);
      expect(services[name].environment!.CURSOR_SIGNING_KEY).toMatch(/^\$\{CURSOR_SIGNING_KEY:\?[^}]+\}$/);
    }
  });
});

describe('Dockerfile', () => {
  it('installs exactly the lockfile (npm ci) on an exact Node version of an LTS line the workflow tests', () => {
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).not.toMatch(/^RUN .*npm install/m);
    expect(imageNode).toMatch(/^\d+\.\d+\.\d+$/);
    expect([...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1])).toEqual(['node:${NODE_VERSION}-trixie-slim', 'node:${NODE_VERSION}-trixie-slim']);
    const major = Number(imageNode!.split('.')[0]);
    expect(major % 2).toBe(0); // even majors are the LTS lines
    expect(workflow.jobs.suites.strategy!.matrix!.node).toContain(major);
  });

  it('runs the service as a non-root user that owns only DATA_DIR', () => {
    const runtime = dockerfile.split(/^FROM /m).at(-1)!;
    const users = [...runtime.matchAll(/^USER\s+(\S+)/gm)].map((match) => match[1]);
    expect(users).toEqual(['node']);
    expect(runtime.indexOf('USER node')).toBeLessThan(runtime.indexOf('CMD '));
    expect(runtime).toMatch(/chown node:node \/data/);
  });
});

describe('Node flags', () => {
  it('starts the service with a 32 MB young generation wherever the project starts it: the image, npm start and the benches that host it', () => {
    // V8 sizes the young generation at start, so the flag lives in the launchers (docs/operations.md).
    const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
    expect(dockerfile).toMatch(/^CMD \["node", "--max-semi-space-size=32", "dist\/src\/main\.js"\]$/m);
    expect(scripts.start).toContain('node --max-semi-space-size=32 dist/src/main.js');
    expect(scripts.bench).toContain('node --max-semi-space-size=32 dist/bench/run.js');
    // The benches that run the service in a child process (incidents, HTTP reads, status pages, regions).
    expect(SERVICE_NODE_FLAGS).toEqual(['--max-semi-space-size=32']);
  });
});

describe('.github/workflows/distributed.yml', () => {
  const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);

  it('gives the store URLs only to the steps that test against the stores', () => {
    expect(Object.keys(workflow.env ?? {}).filter((name) => STORE_URLS.includes(name))).toEqual([]);
    for (const job of Object.values(workflow.jobs)) expect(Object.keys(job.env ?? {}).filter((name) => STORE_URLS.includes(name))).toEqual([]);
    const withUrls = steps.filter((step) => Object.keys(step.env ?? {}).some((name) => STORE_URLS.includes(name)));
    expect(withUrls.map((step) => step.run)).toEqual(['.ci/run', expect.stringContaining('test/contract/projection-checkpoint-race.test.ts')]);
  });

  it('runs the suites on Node 20, 22 and 24 and the image\'s Node, each a line package.json accepts', () => {
    const lines = workflow.jobs.suites.strategy!.matrix!.node!;
    expect(lines).toEqual(expect.arrayContaining([20, 22, 24]));
    expect(JSON.parse(readFileSync('package.json', 'utf8')).engines.node).toBe('>=20.19');
    expect(workflow.jobs.suites.steps.find((step) => step.uses?.startsWith('actions/setup-node'))!.with!['node-version']).toBe('${{ matrix.node }}');
  });

  it('builds the image, starts the whole topology with the target, runs the end-to-end script killing a projector, then the race on MongoDB', () => {
    const runs = workflow.jobs.topology.steps.map((step) => step.run ?? '');
    const order = ['docker compose build', 'docker compose --profile e2e up -d --wait', 'node dist/src/cli/projections.js status', 'node .ci/e2e.mjs', 'projection-checkpoint-race'];
    const at = order.map((text) => runs.findIndex((run) => run.includes(text)));
    expect(at.every((index) => index >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    const e2e = runs.find((run) => run.includes('node .ci/e2e.mjs'))!;
    expect(e2e).toContain('--kill-projector "docker compose kill $holder"');
    expect(e2e).toMatch(/for p in projector-1 projector-2/); // the projector holding the leases
  });

  it('names only files that exist', () => {
    const named = steps.flatMap((step) => [...(step.run ?? '').matchAll(/(?:^|\s)(\.ci\/[\w.-]+|test\/[\w./-]+\.ts)/g)].map((match) => match[1]));
    expect(named.length).toBeGreaterThanOrEqual(3);
    for (const file of named) expect([file, existsSync(file)]).toEqual([file, true]);
  });
});
