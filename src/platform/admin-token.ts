import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * ADMIN_TOKEN when configured; otherwise one generated on first start and kept under DATA_DIR
 * (mode 0600). `generated` tells the caller to print it, once.
 */
export function resolveAdminToken(configured: string | null, dataDir: string): { token: string; generated: boolean; file: string } {
  const file = join(dataDir, 'admin-token');
  if (configured) return { token: configured, generated: false, file };
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), generated: false, file };
  mkdirSync(dataDir, { recursive: true });
  const token = `adm_${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, generated: true, file };
}
