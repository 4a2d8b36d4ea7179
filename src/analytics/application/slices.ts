/**
 * Keeps analytics from holding the event loop. The read store answers synchronously (SQLite),
 * so a query made of thousands of small reads never gives way on its own: every await on a
 * settled promise runs on as a microtask, and probes, status pages and every other request wait
 * for the whole query. Work goes through here in small groups instead; once a slice has run for
 * `sliceMs`, every analytics chain that reaches `pause` waits for the same next turn of the event
 * loop (setImmediate, after the poll for I/O), where one new slice starts for all of them. So the
 * loop is held for about one slice at a time by analytics as a whole, however many requests run.
 */
export class Slices {
  private sliceStarted = performance.now();
  private nextTurn: Promise<void> | null = null;

  constructor(
    private readonly sliceMs = 8,
    /** Reads started together: enough to overlap round trips on a networked store, few enough to stay inside a slice on SQLite. */
    private readonly group = 32,
  ) {}

  /** Waits for a turn of the event loop once the current slice has run its time. */
  async pause(): Promise<void> {
    while (this.due()) await this.turn();
  }

  /**
   * Starts `read` once the current slice has time left, checking and starting in one go. After
   * `await pause()` the read starts a microtask later, when every other chain that passed the
   * same check may have run its own read: on a synchronous store, 32 reads in one stretch. A
   * read started here runs its synchronous part (all of it, on SQLite) before any other chain
   * looks at the clock again.
   */
  async run<T>(read: () => Promise<T>): Promise<T> {
    while (this.due()) await this.turn();
    return read();
  }

  private due(): boolean {
    return performance.now() - this.sliceStarted >= this.sliceMs;
  }

  private turn(): Promise<void> {
    this.nextTurn ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.nextTurn = null;
        this.sliceStarted = performance.now();
        resolve();
      }),
    );
    return this.nextTurn;
  }

  /** `fn` over the items in groups, pausing between groups; results in the items' order. */
  async map<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
    const results: R[] = [];
    for (let i = 0; i < items.length; i += this.group) {
      await this.pause();
      results.push(...(await Promise.all(items.slice(i, i + this.group).map(fn))));
    }
    return results;
  }
}
