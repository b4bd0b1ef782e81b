/**
 * Contract tests of every operation in the bundle (the seed's, the /v2 aliases and any added),
 * through the typed client against the real server: the documented success status with a body
 * valid against the spec, and each error of the entry with a documented status and a body in the
 * version's format. The coverage test fails when an operation of the bundle has no entry.
 */
import { entries, type Answer, type Version } from './entries';
import { startFixture, type Fixture } from './fixture';
import { operations, validateResponse, type Operation } from './openapi';

let f: Fixture;
beforeAll(async () => {
  f = await startFixture();
}, 60_000);
afterAll(() => f?.close());

/** The entry of an operation: its own, or its /v1 original's for a /v2 alias. */
function entryOf(o: Operation): { entry: (typeof entries)[string]; version: Version } | undefined {
  const own = entries[o.key];
  if (own) return { entry: own, version: o.path.startsWith('/v2/') ? 'v2' : 'v1' };
  const original = entries[`${o.method.toUpperCase()} /v1/${o.path.slice(4)}`];
  return original && o.path.startsWith('/v2/') ? { entry: original, version: 'v2' } : undefined;
}

const successStatus = (o: Operation) => Number(Object.keys(o.op.responses).find((s) => s.startsWith('2')));

function bodyOf(a: Answer): unknown {
  return a.data !== undefined ? a.data : a.error;
}

describe('coverage', () => {
  it('has an entry, with at least one documented error, for every operation of the bundle', () => {
    const missing = operations.filter((o) => !entryOf(o)).map((o) => o.key);
    expect(missing).toEqual([]);
    const undocumented = operations.flatMap((o) =>
      Object.keys(entryOf(o)?.entry.errors ?? {})
        .filter((status) => !o.op.responses[status])
        .map((status) => `${o.key} ${status}`),
    );
    expect(undocumented).toEqual([]);
    expect(
      operations.filter((o) => Object.keys(entryOf(o)?.entry.errors ?? {}).length === 0).map((o) => o.key),
    ).toEqual([]);
  });

  it('has no entry for an operation the bundle lacks', () => {
    const keys = new Set(operations.map((o) => o.key));
    expect(Object.keys(entries).filter((k) => !keys.has(k))).toEqual([]);
  });
});

describe.each(operations.filter((o) => entryOf(o)).map((o) => [o.key, o] as const))('%s', (_key, o) => {
  const { entry, version } = entryOf(o)!;

  it(`answers ${successStatus(o)} with a body valid against the spec`, async () => {
    const answer = await entry.ok(f, version);
    const body = bodyOf(answer);
    expect({ status: answer.response.status, body }).toMatchObject({ status: successStatus(o) });
    expect(validateResponse(o, answer.response.status, body)).toEqual([]);
    expect(answer.response.headers.get('x-request-id')).toBeTruthy();
  });

  it.each(Object.entries(entry.errors))(
    `answers the documented %s in the ${version} error format`,
    async (status, call) => {
      const answer = await call(f, version);
      const body = bodyOf(answer);
      expect({ status: answer.response.status, body }).toMatchObject({ status: Number(status) });
      expect(validateResponse(o, Number(status), body)).toEqual([]);
      if (version === 'v2')
        expect(body).toMatchObject({
          statusCode: Number(status),
          requestId: answer.response.headers.get('x-request-id'),
        });
      else expect(Object.keys(body as object)).toEqual(['error']);
    },
  );
});
