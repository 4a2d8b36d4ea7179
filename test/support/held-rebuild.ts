/**
 * An upgrade that rebuilds one view on start, held: the named projection one version up (so the
 * test app's start rebuilds it, as after an upgrade) with every handler held on its first event
 * until `release`, so "while it rebuilds" is a state a test can be in, not a race. Pass
 * `projections` to startTestApp's `projections` seam; `rebuilding` settles once the rebuild
 * reached its first event.
 */
import type { Projection, ProjectionHandler } from '../../src/platform/projections/projection.js';

export interface LogLine {
  level: number;
  msg: string;
  projection?: string;
  views?: Array<{ name: string; state: string }>;
}

/** pino's level of an error line. */
export const ERROR = 50;

export function viewUpgradedAndHeld(name: string): { projections: (list: Projection[]) => Projection[]; release: () => void; rebuilding: Promise<void> } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const rebuilding = new Promise<void>((resolve) => (entered = resolve));
  const hold = (apply: ProjectionHandler): ProjectionHandler => async (event, views) => {
    entered();
    await gate;
    return apply(event, views);
  };
  const projections = (list: Projection[]) =>
    list.map((projection) => {
      if (projection.name !== name) return projection;
      const handlers = Object.fromEntries(Object.entries(projection.handlers).map(([type, apply]) => [type, hold(apply)]));
      return { ...projection, version: projection.version + 1, handlers };
    });
  return { projections, release, rebuilding };
}
