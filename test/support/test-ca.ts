/**
 * A certificate authority made with `openssl` at test time, and server certificates it signs for
 * 127.0.0.1 with a chosen validity. A child process trusts it through NODE_EXTRA_CA_CERTS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServerCertificate {
  key: string;
  cert: string;
}

export interface TestCa {
  /** Path of the CA certificate (PEM), for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** A certificate for 127.0.0.1 and localhost valid from now for `days` days. */
  issue(days: number): ServerCertificate;
  remove(): void;
}

/** Whether `openssl` can run here (the tests that need it skip, saying why, when it cannot). */
export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function createTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'monitor-test-ca-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '30', '-subj', '/CN=Monitor Test CA');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n');
  let serial = 0;
  return {
    caFile: join(dir, 'ca.crt'),
    issue(days) {
      const name = `server-${++serial}`;
      openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=127.0.0.1');
      openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', String(serial + 1000), '-days', String(days), '-extfile', 'server.ext', '-out', `${name}.crt`);
      return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.crt`), 'utf8') };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
