/**
 * `npm run bench [-- --quick] [-- <name> ...]`: runs every bench/*.bench.ts module (or the named
 * ones) and writes docs/benchmarks.md. Each figure is reported as a ratio against a baseline
 * measured in the same run, so the ratio, not the machine, is what the numbers say.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchFigure, type BenchModule, type BenchSection, ratio } from './bench.js';
import { mergeSections } from './benchmarks-file.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.filter((arg) => !arg.startsWith('--'));

async function loadModules(): Promise<BenchModule[]> {
  const files = readdirSync(here).filter((file) => file.endsWith('.bench.js')).sort();
  const modules: BenchModule[] = [];
  for (const file of files) {
    const loaded = (await import(join(here, file))) as { default?: BenchModule };
    if (loaded.default && (only.length === 0 || only.includes(loaded.default.name))) modules.push(loaded.default);
  }
  return modules;
}

function withRatios(figures: BenchFigure[]): BenchFigure[] {
  return figures.map((figure) => (figure.baseline && figure.ratio === undefined ? { ...figure, ratio: ratio(figure.value, figure.baseline.value) } : figure));
}

function format(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : String(Math.round(value * 100) / 100);
}

function renderSection(name: string, section: BenchSection, seconds: number, command: string): string {
  const lines = [`<!-- bench:${name} -->`, `## ${section.title}`, '', `Module \`${name}\`, ${seconds.toFixed(1)} s, produced by \`${command}\` on ${new Date().toISOString().slice(0, 10)} (${cpus().length} cores, Node ${process.version}).`, ''];
  lines.push('| figure | value | baseline (same run) | ratio | aim |', '|---|---|---|---|---|');
  for (const figure of withRatios(section.figures)) {
    const baseline = figure.baseline ? `${figure.baseline.name}: ${format(figure.baseline.value)} ${figure.unit}` : '';
    lines.push(`| ${figure.name} | ${format(figure.value)} ${figure.unit} | ${baseline} | ${figure.ratio ?? ''} | ${figure.aim ?? ''} |`);
  }
  for (const note of section.notes ?? []) lines.push('', `- ${note}`);
  lines.push('', `<!-- /bench:${name} -->`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const modules = await loadModules();
  if (modules.length === 0) throw new Error(`No bench module matched ${only.join(', ') || '(any)'}`);
  const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
  const sections = new Map<string, string>();
  for (const module of modules) {
    const workDir = mkdtempSync(join(tmpdir(), `bench-${module.name}-`));
    const started = performance.now();
    process.stdout.write(`\n== ${module.name}${quick ? ' (quick)' : ''}\n`);
    try {
      const section = await module.run({ quick, workDir, log: (line) => process.stdout.write(`   ${line}\n`) });
      sections.set(module.name, renderSection(module.name, section, (performance.now() - started) / 1000, command));
      for (const figure of withRatios(section.figures)) {
        process.stdout.write(`   ${figure.name}: ${format(figure.value)} ${figure.unit}${figure.ratio !== undefined ? ` (ratio ${figure.ratio})` : ''}\n`);
      }
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }
  const target = join(here, '..', '..', 'docs', 'benchmarks.md');
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, mergeSections(existsSync(target) ? readFileSync(target, 'utf8') : '', sections));
  process.stdout.write(`\nWrote ${target}\n`);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
