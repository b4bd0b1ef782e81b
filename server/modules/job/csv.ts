/**
 * Reading an uploaded CSV as it streams in: strict UTF-8 (TextDecoder, fatal), csv-parse for RFC 4180
 * records with a 64 KB record limit, byte and row limits, no NUL characters, and the header mapped to contact fields. Every
 * problem is a 400 (or 413 for the limits) that names the line, thrown before the job is queued.
 */
import { Transform, type Readable } from 'node:stream';
import { parse, CsvError } from 'csv-parse';
import { DomainError, invalid, detail, tooLarge } from '../../platform/errors';

export const MAX_RECORD_BYTES = 64 * 1024;

/** The contact fields a header names, by its name compared without case, spaces, `_` or `-`. */
const FIELD_BY_HEADER: Record<string, string> = {
  email: 'email',
  emailaddress: 'email',
  firstname: 'firstName',
  lastname: 'lastName',
  companyname: 'companyName',
  company: 'companyName',
  jobtitle: 'jobTitle',
  title: 'jobTitle',
  phone: 'phone',
  phonenumber: 'phone',
  website: 'website',
  linkedinurl: 'linkedinUrl',
  linkedin: 'linkedinUrl',
  // The lead's IANA zone (`Time Zone`, `timezone`, `tz`): checked as the contact's own field, so a name that is no
  // zone makes the row invalid (`invalidTimezone`).
  timezone: 'timezone',
  tz: 'timezone',
};

const compact = (header: string) => header.toLowerCase().replace(/[\s_-]+/g, '');

/** What each column becomes: a contact field, or a custom variable named after the header. */
export interface ColumnMap {
  fields: { index: number; field: string }[];
  variables: { index: number; key: string }[];
  emailIndex: number;
}

const lineError = (line: number, message: string) =>
  invalid(`Line ${line}: ${message}`, [detail('csv', `line ${line}: ${message}`, 'csv')]);

/**
 * Maps a header row. A custom variable's key is the header with every character other than a letter,
 * digit or `_` turned into `_` (`Company Size` -> `Company_Size`), `_`-prefixed when it starts with a digit.
 */
export function mapHeader(header: string[], maxVariables: number): ColumnMap {
  const fields: ColumnMap['fields'] = [];
  const variables: ColumnMap['variables'] = [];
  const seen = new Set<string>();
  header.forEach((raw, index) => {
    const name = raw.trim();
    if (!name) throw lineError(1, `column ${index + 1} of the header is empty`);
    const field = FIELD_BY_HEADER[compact(name)];
    const key = field ?? name.replace(/[^A-Za-z0-9_]/g, '_').replace(/^(?=[0-9])/, '_');
    if (seen.has(key)) throw lineError(1, `two columns map to "${key}"`);
    seen.add(key);
    if (field) fields.push({ index, field });
    else if (key.length > 64) throw lineError(1, `the column name "${name.slice(0, 80)}" is longer than 64 characters`);
    else variables.push({ index, key });
  });
  const email = fields.find((f) => f.field === 'email');
  if (!email) {
    const delimiter = header.length === 1 ? [';', '\t', '|'].find((d) => header[0].includes(d)) : undefined;
    throw lineError(
      1,
      delimiter
        ? `no email column: the header has one column holding "${delimiter === '\t' ? 'tab' : delimiter}"; separate columns with commas`
        : 'no email column (a column named email is required)',
    );
  }
  if (variables.length > maxVariables)
    throw lineError(1, `${variables.length} custom variable columns; at most ${maxVariables} are allowed`);
  return { fields, variables, emailIndex: email.index };
}

/** Strict UTF-8 decoding that counts bytes and lines, so an error names where it happened. */
class Utf8Lines extends Transform {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private bytes = 0;
  private lines = 1;

  constructor(private readonly maxBytes: number) {
    super({ readableObjectMode: false, decodeStrings: true });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: string) => void): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(tooLarge(`The file is larger than ${this.maxBytes} bytes.`));
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      // The first bad byte's line: what decodes before it, with the replacement character marking it.
      const loose = new TextDecoder('utf-8').decode(chunk);
      const before = loose.slice(0, Math.max(0, loose.indexOf('\uFFFD')));
      return done(lineError(this.lines + countLines(before), 'the file is not valid UTF-8 (save it as UTF-8)'));
    }
    this.lines += countLines(text);
    done(null, text);
  }

  override _flush(done: (err?: Error | null, data?: string) => void): void {
    try {
      done(null, this.decoder.decode());
    } catch {
      done(lineError(this.lines, 'the file ends inside a UTF-8 character'));
    }
  }
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function csvProblem(err: CsvError & { lines?: number }): DomainError {
  const line = err.lines ?? 0;
  switch (err.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return lineError(
        line,
        'the row has another number of cells than the header (check the delimiter and the quotes)',
      );
    case 'CSV_MAX_RECORD_SIZE':
      return lineError(line, `the row is longer than ${MAX_RECORD_BYTES / 1024} KB`);
    case 'CSV_QUOTE_NOT_CLOSED':
      return lineError(line, 'a quoted cell is never closed');
    default:
      return lineError(line, err.message.replace(/^Invalid /, 'invalid '));
  }
}

/**
 * Yields the data rows of a CSV stream with their line numbers, after the header (given to `onHeader`).
 * Throws the 400/413 of the first problem.
 */
export async function* csvRows(
  input: Readable,
  limits: { maxBytes: number; maxRows: number },
  onHeader: (header: string[]) => void,
): AsyncGenerator<{ line: number; cells: string[] }> {
  const parser = parse({
    bom: true,
    max_record_size: MAX_RECORD_BYTES,
    skip_empty_lines: true,
    info: true,
    relax_column_count: false,
  });
  const decoded = input.pipe(new Utf8Lines(limits.maxBytes));
  // Errors of the decoder (encoding, size) reach the parser's iterator through destroy.
  decoded.on('error', (err) => parser.destroy(err));
  input.on('error', (err) => parser.destroy(err));
  decoded.pipe(parser);
  let header = true;
  let rows = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      // PostgreSQL stores no NUL in text or JSON.
      const nul = record.findIndex((cell) => cell.includes('\u0000'));
      if (nul !== -1) throw lineError(info.lines, `cell ${nul + 1} holds a NUL character, which text may not contain`);
      if (header) {
        onHeader(record);
        header = false;
        continue;
      }
      if (++rows > limits.maxRows) throw tooLarge(`Line ${info.lines}: the file has more than ${limits.maxRows} rows.`);
      yield { line: info.lines, cells: record };
    }
  } catch (err) {
    input.unpipe();
    input.resume();
    if (err instanceof CsvError) throw csvProblem(err);
    throw err;
  }
  if (header) throw lineError(1, 'the file is empty (a header row is required)');
}
