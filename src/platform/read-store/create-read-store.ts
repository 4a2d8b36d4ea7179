import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReadStore } from './read-store.port.js';
import { MongoReadStore } from './mongodb/mongo-read-store.js';
import { SqliteReadStore } from './sqlite/sqlite-read-store.js';

/** MongoDB when `mongodbUrl` is set, otherwise SQLite at `${dataDir}/views.sqlite`. */
export async function createReadStore(options: { dataDir: string; mongodbUrl: string | null }): Promise<ReadStore> {
  if (options.mongodbUrl) return MongoReadStore.connect(options.mongodbUrl);
  await mkdir(options.dataDir, { recursive: true });
  return new SqliteReadStore(join(options.dataDir, 'views.sqlite'));
}
