import type { Position } from '../event-store/event-store.port.js';
import type { CommitPrecondition, Doc, ReadStore, ViewWrite } from '../read-store/read-store.port.js';

/**
 * Where each projection's active generation and per-generation checkpoints live: documents in
 * one read-store collection, so a checkpoint is written in the same atomic commit as the view
 * changes it stands for.
 *
 * Generations let a rebuild fill fresh (shadow) collections while readers keep using the
 * active ones; a swap is one write of the pointer document.
 */
export const REGISTRY_COLLECTION = '_projections';

export interface ProjectionPointer {
  name: string;
  version: number;
  generation: number;
  /** When the generation was swapped in (RFC 3339); null for pointers written before it was kept. */
  swappedAt?: string | null;
}

export interface Checkpoint {
  name: string;
  generation: number;
  /** null: nothing applied yet. */
  position: Position | null;
  /**
   * The projection version whose handlers applied up to `position`, kept by a rebuild's batches
   * (a resumed rebuild continues only its own version's rows); null when not kept.
   */
  version: number | null;
}

const pointerId = (name: string) => `pointer:${name}`;
const checkpointId = (name: string, generation: number) => `checkpoint:${name}:${generation}`;

/** Physical collection of a projection's logical collection in one generation. */
export function physicalCollection(projection: string, generation: number, collection: string): string {
  return `p__${projection}__g${generation}__${collection}`;
}

export function parsePhysicalCollection(name: string): { projection: string; generation: number; collection: string } | null {
  const match = /^p__(.+?)__g(\d+)__(.+)$/.exec(name);
  return match ? { projection: match[1], generation: Number(match[2]), collection: match[3] } : null;
}

function toPointer(doc: Doc): ProjectionPointer | null {
  const id = String(doc.id);
  if (!id.startsWith('pointer:')) return null;
  return { name: id.slice('pointer:'.length), version: Number(doc.version), generation: Number(doc.generation), swappedAt: typeof doc.swapped_at === 'string' ? doc.swapped_at : null };
}

export class ProjectionRegistry {
  constructor(private readonly store: ReadStore) {}

  async init(): Promise<void> {
    await this.store.ensureCollection({ name: REGISTRY_COLLECTION, indexes: [] });
  }

  async pointer(name: string): Promise<ProjectionPointer | null> {
    const doc = await this.store.get(REGISTRY_COLLECTION, pointerId(name));
    return doc ? toPointer(doc) : null;
  }

  /** The pointers of several projections in one read; a projection without one is left out. */
  async pointers(names: string[]): Promise<Map<string, ProjectionPointer>> {
    const found = new Map<string, ProjectionPointer>();
    if (names.length === 0) return found;
    for (const doc of await this.store.getMany(REGISTRY_COLLECTION, names.map(pointerId))) {
      const pointer = toPointer(doc);
      if (pointer) found.set(pointer.name, pointer);
    }
    return found;
  }

  async checkpoint(name: string, generation: number): Promise<Checkpoint> {
    const doc = await this.store.get(REGISTRY_COLLECTION, checkpointId(name, generation));
    const version = typeof doc?.version === 'number' ? doc.version : null;
    return { name, generation, position: doc && doc.position !== null ? Number(doc.position) : null, version };
  }

  /** `version`: the projection version that applied up to `position` (see `Checkpoint.version`). */
  checkpointWrite(name: string, generation: number, position: Position, version?: number): ViewWrite {
    const doc: Doc = { id: checkpointId(name, generation), name, generation, position, updated_at: new Date().toISOString() };
    if (version !== undefined) doc.version = version;
    return { op: 'put', collection: REGISTRY_COLLECTION, doc };
  }

  /** The checkpoint is still where this writer left it: nobody else applied the generation meanwhile. */
  checkpointUnchanged(name: string, generation: number, position: Position | null): CommitPrecondition {
    return { collection: REGISTRY_COLLECTION, id: checkpointId(name, generation), field: 'position', value: position };
  }

  pointerWrite(pointer: ProjectionPointer): ViewWrite {
    const doc: Doc = { id: pointerId(pointer.name), name: pointer.name, version: pointer.version, generation: pointer.generation, swapped_at: new Date().toISOString() };
    return { op: 'put', collection: REGISTRY_COLLECTION, doc };
  }

  checkpointDelete(name: string, generation: number): ViewWrite {
    return { op: 'delete', collection: REGISTRY_COLLECTION, id: checkpointId(name, generation) };
  }

  pointerDelete(name: string): ViewWrite {
    return { op: 'delete', collection: REGISTRY_COLLECTION, id: pointerId(name) };
  }
}
