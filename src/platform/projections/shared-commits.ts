import type { CommitOptions, ReadStore, ViewWrite } from '../read-store/read-store.port.js';

interface Pending {
  writes: ViewWrite[];
  options: CommitOptions;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Live batches of several processors that commit in the same turn of the event loop share one
 * read-store transaction (issue 31). One append wakes every projection that takes its type (a
 * probed check: the check list, analytics, alerting, the reactors), and each batch committed
 * its view writes and checkpoint on its own: at tens of checks per second, a transaction per
 * projection per check was most of the service's CPU. The commits gathered here are made as
 * one, with every batch's writes and every fencing precondition, at the next turn of the loop;
 * each caller's promise settles once that transaction has.
 *
 * What each batch promises is kept: its writes and its checkpoint still become visible together
 * (the shared transaction is all or nothing), and a fenced batch is still refused whole. When
 * the shared commit fails (a precondition that fenced one of them, or any other error), each
 * batch is committed again on its own, so one processor's refusal or failure is its alone.
 */
export class SharedCommits {
  private pending: Pending[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private flushingSoon = false;

  constructor(private readonly store: ReadStore) {}

  /**
   * `awaited`: a writer of this process waits for this batch (read-your-writes). The commits
   * pending then are made as soon as the current task's promises have run (a microtask), not at
   * the next turn of the loop: waiting for the turn held the writer's answer behind whatever
   * else the turn ran. Only batches of the same task share that commit; without a waiting
   * writer the sharing per turn is as before.
   */
  commit(writes: ViewWrite[], options: CommitOptions = {}, awaited = false): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ writes, options, resolve, reject });
      if (awaited && !this.flushingSoon) {
        this.flushingSoon = true;
        queueMicrotask(() => void this.flush());
      } else if (this.scheduled === null && !this.flushingSoon) {
        this.scheduled = setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const group = this.pending;
    this.pending = [];
    if (this.scheduled !== null) clearImmediate(this.scheduled);
    this.scheduled = null;
    this.flushingSoon = false;
    if (group.length === 0) return;
    if (group.length > 1) {
      try {
        await this.store.commit(
          group.flatMap((p) => p.writes),
          { expect: group.flatMap((p) => p.options.expect ?? []) },
        );
        for (const p of group) p.resolve();
        return;
      } catch {
        // Each on its own below: the one refused or failing gets its own error.
      }
    }
    for (const p of group) await this.store.commit(p.writes, p.options).then(p.resolve, p.reject);
  }
}
