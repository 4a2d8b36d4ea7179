/**
 * Coordination store on MongoDB. Every decision is one conditional write on a unique `_id`, so
 * concurrent processes agree; an upsert that loses an insert race surfaces as a duplicate-key
 * error and is answered from the winner's document. TTL indexes purge old rate windows and
 * idempotency records.
 *
 * Leases follow the same rule as the SQLite store (lease-observation.ts): a holder renews by
 * bumping `renewals`; another process takes the lease over with a compare-and-set on the record
 * it watched (owner, epoch, renewals) once it has not changed for its period on the taker's own
 * monotonic clock. The server's clock (`$$NOW`) would also be a single clock, but one rule for
 * both stores keeps one contract; `expiresAt` is the holder's own estimate, for operators and
 * earlier versions, never read for a decision. A freed lease keeps its document (owner '') so
 * that its epoch only grows.
 */
import type { Collection, Db, MongoClient } from 'mongodb';
import { mongoClientFor } from '../../read-store/mongodb/mongo-connection.js';
import { guardMongo, isDuplicateKeyError } from '../../read-store/mongodb/mongo-errors.js';
import type {
  CoordinationStore,
  IdempotencyClaim,
  LeaseGrant,
  LeaseOptions,
  LeaseRecord,
  QuotaGrant,
  RateWindow,
  StoredResponse,
} from '../coordination.port.js';
import { LeaseObservations, monotonicNow } from '../lease-observation.js';
import { takeProcessSlot, type ProcessSlot } from '../process-slots.js';

export interface MongoCoordinationStoreOptions extends LeaseOptions {
  dbName?: string;
  /** Prefix of the three collection names (`leases`, `rate_windows`, `idempotency`). */
  collectionPrefix?: string;
  serverSelectionTimeoutMS?: number;
  /**
   * A directory on this process's own disk (`<DATA_DIR>/process-slots`) where it takes a slot
   * (process-slots.ts): a process restarted there knows its predecessor's unfinished claims are
   * dead and takes them over at once. Without it such claims wait out `staleAfterMs`.
   */
  slotDir?: string;
}

interface LeaseDoc {
  _id: string;
  /** '' when free. */
  owner: string;
  /** Absent on documents written by earlier versions (read as 0). */
  epoch?: number;
  renewals?: number;
  ttlMs?: number;
  renewedAt?: number;
  expiresAt: number;
}

interface RateDoc {
  _id: string;
  count: number;
  resetAt: number;
  purgeAt: Date;
}

interface IdempotencyDoc {
  _id: string;
  fingerprint: string;
  state: 'in_progress' | 'completed';
  /** The claiming process's instance id. */
  owner?: string;
  /** The claiming process's slot (process-slots.ts): the claim is dead once the slot names another instance. */
  slot?: string;
  claimedAt: number;
  expiresAt: number;
  /** JSON text, so that any body (keys with dots or `$`) round-trips exactly. */
  response: string | null;
  purgeAt: Date;
}

/** Which instance holds each process slot now (process-slots.ts). */
interface SlotDoc {
  _id: string;
  owner: string;
  since: Date;
}

/** How many times a claim is re-decided when another process changed the record meanwhile. */
const CLAIM_ATTEMPTS = 10;

/** TTL purge time for a logical expiry `at`, measured on the caller's clock (`now` may be injected). */
function purgeDate(at: number, now: number): Date {
  return new Date(Date.now() + Math.max(0, at - now) + 60_000);
}

export class MongoCoordinationStore implements CoordinationStore {
  private readonly observations: LeaseObservations;
  /** The instance this store's slot was registered for (the first owner it claims for), once done. */
  private registration: Promise<string | null> | null = null;

  private constructor(
    private readonly options: MongoCoordinationStoreOptions,
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly leases: Collection<LeaseDoc>,
    private readonly rates: Collection<RateDoc>,
    private readonly claims: Collection<IdempotencyDoc>,
    private readonly slots: Collection<SlotDoc>,
    private readonly slot: ProcessSlot | null,
  ) {
    this.observations = new LeaseObservations(options.clock ?? monotonicNow);
  }

