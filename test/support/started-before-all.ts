/**
 * A stand-in for an object that a describe block's beforeAll creates: property reads forward to
 * the real object once it exists, so tests use it by a plain name instead of a reassigned `let`.
 */
export function forwardTo<T extends object>(current: () => T | null): T {
  return new Proxy({} as T, {
    get(_, key) {
      const target = current();
      if (target === null) throw new Error('Used before the beforeAll that creates it has run');
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Starts `start()` before the tests of the enclosing describe, `stop` after them; see forwardTo. */
export function startedBeforeAll<T extends object>(start: () => Promise<T>, stop: (value: T) => Promise<void>): T {
  let value: T | null = null;
  beforeAll(async () => {
    value = await start();
  });
  afterAll(async () => {
    if (value !== null) await stop(value);
  });
  return forwardTo(() => value);
}
