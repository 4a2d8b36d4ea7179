/**
 * The known name closest to a mistyped one, as commander suggests commands: an edit distance
 * (insertions, deletions, substitutions and swaps of neighbours) of at most 3 that leaves at
 * least 40% of the name alike. Null when nothing is that close.
 */
export function closestName(typed: string, known: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  const lower = typed.toLowerCase();
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase());
    const alike = (Math.max(lower.length, name.length) - distance) / Math.max(lower.length, name.length);
    if (distance <= 3 && alike > 0.4 && distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance; names are short (a field name), so O(n*m) is fine. */
function editDistance(a: string, b: string): number {
  if (a.length > 100 || b.length > 100) return Infinity;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
