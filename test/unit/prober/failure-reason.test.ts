import { transportFailureReason } from '../../../src/probing/domain/failure-reason.js';

const target = { host: 'api.example.com', port: 443 };
const withCode = (code: string, message = 'raw library message with /path?secret=1') =>
  Object.assign(new Error(message), { code });

describe('transportFailureReason', () => {
  it.each([
    ['ENOTFOUND', /^dns: api\.example\.com could not be resolved \(ENOTFOUND\)$/],
    ['EAI_AGAIN', /^dns: /],
    ['ECONNREFUSED', /^refused: api\.example\.com:443 refused the connection$/],
    ['UND_ERR_CONNECT_TIMEOUT', /^timeout: api\.example\.com:443 did not answer in time/],
    ['UND_ERR_HEADERS_TIMEOUT', /^timeout: /],
    ['ETIMEDOUT', /^timeout: /],
    ['CERT_HAS_EXPIRED', /^tls: handshake with api\.example\.com:443 failed \(CERT_HAS_EXPIRED\)$/],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', /^tls: /],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /^tls: /],
    ['ERR_SSL_WRONG_VERSION_NUMBER', /^tls: /],
    ['ECONNRESET', /^network: connection to api\.example\.com:443 closed unexpectedly/],
    ['UND_ERR_SOCKET', /^network: /],
    ['EHOSTUNREACH', /^network: api\.example\.com:443 is unreachable/],
    ['ESOMETHINGELSE', /^network: request to api\.example\.com:443 failed \(ESOMETHINGELSE\)$/],
  ])('classifies %s', (code, expected) => {
    expect(transportFailureReason(withCode(code), target)).toMatch(expected);
  });

  it('names the blocked range for guard refusals', () => {
    const blocked = Object.assign(new Error('x'), { code: 'E_PROBE_BLOCKED_ADDRESS', range: 'linkLocal' });
    expect(transportFailureReason(blocked, target)).toBe(
      'blocked: api.example.com resolves to a non-public address (linkLocal)',
    );
  });

  it('never copies the library message, which may quote the request', () => {
    expect(transportFailureReason(withCode('ECONNRESET'), target)).not.toMatch(/secret|path/);
    expect(transportFailureReason(new Error('boom /path?secret=1'), target)).toBe('network: request failed');
  });
});
