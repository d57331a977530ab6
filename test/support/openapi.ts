/**
 * Validates box-server responses against Box's own OpenAPI 3.0 document
 * (/work/shared/box-api/openapi.json, overridable with BOX_OPENAPI_JSON), so the spec and not the test
 * author decides what a response must look like.
 *
 * Contract:
 * - `loadOpenApi()` reads and converts the spec once per process (cached) and returns a validator.
 * - `operationFor(method, pathname)` maps a concrete request path (with or without the `/2.0` or `/api/2.0`
 *   prefix) to the spec's path template. Literal segments beat `{param}` segments, so
 *   `/folders/trash/items` resolves to itself and not to `/folders/{folder_id}/items`. Spec keys carrying a
 *   `#variant` suffix (e.g. `/files/{file_id}#add_shared_link`) are only chosen when asked for by `variant`.
 * - `responseSchema(method, template, status)` follows
 *   `paths[template][method].responses[status | 'default'].content['application/json'].schema`; it returns
 *   `undefined` when the spec documents no JSON body for that status (for example 204, 302, 304).
 * - `validate(...)` returns `{ ok, errors, template, schemaRef }`; `errors` are readable one-liners with the
 *   JSON path of each mismatch. `expectValid(...)` throws an Error carrying those lines.
 *
 * Conversion from OpenAPI 3.0 to what ajv (draft-07) understands: `nullable: true` becomes
 * `anyOf: [{type: 'null'}, <schema>]`; `$ref: '#/components/...'` is re-rooted on the registered spec
 * document; `allOf` and `anyOf` are kept as written; `oneOf` is read as `anyOf` because Box's unions
 * overlap by design (see `convert`), so callers that need the exact alternative check it with
 * `validateSchema`; `x-box-*`, `example`, `discriminator` and other annotations are ignored (ajv
 * `strict: false`). `OPEN_ENUMS` lists the enums the spec itself calls incomplete. Box-specific `format` names (`token`, `urn`, `digest`, ...)
 * are accepted as free strings; `date-time`, `email`, `int64` and friends are checked by ajv-formats.
 */
import { readFileSync } from 'node:fs';
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export const defaultSpecPath = process.env.BOX_OPENAPI_JSON ?? '/work/shared/box-api/openapi.json';

const SPEC_ID = 'box-openapi';
type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch';

// ajv and ajv-formats are CommonJS with `exports.default`; under NodeNext the default import is the module.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule.default;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default;

type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };
type JsonObject = { readonly [k: string]: Json };

interface SpecResponse {
  readonly content?: Readonly<Record<string, { readonly schema?: JsonObject }>>;
}
interface SpecOperation {
  readonly responses?: Readonly<Record<string, SpecResponse>>;
}
export interface SpecDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, SpecOperation | unknown>>>>;
  readonly components: { readonly schemas: Readonly<Record<string, JsonObject>> };
}

export interface ValidationResult {
  readonly ok: boolean;
  readonly errors: readonly string[];
  /** The spec path template the request resolved to, e.g. `/files/{file_id}`. */
  readonly template: string;
  /** `$ref` (or `inline`) of the schema used, or `undefined` when the spec has no JSON body for the status. */
  readonly schemaRef: string | undefined;
}

export interface ValidateInput {
  readonly method: string;
  /** A concrete pathname (`/2.0/files/12`), or a spec template (`/files/{file_id}`). */
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
  /** Picks a `#variant` spec key, e.g. `add_shared_link` or `refresh`. */
  readonly variant?: string;
}

export interface OpenApiValidator {
  readonly spec: SpecDocument;
  operationFor(method: string, pathname: string, variant?: string): string | undefined;
  responseSchema(method: string, template: string, status: number): JsonObject | undefined;
  /** Validate `value` against one component schema, e.g. `File--Full`. */
  validateSchema(name: string, value: unknown): readonly string[];
  validate(input: ValidateInput): ValidationResult;
  expectValid(input: ValidateInput): ValidationResult;
}

