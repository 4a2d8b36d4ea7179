import type {
  AppendOptions,
  AppendResult,
  EventMetadata,
  EventStore,
  EventSubscription,
  EveryNewEventMember,
  ExpectedRevision,
  NewEvent,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
} from './event-store.port.js';
import { DelegatingEventStore } from './delegating-event-store.js';

/** Lifts the data of one event type from schema version n to n + 1. */
export type Upcaster = (data: unknown, event: RecordedEvent) => unknown;

/**
 * A compact stored form of one event type at one schema version: appends store `compact(data)`,
 * reads hand out `expand(data)`, so the code keeps working with the full shape while the log
 * holds no nulls or defaults. Both are plain JSON; the stored form stays readable.
 */
export interface StoredShape {
  version: number;
  /** `streamId`: the stream the event is appended to (what `expand` gets as `event.streamId`). */
  compact(data: unknown, metadata: Partial<EventMetadata> | undefined, streamId?: string): unknown;
  expand(data: unknown, event: RecordedEvent): unknown;
  /** Appended often enough that adapters should store it packed (`NewEvent.packed`). */
  packed?: boolean;
  /** Keys whose values seldom change within a stream (`NewEvent.streamConstants`); with `packed`. */
  streamConstants?: readonly string[];
}

export class UpcasterRegistry {
  private readonly byType = new Map<string, Map<number, Upcaster>>();
  private readonly shapes = new Map<string, StoredShape>();

  /** The type's newest version is stored compact; it must be the latest version of the type. */
  registerStoredShape(type: string, shape: StoredShape): this {
    if (this.latestVersion(type) !== shape.version) throw new Error(`Stored shape of ${type} v${shape.version}: the latest version is ${this.latestVersion(type)}`);
    this.shapes.set(type, shape);
    return this;
  }

  /** The event as it should be stored in `streamId`: compacted when its type has a stored shape at that version. */
  toStored(event: NewEvent, streamId?: string): NewEvent {
    const version = event.schemaVersion ?? this.latestVersion(event.type);
    const shape = this.shapes.get(event.type);
    const compact = shape !== undefined && shape.version === version;
    // A literal of one shape: a spread of the caller's event with members added after it cost
    // about 3 us an append, most of it adding `packed` and `streamConstants` (a CPU profile of
    // a probed check's append, docs/benchmarks.md).
    return {
      type: event.type,
      schemaVersion: version,
      data: compact ? shape.compact(event.data, event.metadata, streamId) : event.data,
      metadata: event.metadata,
      packed: compact && shape.packed ? true : event.packed,
      streamConstants: compact && shape.streamConstants ? shape.streamConstants : event.streamConstants,
      chainHashed: event.chainHashed,
    } satisfies EveryNewEventMember;
  }

  /** `fn` turns data of `fromVersion` into data of `fromVersion + 1`. */
  register(type: string, fromVersion: number, fn: Upcaster): this {
    if (!Number.isInteger(fromVersion) || fromVersion < 1) {
      throw new Error(`Upcaster for ${type}: fromVersion must be an integer >= 1, got ${fromVersion}`);
    }
    const steps = this.byType.get(type) ?? new Map<number, Upcaster>();
    if (steps.has(fromVersion)) throw new Error(`Upcaster for ${type} v${fromVersion} is already registered`);
    steps.set(fromVersion, fn);
    this.byType.set(type, steps);
    this.latest.set(type, Math.max(this.latest.get(type) ?? 1, fromVersion + 1));
    return this;
  }

  /** The newest version of each type with a registered step (every append asks). */
  private readonly latest = new Map<string, number>();

  /** The newest schema version known for a type: 1 plus the highest registered step, else 1. */
  latestVersion(type: string): number {
    return this.latest.get(type) ?? 1;
  }

  /** A copy of the event lifted step by step; the stored event itself is never changed. */
  upcast<T = unknown>(event: RecordedEvent): RecordedEvent<T> {
    const steps = this.byType.get(event.type);
    if (!steps) return event as RecordedEvent<T>;
    // An event a newer version of the service wrote (a rolling upgrade, or a rollback after one):
    // its stored form may leave out what this version expects (CheckRecorded v5 leaves out a
    // check's success), so it is refused, loudly, rather than read as something else.
    const latest = this.latestVersion(event.type);
    if (event.schemaVersion > latest) throw new NewerSchemaVersionError(event, latest);
    let current = event;
    for (let step = steps.get(current.schemaVersion); step; step = steps.get(current.schemaVersion)) {
      current = { ...current, data: step(current.data, current), schemaVersion: current.schemaVersion + 1 };
    }
    const shape = this.shapes.get(current.type);
    if (shape && shape.version === current.schemaVersion) current = { ...current, data: shape.expand(current.data, current) };
    return current as RecordedEvent<T>;
  }
}

/** An event of a schema version newer than this process knows: upgrade the process (docs/operations.md, "Upgrades"). */
export class NewerSchemaVersionError extends Error {
  constructor(event: RecordedEvent, known: number) {
    super(`${event.type} v${event.schemaVersion} at ${event.streamId}@${event.revision} was written by a newer version of the service (this one reads up to v${known}): upgrade this process`);
    this.name = 'NewerSchemaVersionError';
  }
}

/**
 * Decorates any adapter so that every read and subscription yields the latest schema version.
 * Appends without an explicit schemaVersion are stamped with the latest version of their type,
 * because code that knows the upcasters writes the current shape.
 */
export function withUpcasting(store: EventStore, registry: UpcasterRegistry): EventStore {
  return new UpcastingEventStore(store, registry);
}

class UpcastingEventStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly registry: UpcasterRegistry,
  ) {
    super(inner);
  }

  override append(streamId: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    return this.inner.append(streamId, events.map((e) => this.registry.toStored(e, streamId)), options);
  }

  // Not async functions, and nothing mapped when nothing was read: most reads are a cached
  // fold asking what follows its revision (three a probed check), and they read nothing.
  override readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    try {
      return this.inner.readStream(streamId, options).then(this.upcastAll);
    } catch (error) {
      return Promise.reject(error); // refused as an async function would refuse
    }
  }

  override readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    try {
      return this.inner.readAll(options).then(this.upcastAll);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private readonly upcastAll = (events: RecordedEvent[]): RecordedEvent[] =>
    events.length === 0 ? events : events.map((event) => this.registry.upcast(event));

  override subscribeToAll(options: { after?: Position | null }): EventSubscription {
    const inner = this.inner.subscribeToAll(options);
    const lift = (event: RecordedEvent) => this.liftShared(event);
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) yield lift(event);
      },
    };
  }

  /**
   * Subscriptions of one process share the adapter's event objects (the SQLite store keeps the
   * newest stretch parsed once), so each is lifted once for all of them, not once per projection.
   */
  private readonly lifted = new WeakMap<RecordedEvent, RecordedEvent>();

  private liftShared(event: RecordedEvent): RecordedEvent {
    let lifted = this.lifted.get(event);
    if (!lifted) {
      lifted = this.registry.upcast(event);
      this.lifted.set(event, lifted);
    }
    return lifted;
  }
}
