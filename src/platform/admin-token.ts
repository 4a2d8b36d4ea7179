import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * ADMIN_TOKEN when configured; otherwise one generated on first start and kept under DATA_DIR
 * (mode 0600). `generated` tells the caller to print it, once. With `mint: false` (operator CLIs)
 * nothing is written and the token returned is a throwaway.
 */
export function resolveAdminToken(configured: string | null, dataDir: string, options: { mint?: boolean } = {}): { token: string; generated: boolean; file: string } {
  const file = join(dataDir, 'admin-token');
  if (configured) return { token: configured, generated: false, file };
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), generated: false, file };
  // An operator CLI never serves the application API: it must not mint the service's token.
  if (options.mint === false) return { token: `unused_${randomBytes(32).toString('base64url')}`, generated: false, file };
  mkdirSync(dataDir, { recursive: true });
  const token = `adm_${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, generated: true, file };
}
