/**
 * A benchmark section: figures measured in one run, each reported with the baseline measured
 * in that same run, so the ratio is what matters, not the machine.
 */
export interface BenchFigure {
  name: string;
  value: number;
  unit: string;
  /** Baseline figure of the same kind measured in the same run. */
  baseline?: { name: string; value: number };
  /** value / baseline.value (or the inverse for "lower is better"), computed by the harness. */
  ratio?: number;
  /** The aim from the issue, as text, e.g. ">= 0.5". */
  aim?: string;
}

export interface BenchSection {
  title: string;
  figures: BenchFigure[];
  notes?: string[];
}

export interface BenchModule {
  /** Shown as the section key; `npm run bench -- <name>` runs only this one. */
  name: string;
  run(options: { quick: boolean; workDir: string; log: (line: string) => void }): Promise<BenchSection>;
}

/**
 * The Node flags the service starts with wherever the project starts it (`npm start`, the image:
 * docs/operations.md, "Node's young generation"). A bench that runs the service in a child
 * process passes them too, so it measures the service as it is run (`spawn` does not pass on the
 * bench process's own flags).
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

/** The middle value (nearest rank: the lower of two middles); NaN for none. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)];
}

export function ratio(value: number, baseline: number): number {
  return baseline === 0 ? 0 : Math.round((value / baseline) * 1000) / 1000;
}
