import type {
  AppendResult,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  NewEvent,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
} from './event-store.port.js';

/** Lifts the data of one event type from schema version n to n + 1. */
export type Upcaster = (data: unknown, event: RecordedEvent) => unknown;

export class UpcasterRegistry {
  private readonly byType = new Map<string, Map<number, Upcaster>>();

  /** `fn` turns data of `fromVersion` into data of `fromVersion + 1`. */
  register(type: string, fromVersion: number, fn: Upcaster): this {
    if (!Number.isInteger(fromVersion) || fromVersion < 1) {
      throw new Error(`Upcaster for ${type}: fromVersion must be an integer >= 1, got ${fromVersion}`);
    }
    const steps = this.byType.get(type) ?? new Map<number, Upcaster>();
    if (steps.has(fromVersion)) throw new Error(`Upcaster for ${type} v${fromVersion} is already registered`);
    steps.set(fromVersion, fn);
    this.byType.set(type, steps);
    return this;
  }

  /** The newest schema version known for a type: 1 plus the highest registered step, else 1. */
  latestVersion(type: string): number {
    const steps = this.byType.get(type);
    return steps && steps.size > 0 ? Math.max(...steps.keys()) + 1 : 1;
  }

  /** A copy of the event lifted step by step; the stored event itself is never changed. */
  upcast<T = unknown>(event: RecordedEvent): RecordedEvent<T> {
    const steps = this.byType.get(event.type);
    if (!steps) return event as RecordedEvent<T>;
    let current = event;
    for (let step = steps.get(current.schemaVersion); step; step = steps.get(current.schemaVersion)) {
      current = { ...current, data: step(current.data, current), schemaVersion: current.schemaVersion + 1 };
    }
    return current as RecordedEvent<T>;
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

class UpcastingEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly registry: UpcasterRegistry,
  ) {}

  append(streamId: string, events: NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    const stamped = events.map((e) => ({ ...e, schemaVersion: e.schemaVersion ?? this.registry.latestVersion(e.type) }));
    return this.inner.append(streamId, stamped, options);
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return (await this.inner.readStream(streamId, options)).map((e) => this.registry.upcast(e));
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return (await this.inner.readAll(options)).map((e) => this.registry.upcast(e));
  }

  subscribeToAll(options: { after?: Position | null }): EventSubscription {
    const inner = this.inner.subscribeToAll(options);
    const registry = this.registry;
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) yield registry.upcast(event);
      },
    };
  }

  headPosition(): Promise<Position | null> {
    return this.inner.headPosition();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
