import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoordinationStore } from './coordination.port.js';
import { MongoCoordinationStore } from './mongodb/mongo-coordination-store.js';
import { SqliteCoordinationStore } from './sqlite/sqlite-coordination-store.js';

/** MongoDB when `mongodbUrl` is set, otherwise SQLite at `${dataDir}/coordination.sqlite`. */
export async function createCoordinationStore(options: {
  dataDir: string;
  mongodbUrl: string | null;
}): Promise<CoordinationStore> {
  if (options.mongodbUrl) return MongoCoordinationStore.connect(options.mongodbUrl);
  await mkdir(options.dataDir, { recursive: true });
  return new SqliteCoordinationStore(join(options.dataDir, 'coordination.sqlite'));
}
