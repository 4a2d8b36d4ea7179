/**
 * An audit export hides at least what the API hides (src/audit/domain/withheld-values.ts over
 * monitoring's `maskHiddenValues`): every value of an endpoint configuration that
 * `publicConfiguration` (what every answer shows) leaves out is withheld from an export line, and
 * everything it shows stays. Each string member of the configuration carries its own marker
 * token, so a member added later is covered without changing this test.
 */
import { DEFAULT_CONFIGURATION, publicConfiguration } from '../../../src/monitoring/domain/endpoint.js';
import type { EndpointConfiguration } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { ENDPOINT_RECONFIGURED, ENDPOINT_REGISTERED } from '../../../src/monitoring/domain/events.js';
import { withholdHiddenValues } from '../../../src/audit/domain/withheld-values.js';

const tokens = (value: unknown) => new Set(JSON.stringify(value).match(/Zq\w+/g) ?? []);

/** A configuration whose every string (or unset string) member holds a token of its own. */
function markedConfiguration(): EndpointConfiguration {
  const config: Record<string, unknown> = { ...DEFAULT_CONFIGURATION };
  for (const [member, value] of Object.entries(config)) {
    if (value === null || typeof value === 'string') config[member] = `Zq${member}`;
  }
  config.url = 'https://ZqUser:ZqPassword@api.example.test/ZqPath?ZqQueryName=ZqQueryValue#ZqFragment';
  config.headers = { ZqHeaderName: 'ZqHeaderValue', 'X-Other': 'ZqOtherValue' };
  return config as unknown as EndpointConfiguration;
}

describe('withholdHiddenValues', () => {
  const config = markedConfiguration();
  const shownByApi = tokens(publicConfiguration(config));
  const hiddenByApi = [...tokens(config)].filter((token) => !shownByApi.has(token));

  it.each([
    [ENDPOINT_REGISTERED, 'configuration'],
    [ENDPOINT_RECONFIGURED, 'changes'],
  ])('%s: withholds every value the API hides, and keeps what it shows', (type, member) => {
    expect(hiddenByApi).toEqual(expect.arrayContaining(['ZqPassword', 'ZqQueryValue', 'ZqHeaderValue', 'Zqrequest_payload', 'Zqexpected_body']));
    const shown = withholdHiddenValues(type, { endpoint_id: 1, team_id: 1, [member]: config });
    expect(shown).not.toBeNull();
    const exported = tokens(shown!.data);
    expect(hiddenByApi.filter((token) => exported.has(token))).toEqual([]);
    expect([...shownByApi].filter((token) => !exported.has(token))).toEqual([]);
  });

  it('leaves an event with no hidden value as stored', () => {
    const plain = { ...DEFAULT_CONFIGURATION, url: 'https://api.example.test/health', headers: {} };
    expect(withholdHiddenValues(ENDPOINT_REGISTERED, { configuration: plain })).toBeNull();
    expect(withholdHiddenValues(ENDPOINT_RECONFIGURED, { changes: { name: 'Renamed' } })).toBeNull();
    expect(withholdHiddenValues('EndpointEnabled', { endpoint_id: 1, team_id: 1, at: '2026-11-01T00:00:00.000Z' })).toBeNull();
  });
});
