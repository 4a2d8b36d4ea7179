/**
 * docs/benchmarks.md: one section per bench module between `<!-- bench:<name> -->` markers,
 * rewritten by each run of that module, and text written by hand around them (before/after
 * tables, measurements made outside a module), which no run may touch.
 */
const HEADER = [
  '# Benchmarks',
  '',
  'Written by `npm run bench`. Every figure stands beside a baseline measured in the same run; compare ratios, not absolute numbers, across machines.',
  'Each section says the command and date that produced it; running some modules replaces only their sections.',
  '',
].join('\n');

const sectionPattern = (name: string) => new RegExp(`<!-- bench:${name} -->[\\s\\S]*?<!-- /bench:${name} -->`);
const ANY_SECTION_END = /<!-- \/bench:[\w-]+ -->/g;

/**
 * Replaces the sections of the modules just run where they stand and keeps everything else as
 * it is; a module's first section goes after the last section the file has.
 */
export function mergeSections(existing: string, sections: ReadonlyMap<string, string>): string {
  let text = existing.trim() === '' ? `${HEADER}\n` : existing;
  const added: string[] = [];
  for (const [name, section] of [...sections].sort(([a], [b]) => a.localeCompare(b))) {
    if (sectionPattern(name).test(text)) text = text.replace(sectionPattern(name), () => section);
    else added.push(section);
  }
  if (added.length === 0) return text;
  const ends = [...text.matchAll(ANY_SECTION_END)];
  const at = ends.length === 0 ? text.length : ends[ends.length - 1].index! + ends[ends.length - 1][0].length;
  const before = text.slice(0, at).replace(/\n*$/, '');
  return `${before}\n\n${added.join('\n\n')}\n${text.slice(at).replace(/^\n*/, '\n')}`.replace(/\n*$/, '\n');
}
