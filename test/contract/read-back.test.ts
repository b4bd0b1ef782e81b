/**
 * What a client writes it can read back: every operation of the bundle that creates or updates a resource
 * (a write to `/<segment>/...create|update|set|add|connect...`) has a read of the same segment (`get`, else `list`),
 * and every field the write accepts is a field of that read's answer, at any depth (an `...Ids` list reads as the
 * objects it names). What is written but rightly never read back is listed below, each with its reason.
 */
import type { OperationObject, ReferenceObject } from 'openapi-typescript';
import { deref, operations, type Operation } from './openapi';

/** Writes with no read of their own segment, and why. */
const NO_READ: Record<string, string> = {
  'POST /v2/whitelabel/add-plan': 'plans read back through GET /v2/whitelabel/get-plan, by the plan id it answers',
};

/** Fields written and rightly not read back (or not yet), by write and field, and why. */
const NOT_READ: Record<string, string> = {
  'POST /v2/account/connect smtp.password': 'a secret: stored encrypted, never answered',
  'POST /v2/account/connect imap.password': 'a secret: stored encrypted, never answered',
  'POST /v2/account/connect auth.refreshToken': 'a secret: stored encrypted, never answered',
  'POST /v2/account/reconnect password': 'a secret: stored encrypted, never answered',
  'POST /v2/account/reconnect imapPassword': 'a secret: stored encrypted, never answered',
  'POST /v2/list/add/leads personIds': 'members read back with GET /v2/list/leads, not the list itself',
  'POST /v2/list/add/companies companyIds': 'members read back with GET /v2/list/companies, not the list itself',
  'POST /v2/placement/create text': 'a known gap: a placement test answers its subject, not its body',
  'POST /v2/placement/create html': 'a known gap: a placement test answers its subject, not its body',
};

/** The parts of a schema this walk reads. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}
const schema = (value: unknown) => deref(value as Schema & ReferenceObject) as Schema;
const media = (content: unknown) => (content as Record<string, { schema?: Schema }> | undefined)?.['application/json'];

/** Every property name of a schema at any depth (through references, allOf/oneOf/anyOf and items). */
function fieldNames(value: Schema | undefined, seen = new Set<Schema>()): Set<string> {
  const names = new Set<string>();
  if (!value) return names;
  const s = schema(value);
  if (seen.has(s)) return names;
  seen.add(s);
  for (const [name, sub] of Object.entries(s.properties ?? {})) {
    names.add(name);
    fieldNames(sub, seen).forEach((n) => names.add(n));
  }
  for (const part of [...(s.allOf ?? []), ...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.items ? [s.items] : [])])
    fieldNames(part, seen).forEach((n) => names.add(n));
  return names;
}

/** The fields a write's JSON body accepts: its top level, and one level into a nested object as `parent.child`. */
function writtenFields(op: OperationObject): string[] {
  const body = op.requestBody && media(deref(op.requestBody).content)?.schema;
  if (!body) return [];
  const top = schema(body);
  const props = [top, ...(top.allOf ?? []).map(schema)].reduce<Record<string, Schema>>(
    (all, p) => ({ ...all, ...p.properties }),
    {},
  );
  return Object.entries(props).flatMap(([name, sub]) => {
    const inner = schema(sub);
    const nested = inner.type === 'object' ? Object.keys(inner.properties ?? {}) : [];
    return [name, ...nested.map((n) => `${name}.${n}`)];
  });
}

const segmentOf = (path: string) => path.split('/')[2];
const rest = (path: string) => path.split('/').slice(3).join('/');
const isAlias = (o: Operation) =>
  o.path.startsWith('/v2/') && operations.some((p) => p.key === `${o.method.toUpperCase()} /v1/${o.path.slice(4)}`);
const isWrite = (o: Operation) =>
  (o.method === 'post' || o.method === 'put' || o.method === 'patch') &&
  !isAlias(o) &&
  /create|update|set|add|connect/.test(rest(o.path));

/** The read of a write's segment: its `get`, else its `list`, else a GET of the write's own path. */
function readOf(write: Operation): Operation | undefined {
  const gets = operations.filter(
    (o) => o.method === 'get' && !isAlias(o) && segmentOf(o.path) === segmentOf(write.path),
  );
  return (
    gets.find((o) => rest(o.path) === 'get') ??
    gets.find((o) => rest(o.path) === 'list') ??
    gets.find((o) => o.path === write.path)
  );
}

/** What the read answers (every field name of its success body) and the parameters it is addressed by. */
function readShape(read: Operation): { fields: Set<string>; addresses: Set<string> } {
  const ok = Object.entries(read.op.responses).find(([status]) => status.startsWith('2'))![1];
  const params = (read.op.parameters ?? []).map((p) => deref(p).name);
  return { fields: fieldNames(media(deref(ok).content)?.schema), addresses: new Set(params) };
}

/**
 * A written field reads back when the answer has a field of its name; an `xId` also when the answer has `x` (the
 * object it names, or a list `xs` of them) or the read is addressed by it (the resource written to); an `xIds` or `xs` list when the
 * answer has `xs` or `x`.
 */
function readsBack(field: string, read: { fields: Set<string>; addresses: Set<string> }): boolean {
  const name = field.split('.').pop()!;
  const has = (n: string) => read.fields.has(n);
  if (has(name)) return true;
  if (/Id$/.test(name)) return has(name.slice(0, -2)) || has(`${name.slice(0, -2)}s`) || read.addresses.has(name);
  if (/Ids$/.test(name)) return has(`${name.slice(0, -3)}s`);
  return /s$/.test(name) && has(name.slice(0, -1));
}

const writes = operations.filter(isWrite);

describe('every write reads back', () => {
  it('finds the writes of the spec', () => {
    expect(writes.map((w) => w.key)).toEqual(
      expect.arrayContaining([
        'POST /v2/campaign/create',
        'POST /v2/campaign/sequence-create',
        'POST /v2/account/update',
      ]),
    );
  });

  it('has a read for every resource that has a create or update', () => {
    const missing = writes.filter((w) => !readOf(w) && !NO_READ[w.key]).map((w) => w.key);
    expect(missing).toEqual([]);
  });

  it('answers in that read every field the write accepts, but the listed exceptions', () => {
    const unread = writes.flatMap((w) => {
      const read = readOf(w);
      if (!read) return [];
      const shape = readShape(read);
      return writtenFields(w.op)
        .filter((f) => !readsBack(f, shape) && !NOT_READ[`${w.key} ${f}`] && !NOT_READ[`${w.key} ${f.split('.')[0]}`])
        .map((f) => `${w.key} ${f} (read: ${read.key})`);
    });
    expect(unread).toEqual([]);
  });

  it('lists no exception that no longer applies', () => {
    const stale = [
      ...Object.keys(NO_READ).filter((k) => !writes.some((w) => w.key === k && !readOf(w))),
      ...Object.keys(NOT_READ).filter((k) => {
        const [method, path, field] = k.split(' ');
        const w = writes.find((o) => o.key === `${method} ${path}`);
        const read = w && readOf(w);
        return !w || !read || !writtenFields(w.op).includes(field) || readsBack(field, readShape(read));
      }),
    ];
    expect(stale).toEqual([]);
  });
});
