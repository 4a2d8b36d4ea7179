/**
 * Runs `pass` while another task records `progress()` at each turn of the event loop (a
 * setImmediate that schedules itself again), and returns what that task saw. A pass that never
 * lets the loop turn (synchronous SQLite under every `await`) leaves `seen` empty; one that
 * yields between its steps shows how far it got between two turns. No timers: deterministic.
 */
export async function turnsDuring<T>(pass: () => Promise<T>, progress: () => number): Promise<{ result: T; seen: number[] }> {
  const seen: number[] = [];
  let passing = true;
  const turn = () => {
    if (!passing) return;
    seen.push(progress());
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { result: await pass(), seen };
  } finally {
    passing = false;
  }
}

/** The most steps a pass took between two turns of the loop (its start and end count as turns). */
export function mostStepsBetweenTurns(seen: number[], total: number): number {
  return Math.max(...[...seen, total].map((value, i, all) => value - (i === 0 ? 0 : all[i - 1])));
}
