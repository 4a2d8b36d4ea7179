import { MongoClient } from 'mongodb';
import { ConfigError, loadConfig } from '../../../src/platform/config/config.js';
import { EsdbEventStore } from '../../../src/platform/event-store/eventstoredb/esdb-event-store.js';
import { StoreUnavailableError } from '../../../src/platform/event-store/event-store.port.js';
import { mongoClientFor } from '../../../src/platform/read-store/mongodb/mongo-connection.js';
import { natsServers } from '../../../src/platform/transport/nats/nats-transport.js';

const SHARED = { ADMIN_TOKEN: 'a-real-admin-token-0123456789', CURSOR_SIGNING_KEY: 'k'.repeat(16) + 'a-real-cursor-key-0123' };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('distributed connection strings are judged by the clients that use them', () => {
  it('starts with a MongoDB replica set of several hosts and an EventStoreDB cluster of several nodes', () => {
    const config = loadConfig({
      ...SHARED,
      MONGODB_URL: 'mongodb://m1:27017,m2:27017,m3:27017/monitoring?replicaSet=rs0',
      EVENTSTORE_URL: 'esdb://n1:2113,n2:2113,n3:2113?tls=false',
    });
    expect(config.mongodbUrl).toBe('mongodb://m1:27017,m2:27017,m3:27017/monitoring?replicaSet=rs0');
    expect(config.eventStoreUrl).toBe('esdb://n1:2113,n2:2113,n3:2113?tls=false');
    expect(loadConfig({ ...SHARED, MONGODB_URL: 'mongodb+srv://cluster0.example.com/monitoring', EVENTSTORE_URL: 'esdb+discover://cluster.example.com:2113' }).mongodbUrl).toBe(
      'mongodb+srv://cluster0.example.com/monitoring',
    );
  });

  it('refuses at start, with the client\'s own message, what the pinned clients refuse (kurrentdb:// included)', () => {
    expect(problemsOf({ ...SHARED, EVENTSTORE_URL: 'kurrentdb://n1:2113' })).toEqual([
      expect.stringMatching(/^EVENTSTORE_URL is refused by the EventStoreDB client: .*expected esdb:\/\/ or esdb\+discover:\/\//),
    ]);
    expect(problemsOf({ ...SHARED, EVENTSTORE_URL: 'esdb://n1:http' })).toEqual([expect.stringContaining('expected port number')]);
    expect(problemsOf({ ...SHARED, MONGODB_URL: 'mongodb://m1:27017/db?replicaSet=' })).toEqual([
      'MONGODB_URL is refused by the MongoDB client: URI option "replicaSet" cannot be specified with no value',
    ]);
    expect(problemsOf({ ...SHARED, MONGODB_URL: 'postgres://x' })).toEqual([expect.stringContaining('Invalid scheme')]);
  });

  it('accepts a NATS cluster as comma-separated server URLs, each checked', () => {
    expect(loadConfig({ NATS_URL: 'nats://n1:4222, nats://n2:4222' }).natsUrl).toBe('nats://n1:4222, nats://n2:4222');
    expect(natsServers('nats://n1:4222, nats://n2:4222')).toEqual(['nats://n1:4222', 'nats://n2:4222']);
    expect(problemsOf({ NATS_URL: 'nats://n1:4222,http://n2:4222' })).toEqual([expect.stringContaining('"http://n2:4222"')]);
  });

  it('reads the probe queue settings, with defaults, and refuses values out of range', () => {
    expect(loadConfig({})).toMatchObject({ natsStreamReplicas: 1, natsMaxDeliver: 5, natsMaxAckPending: 10_000 });
    expect(loadConfig({ NATS_STREAM_REPLICAS: '3', NATS_MAX_DELIVER: '2', NATS_MAX_ACK_PENDING: '500' })).toMatchObject({ natsStreamReplicas: 3, natsMaxDeliver: 2, natsMaxAckPending: 500 });
    expect(problemsOf({ NATS_STREAM_REPLICAS: '0', NATS_MAX_DELIVER: 'many' })).toEqual([
      'NATS_STREAM_REPLICAS must be an integer from 1 to 5, got "0"',
      'NATS_MAX_DELIVER must be an integer from 1 to 100, got "many"',
    ]);
  });

  it('never echoes credentials from a URL it refuses', () => {
    const problems = problemsOf({ NATS_URL: 'http://user:s3cr3t-pass@nats:4222' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).not.toContain('s3cr3t');
  });

  it('treats a connection string the EventStoreDB client refuses as a configuration error, not an unavailable store', () => {
    let error: unknown;
    try {
      new EsdbEventStore('kurrentdb://n1:2113');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
  });
});

describe('MongoDB database name', () => {
  it('is the one in the URL path, else ours, never the driver\'s `test`', () => {
    const named = mongoClientFor('mongodb://m1:27017,m2:27017/monitoring?replicaSet=rs0', {});
    const unnamed = mongoClientFor('mongodb://m1:27017,m2:27017/?replicaSet=rs0', {});
    const bare = mongoClientFor('mongodb://m1:27017', {});
    expect(named.dbName).toBe('monitoring');
    expect(unnamed.dbName).toBe('http_monitor');
    expect(bare.dbName).toBe('http_monitor');
    expect(mongoClientFor('mongodb://u:p%2Fw@m1/test', {}).dbName).toBe('test');
    expect(bare.client).toBeInstanceOf(MongoClient);
    expect(bare.client.db(bare.dbName).databaseName).toBe('http_monitor');
  });
});

describe('shared secrets of a distributed deployment', () => {
  const MONGO = 'mongodb://m1:27017/monitoring?replicaSet=rs0';

  it('requires ADMIN_TOKEN and CURSOR_SIGNING_KEY when a shared store is configured', () => {
    expect(problemsOf({ MONGODB_URL: MONGO })).toEqual([
      expect.stringMatching(/^ADMIN_TOKEN must be set, the same in every process/),
      expect.stringMatching(/^CURSOR_SIGNING_KEY must be set, the same in every process/),
    ]);
    expect(problemsOf({ EVENTSTORE_URL: 'esdb://n1:2113', ADMIN_TOKEN: SHARED.ADMIN_TOKEN })).toEqual([expect.stringMatching(/^CURSOR_SIGNING_KEY must be set/)]);
    expect(loadConfig({ ...SHARED, MONGODB_URL: MONGO }).cursorSigningKey).toBe(SHARED.CURSOR_SIGNING_KEY);
  });

  it('still generates both for an embedded process', () => {
    expect(loadConfig({})).toMatchObject({ adminToken: null, cursorSigningKey: null });
  });

  it('refuses known placeholder values, whatever the deployment', () => {
    expect(problemsOf({ ADMIN_TOKEN: 'change-me-to-a-long-random-secret' })).toEqual([expect.stringMatching(/^ADMIN_TOKEN is a placeholder/)]);
    expect(problemsOf({ ...SHARED, MONGODB_URL: MONGO, CURSOR_SIGNING_KEY: 'replace-me-with-32-random-characters!!' })).toEqual([
      expect.stringMatching(/^CURSOR_SIGNING_KEY is a placeholder/),
    ]);
    expect(problemsOf({ METRICS_TOKEN: 'your-token-goes-here' })).toEqual([expect.stringMatching(/^METRICS_TOKEN is a placeholder/)]);
  });
});
