/**
 * `admin leads generate` and `admin leads import`: the lead database's data commands. The lead
 * wires them into the admin program with registerLeadCommands(program, openCliContext).
 */
import { Command, InvalidArgumentError } from 'commander';
import { csvFile, wholeNumber } from './args';
import { MultiBar, Presets, SingleBar } from 'cli-progress';
import { generateLeads } from '../modules/leads/generate';
import {
  COMPANY_HEADERS,
  ImportError,
  PEOPLE_HEADERS,
  importLeadsCsv,
  type ImportReport,
} from '../modules/leads/import';
import type { CliContext } from './context';

const headerHelp = (table: Record<string, string[]>) =>
  Object.entries(table)
    .map(([col, names]) => `  ${col}: ${names.join(', ')}`)
    .join('\n');

function printReport(report: ImportReport) {
  if (report.unknownColumns.length) console.error(`Ignored unknown column(s): ${report.unknownColumns.join(', ')}`);
  for (const e of report.errors.slice(0, 50)) console.error(`line ${e.line}: ${e.message}`);
  if (report.errors.length > 50) console.error(`... and ${report.errors.length - 50} more invalid row(s)`);
}

/** The most people or companies one `leads generate` makes: far beyond any demo or benchmark. */
const MAX_GENERATED = 10_000_000;

export function registerLeadCommands(program: Command, open: () => Promise<CliContext>): void {
  const leads = program.command('leads').description('the lead database: synthetic data, CSV import');

  leads
    .command('generate')
    .description('fill the lead database with made-up people and companies (the same seed gives the same data)')
    .requiredOption('--people <n>', 'number of people (0 to 10,000,000)', wholeNumber(0, MAX_GENERATED))
    .requiredOption('--companies <n>', 'number of companies (0 to 10,000,000)', wholeNumber(0, MAX_GENERATED))
    .option('--seed <n>', 'random seed: the same seed gives the same data', wholeNumber(0, 2 ** 31 - 1), 1)
    .option('--replace', 'empty the lead database first (reveals and list members of its people go with it)', false)
    .action(async (opts: { people: number; companies: number; seed: number; replace: boolean }) => {
      const ctx = await open();
      const bars = new MultiBar(
        { format: '{phase} [{bar}] {percentage}% {value}/{total}', hideCursor: true },
        Presets.shades_classic,
      );
      const byPhase = new Map<string, SingleBar>();
      const started = Date.now();
      try {
        await generateLeads(
          ctx.deps.db,
          { people: opts.people, companies: opts.companies, seed: opts.seed, replace: opts.replace },
          (p) => {
            const phase = p.phase === 'indexes' ? 'indexes  ' : p.phase.padEnd(9);
            let bar = byPhase.get(phase);
            if (!bar) byPhase.set(phase, (bar = bars.create(p.total || 1, 0, { phase })));
            bar.update(p.phase === 'indexes' ? 0 : p.done, {
              phase: p.phase === 'indexes' ? `indexes (${p.done} rebuilt)` : phase,
            });
          },
        );
        bars.stop();
        console.log(
          `The lead database now holds ${opts.people} made-up people and ${opts.companies} companies (seed ${opts.seed}, ${((Date.now() - started) / 1000).toFixed(1)} s).`,
        );
      } finally {
        bars.stop();
        await ctx.close();
      }
    });

  leads
    .command('import')
    .description('import companies or people from a CSV file (one transaction: an error imports nothing)')
    .option('--people <file>', 'a CSV of people', csvFile)
    .option('--companies <file>', 'a CSV of companies', csvFile)
    .option('--skip-invalid', 'import the valid rows and report the invalid ones instead of importing nothing', false)
    .addHelpText(
      'after',
      `\nHeader names (case, spaces, dashes and underscores ignored; unknown columns are reported and ignored).\n` +
        `Lists (keywords, technologies) are separated by ";" or "|".\n\nCompanies (name required; an existing domain is updated):\n${headerHelp(COMPANY_HEADERS)}\n\n` +
        `People (first_name and last_name required; an existing email is updated; the company is found by\ncompany_domain, else company_name, and created when unknown):\n${headerHelp(PEOPLE_HEADERS)}\n`,
    )
    .action(async (opts: { people?: string; companies?: string; skipInvalid: boolean }) => {
      if (!opts.people === !opts.companies)
        throw new InvalidArgumentError('give exactly one of --people FILE.csv or --companies FILE.csv');
      const kind = opts.people ? 'people' : 'companies';
      const file = (opts.people ?? opts.companies)!;
      const ctx = await open();
      const bar = new SingleBar(
        { format: `${kind} [{bar}] {percentage}% of the file`, hideCursor: true },
        Presets.shades_classic,
      );
      bar.start(100, 0);
      try {
        const report = await importLeadsCsv(
          ctx.deps.db,
          { kind, file, skipInvalid: opts.skipInvalid },
          (bytes, total) => bar.update(Math.floor((bytes / Math.max(1, total)) * 100)),
        );
        bar.stop();
        printReport(report);
        console.log(
          `Imported ${kind}: ${report.inserted} new, ${report.updated} updated` +
            (report.companiesCreated ? `, ${report.companiesCreated} companies created` : '') +
            (report.errors.length ? `, ${report.errors.length} invalid row(s) skipped` : '') +
            '.',
        );
      } catch (err) {
        bar.stop();
        if (err instanceof ImportError) {
          printReport(err.report);
          console.error(err.message);
          process.exitCode = 1;
          return;
        }
        throw err;
      } finally {
        await ctx.close();
      }
    });
}
