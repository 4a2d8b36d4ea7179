import type { CoordinationStore } from '../coordination/coordination.port.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms when the window resets. */
  resetAt: number;
}

/** This process's share of one key's current window. */
interface LocalWindow {
  windowStart: number;
  resetAt: number;
  /** Units taken from the shared window and not spent yet. */
  unspent: number;
  /** The shared window's count after this process's last grant. */
  sharedCount: number;
  /** Size of the next grant asked for: starts at 1 and doubles while the key stays busy. */
  nextWant: number;
  /** Set once the shared quota is spent: nothing more can be granted in this window. */
  exhausted: boolean;
  /** A grant under way; concurrent requests wait for it instead of asking again. */
  pending: Promise<void> | null;
}

export const WINDOW_MS = 60_000;
/** At most this share of the limit is held unspent by one process. */
const MAX_GRANT_SHARE = 1 / 100;
const MAX_GRANT = 256;
/** Windows of keys not seen for this long are forgotten. */
const FORGET_AFTER_MS = 2 * WINDOW_MS;

/**
 * Fixed one-minute windows per key, shared by every API process through the coordination store.
 * Instead of one shared write per request, each process takes small grants of the window's quota
 * atomically and spends them locally: the shared count is never passed, so the limit holds across
 * processes. The price is that units one process holds unspent are not available to the others
 * until the window resets (at most 1% of the limit per process), and Remaining counts them as used.
 * Grants start at one unit and double while a key stays busy, so a quiet key is counted exactly.
 */
export class RateLimiter {
  private readonly windows = new Map<string, LocalWindow>();
  private readonly maxGrant: number;
  private lastSweep = 0;

  constructor(
    private readonly store: CoordinationStore,
    private readonly limit: number,
  ) {
    this.maxGrant = Math.max(1, Math.min(MAX_GRANT, Math.floor(limit * MAX_GRANT_SHARE)));
  }

  async take(key: string, now = Date.now()): Promise<RateDecision> {
    for (;;) {
      const window = this.window(key, now);
      if (window.unspent > 0) {
        window.unspent--;
        return this.decision(true, window);
      }
      if (window.exhausted) return this.decision(false, window);
      if (window.pending) {
        await window.pending;
        continue;
      }
      window.pending = this.refill(key, window, now);
      try {
        await window.pending;
      } finally {
        window.pending = null;
      }
    }
  }

  private async refill(key: string, window: LocalWindow, now: number): Promise<void> {
    const grant = await this.store.takeQuota(key, WINDOW_MS, window.nextWant, this.limit, now);
    window.sharedCount = grant.count;
    window.unspent += grant.granted;
    window.exhausted = grant.granted === 0;
    window.nextWant = Math.min(this.maxGrant, window.nextWant * 2);
  }

  private decision(allowed: boolean, window: LocalWindow): RateDecision {
    const used = window.sharedCount - window.unspent;
    return { allowed, limit: this.limit, remaining: Math.max(0, this.limit - used), resetAt: window.resetAt };
  }

  private window(key: string, now: number): LocalWindow {
    const windowStart = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    let window = this.windows.get(key);
    if (!window || window.windowStart !== windowStart) {
      this.sweep(now);
      window = { windowStart, resetAt: windowStart + WINDOW_MS, unspent: 0, sharedCount: 0, nextWant: 1, exhausted: false, pending: null };
      this.windows.set(key, window);
    }
    return window;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) {
      if (window.resetAt + FORGET_AFTER_MS <= now && !window.pending) this.windows.delete(key);
    }
  }
}
