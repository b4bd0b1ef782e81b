/**
 * The bundle's schemas checked with one Ajv (JSON Schema 2020-12, as OpenAPI 3.1 writes them): the bundle is added
 * once, and a schema is compiled the first time something is checked against it, its references compiled once and
 * shared by every schema that names them.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface Bundle {
  paths?: Record<string, Record<string, { responses?: Record<string, ResponseObject> } | undefined> | undefined>;
  components?: { responses?: Record<string, ResponseObject> };
}

/** A JSON pointer of the bundle from its segments, as written. */
const pointer = (segments: string[]) =>
  segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

export class SpecSchemas {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly bundle: object) {
    addFormats(this.ajv);
    // OpenAPI's own annotation keywords.
    this.ajv.addKeyword({ keyword: 'example' });
    this.ajv.addVocabulary(['discriminator', 'xml', 'externalDocs']);
    this.ajv.addSchema({ ...bundle, $id: 'openapi' });
  }

  /** The errors of `value` against the schema at `segments` of the bundle (empty when valid). */
  validate(segments: string[], value: unknown): string[] {
    const ref = `openapi#/${pointer(segments)}`;
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    return validate(value)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  }

  /**
   * Where the schema of an operation's answer lives: the status as documented, else its `2XX`-style range, else
   * `default`, through a shared response's $ref. `undefined` when the operation documents no such answer;
   * `null` when the answer it documents has no body of `mediaType`.
   */
  responseSchema(path: string, method: string, status: number, mediaType: string): string[] | null | undefined {
    const responses = (this.bundle as Bundle).paths?.[path]?.[method]?.responses ?? {};
    const documented = [String(status), `${String(status)[0]}XX`, 'default'].find((s) => responses[s]);
    if (!documented) return undefined;
    const response = responses[documented];
    const shared = response.$ref?.startsWith('#/components/responses/') ? response.$ref.slice(2).split('/') : null;
    const answer = shared ? (this.bundle as Bundle).components?.responses?.[shared[2]] : response;
    if (!answer?.content?.[mediaType]?.schema) return null;
    return [...(shared ?? ['paths', path, method, 'responses', documented]), 'content', mediaType, 'schema'];
  }
}