/** Strips the API/upload prefixes so concrete paths line up with spec keys. */
export function specPathOf(pathname: string): string {
  const p = pathname.split('?')[0] ?? pathname;
  if (p.startsWith('/api/2.0/')) return p.slice('/api/2.0'.length);
  if (p.startsWith('/2.0/')) return p.slice('/2.0'.length);
  return p;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** OpenAPI 3.0 schema -> JSON Schema draft-07 as ajv reads it. `inSchemaMap` is true for `properties`-like maps. */
function convert(node: unknown, inSchemaMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => convert(n));
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (inSchemaMap) {
      out[k] = convert(v);
      continue;
    }
    if (k === 'nullable' || k === 'example' || k === 'discriminator') continue;
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/')) {
      out[k] = `${SPEC_ID}${v}`;
      continue;
    }
    if (k === 'oneOf') {
      // Box's unions are not exclusive: EventSourceResource lists GenericSource (any object) beside File and
      // Folder, so a strict oneOf would reject every real event. Box's SDKs read oneOf as an ordered union.
      out.anyOf = convert(v);
      continue;
    }
    if (k === 'properties' || k === 'patternProperties' || k === 'definitions') {
      out[k] = convert(v, true);
      continue;
    }
    if (k === 'enum' || k === 'required' || k === 'default' || k === 'const') {
      out[k] = v;
      continue;
    }
    out[k] = convert(v);
  }
  if (!inSchemaMap && node.nullable === true) {
    // An enum written without null still admits null when nullable (OpenAPI 3.0 semantics).
    return { anyOf: [{ type: 'null' }, out] };
  }
  return out;
}

/**
 * Enums the spec itself calls incomplete. `ClientError.code` lists only generic codes (`bad_request`,
 * `not_found`, ...) while Box sends the detailed codes of its error guide (`item_name_in_use`,
 * `folder_not_empty`, `rate_limit_exceeded`, ...; WIRE.md section 11), so the code is checked as a string
 * and each test asserts the exact code it expects.
 */
export const OPEN_ENUMS: readonly (readonly [schema: string, property: string])[] = [['ClientError', 'code']];

function openEnums(schemas: SpecDocument['components']['schemas']): SpecDocument['components']['schemas'] {
  const out: Record<string, JsonObject> = { ...schemas };
  for (const [name, prop] of OPEN_ENUMS) {
    const schema = schemas[name];
    const props = schema?.properties;
    if (!schema || !isObject(props) || !isObject(props[prop])) continue;
    const { enum: _closed, ...open } = props[prop] as Record<string, Json>;
    out[name] = { ...schema, properties: { ...(props as Record<string, Json>), [prop]: open } };
  }
  return out;
}

function formatErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  if (!errors) return [];
  return errors.map((e) => {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const params = JSON.stringify(e.params);
    return `${where} ${e.message ?? 'is invalid'} ${params} [schema ${e.schemaPath}]`;
  });
}

function templateScore(template: string): number {
  return template.split('/').filter((s) => s !== '' && !s.startsWith('{')).length;
}

function segmentsMatch(template: string, concrete: string): boolean {
  const t = template.split('/');
  const c = concrete.split('/');
  if (t.length !== c.length) return false;
  return t.every((seg, i) => (seg.startsWith('{') && seg.endsWith('}') ? (c[i] ?? '') !== '' : seg === c[i]));
}

let cached: OpenApiValidator | undefined;

