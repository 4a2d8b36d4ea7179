/**
 * Checks live answers against a served OpenAPI 3.1 document: the status must be one the
 * operation documents, the content type the documented media type, and the body valid against
 * the documented schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it).
 */
import * as ajv2020 from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { InjectResponse } from './test-app.js';

type Json = Record<string, any>;

export interface Conformance {
  /** Every `METHOD /template` of the document. */
  operations(): string[];
  /** Whether the operation documents a request body. */
  hasBody(operation: string): boolean;
  /** Problems with this answer to `METHOD /template` (empty when it conforms). */
  check(operation: string, response: InjectResponse): string[];
}

/** `#/components/...` refs made absolute, so a schema compiled on its own resolves them in the document. */
function absoluteRefs(node: unknown, documentId: string): unknown {
  if (Array.isArray(node)) return node.map((item) => absoluteRefs(item, documentId));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node as Json).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${documentId}${value}` : absoluteRefs(value, documentId)]),
  );
}

export function conformanceTo(document: Json): Conformance {
  // CommonJS packages: their default export is the module object under ESM.
  const Ajv = ((ajv2020 as unknown as { default?: unknown }).default ?? ajv2020) as typeof ajv2020.Ajv2020;
  const addFormats = ((ajvFormats as unknown as { default?: unknown }).default ?? ajvFormats) as unknown as (ajv: object) => void;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const documentId = 'https://monitor.test/openapi.json';
  ajv.addSchema({ $id: documentId, components: absoluteRefs(document.components, documentId) });
  const validators = new Map<unknown, ajv2020.ValidateFunction>();
  const operations = new Map<string, Json>();
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) operations.set(`${method.toUpperCase()} ${path}`, operation as Json);
  }
  return {
    operations: () => [...operations.keys()],
    hasBody: (name) => operations.get(name)?.requestBody !== undefined,
    check(name, response) {
      const operation = operations.get(name);
      if (!operation) return [`${name} is not in the document`];
      const documented = operation.responses[String(response.statusCode)];
      if (!documented) return [`${name} answered ${response.statusCode}, which it does not document (${Object.keys(operation.responses).join(', ')})`];
      const mediaType = String(response.headers['content-type'] ?? '').split(';')[0].trim();
      if (!documented.content) return response.body === '' ? [] : [`${name} ${response.statusCode}: documents no body but sent ${mediaType}`];
      const media = documented.content[mediaType];
      if (!media) return [`${name} ${response.statusCode}: content type ${mediaType} is not documented (${Object.keys(documented.content).join(', ')})`];
      let validate = validators.get(media.schema);
      if (!validate) {
        validate = ajv.compile(absoluteRefs(media.schema, documentId) as Json);
        validators.set(media.schema, validate);
      }
      // JSON bodies are checked as values; any other media type (NDJSON, PEM) as the text it is.
      const json = mediaType === 'application/json' || mediaType.endsWith('+json');
      if (validate(json ? JSON.parse(response.body) : response.body)) return [];
      return [`${name} ${response.statusCode}: ${ajv.errorsText(validate.errors, { separator: '; ' })}`];
    },
  };
}
