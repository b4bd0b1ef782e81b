/**
 * `.env.example` from the settings table of docs/configuration.md, so the two never disagree: every setting as a
 * commented line with its default, its meaning above it. `--check` fails when the file differs (a test runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
export const TABLE = join(ROOT, 'docs/configuration.md');
export const ENV_EXAMPLE = join(ROOT, '.env.example');

export interface Setting {
  name: string;
  default: string;
  meaning: string;
}

/** The table's rows: `| \`NAME\` | default | meaning |`; a row naming two settings (`A` / `B`) gives both. */
export function settingsOf(markdown: string): Setting[] {
  const settings: Setting[] = [];
  for (const line of markdown.split('\n')) {
    const cells = /^\| (`[A-Z][A-Z0-9_]*`(?: \/ `[A-Z][A-Z0-9_]*`)*) \| (.*?) \| (.*) \|$/.exec(line);
    if (!cells) continue;
    const names = cells[1].split(' / ').map((n) => n.replace(/`/g, ''));
    const defaults = cells[2].split(' / ');
    names.forEach((name, i) =>
      settings.push({
        name,
        default: (defaults.length === names.length ? defaults[i] : cells[2]).trim(),
        meaning: cells[3],
      }),
    );
  }
  return settings;
}

/** A default as a value: a literal in backticks is the value; words (unset, system, every interface) are empty. */
const valueOf = (text: string): string => (/^`[^`]*`$/.test(text) ? text.slice(1, -1) : '');

function wrap(text: string, width = 116): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

export function envExample(settings: Setting[]): string {
  const out = [
    '# Every setting of the server and the worker, with its default; made from docs/configuration.md by',
    '# `npm run env:example` (edit the table there). All are optional: uncomment a line to set it.',
  ];
  for (const s of settings) {
    const value = valueOf(s.default);
    const note = value || s.default === 'unset' ? '' : ` (default: ${s.default.replace(/`/g, '')})`;
    const meaning = s.meaning.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    out.push('', ...wrap(`${meaning}${note}`).map((l) => `# ${l}`), `# ${s.name}=${value}`);
  }
  return `${out.join('\n')}\n`;
}

if (require.main === module) {
  const text = envExample(settingsOf(readFileSync(TABLE, 'utf8')));
  if (process.argv.includes('--check')) {
    if (readFileSync(ENV_EXAMPLE, 'utf8') !== text) {
      console.error('.env.example differs from docs/configuration.md: run npm run env:example');
      process.exit(1);
    }
  } else writeFileSync(ENV_EXAMPLE, text);
}