export function loadOpenApi(specPath: string = defaultSpecPath): OpenApiValidator {
  if (cached && specPath === defaultSpecPath) return cached;
  const spec = JSON.parse(readFileSync(specPath, 'utf8')) as SpecDocument;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true, allowUnionTypes: true });
  addFormats(ajv);
  for (const f of ['token', 'urn', 'url', 'digest', '<width>x<height>', 'space_delimited_list', 'timezone', 'jwt', 'binary']) {
    if (!ajv.formats[f]) ajv.addFormat(f, true);
  }
  ajv.addSchema({ components: { schemas: convert(openEnums(spec.components.schemas), true) } }, SPEC_ID);

  const compiled = new Map<string, ValidateFunction>();
  const compileFor = (key: string, schema: JsonObject): ValidateFunction => {
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.compile(convert(schema) as object);
      compiled.set(key, fn);
    }
    return fn;
  };

  const operationOf = (method: string, template: string): SpecOperation | undefined => {
    const m = method.toLowerCase() as HttpMethod;
    const item = spec.paths[template];
    const op = item?.[m];
    return isObject(op) ? (op as SpecOperation) : undefined;
  };

  const operationFor = (method: string, pathname: string, variant?: string): string | undefined => {
    const concrete = specPathOf(pathname);
    if (spec.paths[concrete] && !variant && operationOf(method, concrete)) return concrete;
    const candidates = Object.keys(spec.paths).filter((key) => {
      const [tpl, frag] = key.split('#');
      if ((frag ?? undefined) !== variant) return false;
      return tpl !== undefined && segmentsMatch(tpl, concrete) && operationOf(method, key) !== undefined;
    });
    candidates.sort((a, b) => templateScore(b) - templateScore(a));
    return candidates[0];
  };

  const responseFor = (method: string, template: string, status: number): SpecResponse | undefined => {
    const responses = operationOf(method, template)?.responses;
    if (!responses) return undefined;
    return responses[String(status)] ?? responses.default;
  };

  const responseSchema = (method: string, template: string, status: number): JsonObject | undefined =>
    responseFor(method, template, status)?.content?.['application/json']?.schema;

  const validator: OpenApiValidator = {
    spec,
    operationFor,
    responseSchema,
    validateSchema(name, value) {
      if (!spec.components.schemas[name]) throw new Error(`openapi.json has no component schema named ${name}`);
      const fn = compileFor(`#${name}`, { $ref: `#/components/schemas/${name}` });
      return fn(value) ? [] : formatErrors(fn.errors);
    },
    validate(input) {
      const template = operationFor(input.method, input.path, input.variant);
      if (!template) {
        return {
          ok: false,
          errors: [`openapi.json has no operation ${input.method.toUpperCase()} ${input.path}${input.variant ? `#${input.variant}` : ''}`],
          template: '',
          schemaRef: undefined,
        };
      }
      const schema = responseSchema(input.method, template, input.status);
      if (!schema) {
        const documented = responseFor(input.method, template, input.status) !== undefined;
        return {
          ok: documented,
          errors: documented ? [] : [`openapi.json documents no ${input.status} for ${input.method.toUpperCase()} ${template}`],
          template,
          schemaRef: undefined,
        };
      }
      const schemaRef = typeof schema.$ref === 'string' ? schema.$ref : 'inline';
      const fn = compileFor(`${input.method.toLowerCase()} ${template} ${input.status}`, schema);
      const ok = fn(input.body);
      return { ok, errors: ok ? [] : formatErrors(fn.errors), template, schemaRef };
    },
    expectValid(input) {
      const r = validator.validate(input);
      if (!r.ok) {
        const body = JSON.stringify(input.body);
        throw new Error(
          `${input.method.toUpperCase()} ${input.path} -> ${input.status} does not match ${r.schemaRef ?? 'the spec'} (${r.template}):\n  ` +
            `${r.errors.slice(0, 15).join('\n  ')}\nbody: ${body.length > 2000 ? `${body.slice(0, 2000)}...` : body}`,
        );
      }
      return r;
    },
  };
  if (specPath === defaultSpecPath) cached = validator;
  return validator;
}

/**
 * Builds an instance from the `example` values the spec gives on each property (the spec carries
 * property-level examples, not whole-response ones). Used to prove the validator accepts Box's own samples.
 */
export function exampleFromSchema(spec: SpecDocument, schema: unknown, depth = 0): unknown {
  if (!isObject(schema) || depth > 4) return undefined;
  const composite = typeof schema.$ref === 'string' || Array.isArray(schema.allOf) || isObject(schema.properties);
  // Container-level examples in the spec are often partial; leaf examples are the trustworthy ones.
  if ('example' in schema && !composite) return schema.example;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return exampleFromSchema(spec, spec.components.schemas[name], depth + 1);
  }
  // Only `$ref` hops count towards the depth bound: they are what can recurse (Folder -> Items -> Folder).
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s) => exampleFromSchema(spec, s, depth));
    if (parts.every((p) => isObject(p) || p === undefined)) {
      return Object.assign({}, ...parts.filter(isObject));
    }
    return parts.find((p) => p !== undefined);
  }
  const alt = (schema.oneOf ?? schema.anyOf) as unknown;
  if (Array.isArray(alt) && alt.length > 0) return exampleFromSchema(spec, alt[0], depth);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.type === 'object' || isObject(schema.properties)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) {
      const ex = exampleFromSchema(spec, v, depth);
      if (ex !== undefined) out[k] = ex;
    }
    return out;
  }
  if (schema.type === 'array') {
    const ex = exampleFromSchema(spec, schema.items, depth);
    return ex === undefined ? [] : [ex];
  }
  return undefined;
}
