import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoordinationStore, LeaseOptions } from './coordination.port.js';
import { MongoCoordinationStore } from './mongodb/mongo-coordination-store.js';
import { SqliteCoordinationStore } from './sqlite/sqlite-coordination-store.js';

/**
 * MongoDB when `mongodbUrl` is set (this process's slot in `${dataDir}/process-slots`), otherwise
 * SQLite at `${dataDir}/coordination.sqlite`.
 */
export async function createCoordinationStore(
  options: {
    dataDir: string;
    mongodbUrl: string | null;
  } & LeaseOptions,
): Promise<CoordinationStore> {
  const { dataDir, mongodbUrl, ...leaseOptions } = options;
  // The slot directory is on this process's own disk: a restart on the same data dir follows its predecessor.
  if (mongodbUrl) return MongoCoordinationStore.connect(mongodbUrl, { ...leaseOptions, slotDir: join(dataDir, 'process-slots') });
  await mkdir(dataDir, { recursive: true });
  return new SqliteCoordinationStore(join(dataDir, 'coordination.sqlite'), leaseOptions);
}
