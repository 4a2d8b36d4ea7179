/**
 * The prober and certificates (issue 26 item 4): a certificate the prober does not trust still
 * fails the check with a `tls:` reason and notes no expiry; an http probe notes none either.
 * (A trusted certificate's expiry is shown end to end in test/e2e/certificate-expiry.e2e.test.ts:
 * trust comes from NODE_EXTRA_CA_CERTS, which Node reads at start, so it needs a child process.)
 */
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import type { EndpointConfiguration } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { createHttpProber, type HttpProber } from '../../../src/probing/prober/http-prober.js';
import { createTestCa, opensslAvailable, type TestCa } from '../../support/test-ca.js';
import { startServer, type LocalServer } from './local-server.js';

const endpoint = (url: string): EndpointConfiguration => ({ ...DEFAULT_CONFIGURATION, url, timeout_seconds: 5 });
const describeWithOpenssl = opensslAvailable() ? describe : describe.skip;

describeWithOpenssl('(needs openssl) certificates seen by the prober', () => {
  let ca: TestCa;
  let https: Server;
  let http: LocalServer;
  let prober: HttpProber;

  beforeAll(async () => {
    ca = createTestCa();
    const certificate = ca.issue(5);
    https = createHttpsServer({ key: certificate.key, cert: certificate.cert }, (_request, response) => response.end('ok'));
    await new Promise<void>((done) => https.listen(0, '127.0.0.1', done));
    http = await startServer((_request, response) => response.end('ok'));
    prober = createHttpProber({ blockPrivate: false });
  });
  afterAll(async () => {
    await prober?.close();
    https?.closeAllConnections();
    await new Promise((done) => (https ? https.close(done) : done(undefined)));
    await http?.close();
    ca?.remove();
  });

  it('an untrusted certificate fails the check as before and notes no expiry', async () => {
    const outcome = await prober.probe(endpoint(`https://127.0.0.1:${(https.address() as AddressInfo).port}/`));
    expect(outcome).toMatchObject({ success: false, status_code: 0 });
    expect(outcome.failure_reason).toMatch(/^tls: /);
    expect(outcome.certificate_expires_at).toBeUndefined();
  });

  it('an http probe notes no expiry', async () => {
    const outcome = await prober.probe(endpoint(`${http.origin}/`));
    expect(outcome.success).toBe(true);
    expect(outcome.certificate_expires_at).toBeUndefined();
  });
});
