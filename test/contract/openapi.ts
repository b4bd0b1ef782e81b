/**
 * The bundle (generated/openapi.json) as the contract tests read it: its operations, $ref
 * resolution, and an Ajv 2020 validator that checks a value against any schema of the bundle.
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import bundle from '../../generated/openapi.json';

export type Json = Record<string, any>;
export const spec = bundle as Json;
export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type Method = (typeof METHODS)[number];

export interface Operation {
  method: Method;
  path: string;
  operationId: string;
  op: Json;
  /** `GET /v1/ratelimit/limits` */
  key: string;
}

export const operations: Operation[] = Object.entries<Json>(spec.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => ({ method, path, operationId: item[method].operationId, op: item[method], key: `${method.toUpperCase()} ${path}` })),
);

/** An operation that is still the spec's placeholder (no real contract yet). */
export const isPlaceholder = (o: Operation) => /^Placeholder/.test(o.op.description ?? '');

/** Follows `#/...` references until a non-reference. */
export function deref<T = Json>(value: Json): T {
  let v = value;
  while (v && typeof v.$ref === 'string') {
    v = v.$ref
      .slice(2)
      .split('/')
      .map((s: string) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((o: Json, k: string) => o?.[k], spec);
  }
  return v as T;
}

const pointer = (segments: string[]) => segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
// OpenAPI's own annotation keywords.
ajv.addKeyword({ keyword: 'example' });
ajv.addVocabulary(['discriminator', 'xml', 'externalDocs']);
ajv.addSchema({ ...spec, $id: 'openapi' });

/** Validates `value` against the schema found at `segments` of the bundle; returns the errors (empty when valid). */
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

export function validateAt(segments: string[], value: unknown): string[] {
  const ref = `openapi#/${pointer(segments)}`;
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Where the JSON schema of a response status lives (following a shared response's $ref). */
export function responseSchemaPath(o: Operation, status: string, mediaType = 'application/json'): string[] {
  const response = o.op.responses[status];
  if (!response) throw new Error(`${o.key} documents no ${status}`);
  const base = response.$ref ? response.$ref.slice(2).split('/') : ['paths', o.path, o.method, 'responses', status];
  return [...base, 'content', mediaType, 'schema'];
}

export function validateResponse(o: Operation, status: number, body: unknown): string[] {
  // A text body (a CSV download read with parseAs: 'text') is checked against the operation's CSV schema.
  return validateAt(responseSchemaPath(o, String(status), typeof body === 'string' ? 'text/csv' : 'application/json'), body);
}

/** Named examples (or the single `example`) of a media type object. */
export function examplesOf(media: Json | undefined): { name: string; value: unknown }[] {
  if (!media) return [];
  const named = Object.entries<Json>(media.examples ?? {}).map(([name, ex]) => ({ name, value: deref(ex).value }));
  return media.example !== undefined ? [...named, { name: 'example', value: media.example }] : named;
}

/** The seed's operation list, as `METHOD /path` keys. */
export function seedOperations(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [method, path] = l.split(/\s+/);
      return `${method.toUpperCase()} ${path}`;
    });
}