  static async connect(url: string, options: MongoCoordinationStoreOptions = {}): Promise<MongoCoordinationStore> {
    const { client, dbName } = mongoClientFor(url, { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000 }, options.dbName);
    await guardMongo('connect', () => client.connect());
    const db = client.db(dbName);
    const prefix = options.collectionPrefix ?? 'coord_';
    const store = new MongoCoordinationStore(
      options,
      client,
      db,
      db.collection<LeaseDoc>(`${prefix}leases`),
      db.collection<RateDoc>(`${prefix}rate_windows`),
      db.collection<IdempotencyDoc>(`${prefix}idempotency`),
      db.collection<SlotDoc>(`${prefix}process_slots`),
      options.slotDir ? takeProcessSlot(options.slotDir) : null,
    );
    await guardMongo('createIndex', async () => {
      await store.rates.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 });
      await store.claims.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 });
    });
    return store;
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<LeaseGrant | null> {
    const validUntil = this.observations.now() + ttlMs; // counted from before the write
    const grant = await guardMongo('acquireLease', () => this.acquireOne(name, owner, ttlMs, validUntil));
    if (grant?.acquired) this.options.onLeaseAcquired?.(grant);
    return grant;
  }

  private async acquireOne(name: string, owner: string, ttlMs: number, validUntil: number): Promise<LeaseGrant | null> {
    const wall = Date.now();
    const held = { ttlMs, renewedAt: wall, expiresAt: wall + ttlMs };
    const renewed = await this.leases.findOneAndUpdate({ _id: name, owner }, { $inc: { renewals: 1 }, $set: held }, { returnDocument: 'after' });
    if (renewed) {
      this.observations.forget(name);
      return { name, owner, epoch: renewed.epoch ?? 0, validUntil, acquired: false };
    }
    try {
      // Free (owner '') or absent: taken with the next epoch ($inc on an absent field gives 1).
      const taken = await this.leases.findOneAndUpdate(
        { _id: name, owner: '' },
        { $inc: { epoch: 1 }, $set: { owner, renewals: 0, ...held } },
        { upsert: true, returnDocument: 'after' },
      );
      this.observations.forget(name);
      return { name, owner, epoch: taken!.epoch!, validUntil, acquired: true };
    } catch (error) {
      // Held by someone: the upsert's insert collided with the existing document.
      if (!isDuplicateKeyError(error)) throw error;
    }
    const doc = await this.leases.findOne({ _id: name });
    if (!doc || doc.owner === owner || doc.owner === '') return null; // changed meanwhile: the next renewal looks again
    const seen = { owner: doc.owner, epoch: doc.epoch ?? 0, renewals: doc.renewals ?? 0, ttlMs: doc.ttlMs ?? ttlMs };
    if (!this.observations.stale(name, seen)) return null;
    const filter = { _id: name, owner: doc.owner, epoch: doc.epoch ?? { $exists: false }, renewals: doc.renewals ?? { $exists: false } } as never;
    const taken = await this.leases.findOneAndUpdate(filter, { $inc: { epoch: 1 }, $set: { owner, renewals: 0, ...held } }, { returnDocument: 'after' });
    this.observations.forget(name);
    return taken ? { name, owner, epoch: taken.epoch!, validUntil, acquired: true } : null;
  }

  /** Each lease is its own atomic document update (MongoDB has no per-commit WAL cost to save). */
  async acquireLeases(names: string[], owner: string, ttlMs: number): Promise<LeaseGrant[]> {
    const grants = await Promise.all(names.map((name) => this.acquireLease(name, owner, ttlMs)));
    return grants.filter((grant): grant is LeaseGrant => grant !== null);
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await guardMongo('releaseLease', () => this.leases.updateOne({ _id: name, owner }, { $set: { owner: '', expiresAt: 0 } }));
  }

  async listLeases(): Promise<LeaseRecord[]> {
    return guardMongo('listLeases', async () => {
      const docs = await this.leases.find({ owner: { $nin: ['', null] } } as never).sort({ _id: 1 }).toArray();
      return docs.map((doc) => ({
        name: doc._id,
        owner: doc.owner,
        epoch: doc.epoch ?? 0,
        renewals: doc.renewals ?? 0,
        ttlMs: doc.ttlMs ?? 0,
        renewedAt: doc.renewedAt ?? 0,
      }));
    });
  }

  async removeLeases(prefix: string, renewedBefore: number): Promise<number> {
    const named = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
    return guardMongo('removeLeases', async () => {
      const removed = await this.leases.deleteMany({ _id: named, $or: [{ owner: { $in: ['', null] } }, { renewedAt: { $lt: renewedBefore } }] } as never);
      return removed.deletedCount;
    });
  }

  async hit(key: string, windowMs: number, now = Date.now()): Promise<RateWindow> {
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const resetAt = windowStart + windowMs;
    const id = `${key}@${windowStart}`; // windowStart is digits only, so ids cannot collide
    return guardMongo('hit', async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          const doc = await this.rates.findOneAndUpdate(
            { _id: id },
            { $inc: { count: 1 }, $setOnInsert: { resetAt, purgeAt: purgeDate(resetAt, now) } },
            { upsert: true, returnDocument: 'after' },
          );
          return { count: doc!.count, resetAt: doc!.resetAt };
        } catch (error) {
          // Two first hits raced to insert the window; the loser now finds it and increments.
          if (!isDuplicateKeyError(error) || attempt >= 3) throw error;
        }
      }
    });
  }

  async takeQuota(key: string, windowMs: number, want: number, limit: number, now = Date.now()): Promise<QuotaGrant> {
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const resetAt = windowStart + windowMs;
    const id = `${key}@${windowStart}`;
    const used = { $ifNull: ['$count', 0] };
    return guardMongo('takeQuota', async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          // One pipeline update: `before` keeps the count as it was, so the grant is their difference.
          const doc = await this.rates.findOneAndUpdate(
            { _id: id },
            [
              {
                $set: {
                  before: used,
                  count: { $max: [used, { $min: [limit, { $add: [used, want] }] }] },
                  resetAt,
                  purgeAt: { $ifNull: ['$purgeAt', purgeDate(resetAt, now)] },
                },
              },
            ],
            { upsert: true, returnDocument: 'after' },
          );
          const after = doc as (RateDoc & { before: number }) | null;
          return { granted: after!.count - after!.before, count: after!.count, resetAt };
        } catch (error) {
          if (!isDuplicateKeyError(error) || attempt >= 3) throw error;
        }
      }
    });
  }

  async claimIdempotency(
    key: string,
    fingerprint: string,
    options: { retentionMs: number; staleAfterMs: number; owner?: string; now?: number },
  ): Promise<IdempotencyClaim> {
    const now = options.now ?? Date.now();
    const owner = options.owner ?? '';
    // A claim names this process's slot only when it is made for the instance the slot was registered for.
    const registered = owner ? await guardMongo('registerSlot', () => this.register(owner)) : null;
    const slot = registered === owner && this.slot ? { slot: this.slot.id } : {};
    const fresh = (): IdempotencyDoc => ({
      _id: key,
      fingerprint,
      state: 'in_progress',
      owner,
      ...slot,
      claimedAt: now,
      expiresAt: now + options.retentionMs,
      response: null,
      purgeAt: purgeDate(now + options.retentionMs, now),
    });
    return guardMongo('claimIdempotency', async () => {
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const decided = await this.decideClaim(key, fingerprint, now, options.staleAfterMs, owner, slot, fresh);
        if (decided) return decided;
      }
      throw new Error(`Idempotency key ${key}: could not settle a claim under contention`);
    });
  }

  /** One attempt: null when the record changed under us and the caller should look again. */
  private async decideClaim(
    key: string,
    fingerprint: string,
    now: number,
    staleAfterMs: number,
    owner: string,
    slot: { slot?: string },
    fresh: () => IdempotencyDoc,
  ): Promise<IdempotencyClaim | null> {
    const existing = await this.claims.findOne({ _id: key });
    if (!existing) {
      try {
        await this.claims.insertOne(fresh());
        return { outcome: 'claimed' };
      } catch (error) {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      }
    }
    if (existing.expiresAt <= now) {
      const replaced = await this.claims.replaceOne({ _id: key, expiresAt: existing.expiresAt }, fresh());
      return replaced.modifiedCount === 1 ? { outcome: 'claimed' } : null;
    }
    if (existing.fingerprint !== fingerprint) return { outcome: 'fingerprint_mismatch' };
    if (existing.state === 'completed') {
      return { outcome: 'completed', response: JSON.parse(existing.response!) as StoredResponse };
    }
    if (existing.claimedAt + staleAfterMs > now && !(await this.ownerGone(existing, owner))) return { outcome: 'in_progress' };
    const taken = await this.claims.updateOne(
      { _id: key, state: 'in_progress', claimedAt: existing.claimedAt, owner: existing.owner ?? { $exists: false } } as never,
      { $set: { claimedAt: now, owner, ...slot } },
    );
    return taken.modifiedCount === 1 ? { outcome: 'claimed' } : null;
  }

  /**
   * The claim's process is gone: its slot now names another instance, which could take the slot
   * only once the claim's process had let it go (process-slots.ts). A claim without a slot (no
   * slot directory, an earlier version) proves nothing.
   */
  private async ownerGone(claim: IdempotencyDoc, owner: string): Promise<boolean> {
    if (!claim.slot || !claim.owner || claim.owner === owner) return false;
    const holder = await this.slots.findOne({ _id: claim.slot });
    return holder !== null && holder.owner !== claim.owner;
  }

  /**
   * Records that this process (`owner`, the first instance id it claims for) holds its slot, and
   * frees the unfinished claims its predecessor in the slot left: that process is gone.
   * Resolves to the registered owner (null without a slot).
   */
  private register(owner: string): Promise<string | null> {
    const slot = this.slot;
    if (!slot) return Promise.resolve(null);
    this.registration ??= (async () => {
      await this.slots.updateOne({ _id: slot.id }, { $set: { owner, since: new Date() } }, { upsert: true });
      await this.claims.deleteMany({ slot: slot.id, state: 'in_progress', owner: { $ne: owner } });
      return owner;
    })().catch((error) => {
      this.registration = null; // looked at again by the next claim
      throw error;
    });
    return this.registration;
  }

  async completeIdempotency(key: string, response: StoredResponse): Promise<void> {
    await guardMongo('completeIdempotency', () =>
      this.claims.updateOne(
        { _id: key, state: 'in_progress' },
        { $set: { state: 'completed', response: JSON.stringify(response) } },
      ),
    );
  }

  async releaseIdempotency(key: string): Promise<void> {
    await guardMongo('releaseIdempotency', () => this.claims.deleteOne({ _id: key, state: 'in_progress' }));
  }

  async ping(): Promise<void> {
    await guardMongo('ping', () => this.db.command({ ping: 1 }));
  }

  async close(): Promise<void> {
    await this.client.close();
    this.slot?.release();
  }
}
