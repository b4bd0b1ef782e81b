/**
 * The bundle (generated/openapi.json) as the contract tests read it: its operations, $ref
 * resolution, and an Ajv 2020 validator that checks a value against any schema of the bundle.
 * Typed with openapi-typescript's OpenAPI 3 types, as scripts/generate.ts (which writes it) types it.
 */
import { readFileSync } from 'node:fs';
import type {
  MediaTypeObject,
  OpenAPI3,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponsesObject,
} from 'openapi-typescript';
import { BUNDLED_SPEC } from '../../server/platform/project-root';
import { SpecSchemas } from '../../server/platform/spec-schemas';

export const spec = JSON.parse(readFileSync(BUNDLED_SPEC, 'utf8')) as OpenAPI3;
export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type Method = (typeof METHODS)[number];

export interface Operation {
  method: Method;
  path: string;
  operationId: string;
  op: OperationObject & { responses: ResponsesObject };
  /** `GET /v1/ratelimit/limits` */
  key: string;
}

export const isRef = (o: object): o is ReferenceObject => '$ref' in o;

/** The operations of a path item: the bundle writes them inline, each with an operationId and responses (spec lint). */
function operationsOf(path: string, item: PathItemObject | ReferenceObject): Operation[] {
  if (isRef(item)) throw new Error(`${path}: expected an inline path item, found ${item.$ref}`);
  return METHODS.flatMap((method) => {
    const op = item[method];
    if (!op) return [];
    const key = `${method.toUpperCase()} ${path}`;
    if (isRef(op) || op.operationId === undefined || op.responses === undefined)
      throw new Error(`${key}: expected an inline operation with an operationId and responses`);
    return [{ method, path, operationId: op.operationId, op: { ...op, responses: op.responses }, key }];
  });
}

export const operations: Operation[] = Object.entries(spec.paths ?? {}).flatMap(([path, item]) =>
  operationsOf(path, item),
);

/** An operation that is still the spec's placeholder (no real contract yet). */
export const isPlaceholder = (o: Operation) => /^Placeholder/.test(o.op.description ?? '');

/** The path segments of a `#/...` reference, as written. */
const refSegments = (ref: string) => ref.slice(2).split('/');

/** The value at a `#/...` pointer of the bundle. */
function at(ref: string): unknown {
  return refSegments(ref)
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (o, k) => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined),
      spec,
    );
}

/** Follows `#/...` references until a non-reference: what a reference in the place of a `T` points at is a `T`. */
export function deref<T extends object>(value: T | ReferenceObject): T {
  let v: unknown = value;
  while (typeof v === 'object' && v !== null && isRef(v)) {
    const target = at(v.$ref);
    if (target === undefined) throw new Error(`${v.$ref} is not in the bundle`);
    v = target;
  }
  return v as T;
}

/** Where a value of the bundle is defined: its reference's target, or `inline` (where it is written) when it is no reference. */
export const definedAt = (value: object, inline: string[]): string[] =>
  isRef(value) ? refSegments(value.$ref) : inline;

const schemas = new SpecSchemas(spec);

/** Validates `value` against the schema found at `segments` of the bundle; returns the errors (empty when valid). */
export const validateAt = (segments: string[], value: unknown): string[] => schemas.validate(segments, value);

/** Where the JSON schema of a response status lives (following a shared response's $ref). */
export function responseSchemaPath(o: Operation, status: string, mediaType = 'application/json'): string[] {
  const at = schemas.responseSchema(o.path, o.method, Number(status), mediaType);
  if (!at || !o.op.responses[status]) throw new Error(`${o.key} documents no ${status} ${mediaType} body`);
  return at;
}

export function validateResponse(o: Operation, status: number, body: unknown): string[] {
  // A text body (a CSV download read with parseAs: 'text') is checked against the operation's CSV schema.
  return validateAt(
    responseSchemaPath(o, String(status), typeof body === 'string' ? 'text/csv' : 'application/json'),
    body,
  );
}

export interface Example {
  name: string;
  value: unknown;
}

/** A parameter's example as it goes into a URL: a scalar as text, a list joined by commas (as String() joins it). */
export function paramText(value: unknown): string {
  if (Array.isArray(value)) return value.map(paramText).join(',');
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Named examples (or the single `example`) of a media type or parameter object. */
export function examplesOf(media: MediaTypeObject | ParameterObject | ReferenceObject | undefined): Example[] {
  if (!media) return [];
  const m = deref(media);
  const named = Object.entries(m.examples ?? {}).map(([name, ex]): Example => ({ name, value: deref(ex).value }));
  return m.example !== undefined ? [...named, { name: 'example', value: m.example }] : named;
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
