/**
 * The one way a process runs a job on a period (check retention every hour, the audit chain
 * verification every day): the first run after `firstDelayMs`, each next one `everyMs` after the
 * previous ended, never two at once; the timer does not keep the process alive, and `stop`
 * waits for a run in progress (which sees `stopping()` turn true and may end early).
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly options: { firstDelayMs: number; everyMs: number },
  ) {}

  start(): void {
    this.schedule(this.options.firstDelayMs);
  }

  /** For the job: true once the process is shutting down. */
  readonly stopping = (): boolean => this.stopped;

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.run().finally(() => {
        this.running = null;
        if (!this.stopped) this.schedule(this.options.everyMs);
      });
    }, delayMs);
    this.timer.unref();
  }
}
