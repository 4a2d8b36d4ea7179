import { generateKeyPairSync } from 'node:crypto';
import { loadConfig, ConfigError } from '../../src/platform/config/config.js';

describe('configuration', () => {
  it('defaults to an embedded, all-in-one process on port 3000', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, role: 'all', eventStoreUrl: null, mongodbUrl: null, natsUrl: null });
  });

  it('runs 256 probe jobs at once per prober process unless PROBER_MAX_IN_FLIGHT says otherwise', () => {
    expect(loadConfig({}).proberMaxInFlight).toBe(256);
    expect(loadConfig({ PROBER_MAX_IN_FLIGHT: '32' }).proberMaxInFlight).toBe(32);
    expect(() => loadConfig({ PROBER_MAX_IN_FLIGHT: '0' })).toThrow(/PROBER_MAX_IN_FLIGHT/);
  });

  it('waits 5 s for the views of a write unless READ_YOUR_WRITES_TIMEOUT_MS says otherwise (100 ms to 10 min)', () => {
    expect(loadConfig({}).readYourWritesMs).toBe(5000);
    expect(loadConfig({ READ_YOUR_WRITES_TIMEOUT_MS: '20000' }).readYourWritesMs).toBe(20_000);
    expect(() => loadConfig({ READ_YOUR_WRITES_TIMEOUT_MS: '99' })).toThrow(/READ_YOUR_WRITES_TIMEOUT_MS/);
  });

  it('probes from region local unless PROBE_REGION names another (1-32 of a-z, 0-9, -)', () => {
    expect(loadConfig({}).probeRegion).toBe('local');
    expect(loadConfig({ PROBE_REGION: 'eu-west-1' }).probeRegion).toBe('eu-west-1');
    expect(loadConfig({ PROBE_REGION: 'x'.repeat(32) }).probeRegion).toBe('x'.repeat(32));
    for (const bad of ['EU', 'eu_west', 'eu.west', 'x'.repeat(33), 'a b']) {
      expect(() => loadConfig({ PROBE_REGION: bad })).toThrow(/PROBE_REGION must be 1 to 32 characters of a-z, 0-9 and -/);
    }
  });

  it('AUDIT_SIGNING_KEY: an Ed25519 private key in PEM, one-line with \\n escapes too; a wrong one is named, never echoed', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(loadConfig({}).auditSigningKey).toBeNull();
    expect(loadConfig({ AUDIT_SIGNING_KEY: pem }).auditSigningKey).toBe(pem.trim());
    expect(loadConfig({ AUDIT_SIGNING_KEY: pem.trim().replace(/\n/g, '\\n') }).auditSigningKey).toBe(pem.trim());
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    for (const [value, problem] of [
      [rsa, /AUDIT_SIGNING_KEY must be an Ed25519 private key .*got a rsa key/],
      ['not-a-key-but-a-secret-value', /AUDIT_SIGNING_KEY must be an Ed25519 private key in PEM/],
    ] as const) {
      let error: unknown;
      try {
        loadConfig({ AUDIT_SIGNING_KEY: value });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toMatch(problem);
      expect((error as ConfigError).message).not.toContain(value.includes('\n') ? value.split('\n')[2] : value);
    }
  });

  it('reports every wrong value at once, naming each variable', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', ROLE: 'boss', MONGODB_URL: 'http://x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringContaining('PORT'),
      expect.stringContaining('MONGODB_URL'),
      expect.stringContaining('ROLE'),
      expect.stringContaining('ADMIN_TOKEN'),
      expect.stringContaining('CURSOR_SIGNING_KEY'),
    ]);
  });

  it('notification settings: SMTP_URL (never echoed, it may hold a password) and the retry schedule', () => {
    expect(loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', NOTIFY_RETRY_SCHEDULE_MS: '100,2000' })).toMatchObject({
      smtpUrl: 'smtps://u:p@mail.example.com:465',
      notifyRetryScheduleMs: [100, 2000],
    });
    expect(loadConfig({}).notifyRetryScheduleMs).toBeNull();
    expect(() => loadConfig({ NOTIFY_RETRY_SCHEDULE_MS: '5s,1m' })).toThrow(/NOTIFY_RETRY_SCHEDULE_MS/);
    let message = '';
    try {
      loadConfig({ SMTP_URL: 'http://user:hunter2@mail.example.com' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('SMTP_URL must be smtp or smtps');
    expect(message).not.toContain('hunter2');
  });

  it('keeps raw checks 90 days unless CHECK_RETENTION_DAYS says otherwise, from 1 to 3650', () => {
    expect(loadConfig({}).checkRetentionDays).toBe(90);
    expect(loadConfig({ CHECK_RETENTION_DAYS: '30' }).checkRetentionDays).toBe(30);
    expect(() => loadConfig({ CHECK_RETENTION_DAYS: '0' })).toThrow(/CHECK_RETENTION_DAYS must be an integer from 1 to 3650/);
    expect(() => loadConfig({ CHECK_RETENTION_DAYS: '3651' })).toThrow(/CHECK_RETENTION_DAYS/);
    expect(() => loadConfig({ CHECK_RETENTION_DAYS: 'ninety' })).toThrow(/CHECK_RETENTION_DAYS/);
  });

  it('SQLITE_SYNCHRONOUS is NORMAL or FULL; any other value stops the start instead of meaning NORMAL', () => {
    expect(() => loadConfig({ SQLITE_SYNCHRONOUS: 'FULL' })).not.toThrow();
    expect(() => loadConfig({ SQLITE_SYNCHRONOUS: 'NORMAL' })).not.toThrow();
    for (const bad of ['full', 'EXTRA', 'yes', '2']) {
      expect(() => loadConfig({ SQLITE_SYNCHRONOUS: bad })).toThrow(/SQLITE_SYNCHRONOUS must be one of NORMAL, FULL/);
    }
  });
});
