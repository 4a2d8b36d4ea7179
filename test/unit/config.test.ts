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
});
