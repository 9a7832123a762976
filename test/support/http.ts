import assert from 'node:assert/strict';
import type { ValidateFunction } from 'ajv';
import { ajvOf } from '../../api/request-validation';
import { loadSpec, specOperations } from '../../spec';
import { assertWithinScope, resourceSchemaOf } from './scope-oracle';
import { stack } from './stack';

export interface HttpResponse {
  status: number;
  headers: Headers;
  text: string;

  body: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent verbatim instead of JSON-encoding `body`. */
  rawBody?: string;
  token?: string;
  headers?: Record<string, string>;
  baseUrl?: string;
}

const document = loadSpec();
const ajv = ajvOf(document);
const validators = new Map<string, ValidateFunction>();
const operations = specOperations(document).map((op) => ({
  ...op,
  matcher: new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function validatorFor(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `ixapi-openapi#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

/** The answer the server gives for a path or method it does not route (404 catch-all or 405). */
export function isUnroutedAnswer(response: Pick<HttpResponse, 'status' | 'body'>): boolean {
  const detail = (response.body as { detail?: unknown } | undefined)?.detail;
  return response.status === 405 || (response.status === 404 && String(detail).startsWith('no resource at'));
}

/**
 * Checks a response against the OpenAPI document: the status must be documented for the operation
 * and the body must match its schema. Every error must be a problem document.
 */
export function assertContract(method: string, path: string, response: HttpResponse): void {
  const route = path.split('?')[0];
  const operation = operations.find((op) => op.method === method.toLowerCase() && op.matcher.test(route));
  const where = `${method} ${path} → ${response.status}`;
  let expectsProblem = true;
  // Operations this server does not route are problems, but not held to their documented statuses.
  if (operation && !isUnroutedAnswer(response)) {
    let pointer = ['', 'paths', operation.path, operation.method, 'responses', String(response.status)]
      .map(escapePointer)
      .join('/');
    let declared = operation.operation.responses[String(response.status)] as {
      $ref?: string;
      content?: object;
    };
    assert.ok(declared, `${where}: status not documented for ${operation.operationId}`);
    if (declared.$ref) {
      pointer = declared.$ref.slice(1);
      const name = declared.$ref.split('/').pop()!;
      declared = (document.components.responses as Record<string, typeof declared>)[name];
    }
    const content = declared.content as Record<string, { schema?: { $ref?: string } }> | undefined;
    // A documented non-problem body for an error status (health's 503) is checked against its own schema.
    expectsProblem = /Problem$/.test(content?.['application/json']?.schema?.$ref ?? 'Problem');
    if (content?.['application/json']) {
      const validate = validatorFor(`${pointer}/content/application~1json/schema`);
      assert.ok(
        validate(response.body),
        `${where}: body violates the document: ${ajv.errorsText(validate.errors)}`,
      );
    }
  }
  if (response.status >= 400 && expectsProblem) {
    const validate = validatorFor('/components/schemas/Problem');
    assert.ok(
      validate(response.body),
      `${where}: not a problem document: ${ajv.errorsText(validate.errors)}`,
    );
    assert.equal(
      (response.body as { status: number }).status,
      response.status,
      `${where}: problem status differs from HTTP status`,
    );
  }
}

/**
 * Real HTTP to the running API; every response is checked against the contract, and every success
 * against an independent statement of what the caller may see (scope-oracle.ts).
 */
export async function request(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.rawBody;
  if (body === undefined && options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${options.baseUrl ?? stack().baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const result: HttpResponse = { status: response.status, headers: response.headers, text, body: parsed };
  assertContract(method, path, result);
  if (result.status >= 200 && result.status < 300 && options.baseUrl === undefined) {
    const route = path.split('?')[0];
    const operation = operations.find((op) => op.method === method.toLowerCase() && op.matcher.test(route));
    await assertWithinScope({
      document,
      method,
      where: `${method} ${path}`,
      schemaName: operation && resourceSchemaOf(operation.operation.responses[String(result.status)]),
      token: options.token,
      body: result.body,
    });
  }
  return result;
}

/** Logs in with demo credentials of the given role (the first such account). */
export async function login(
  role: 'operator' | 'reseller' | 'subaccount' | 'customer' = 'customer',
  index = 0,
) {
  const credential = stack().credentials.filter((c) => c.role === role)[index];
  const response = await request('POST', '/auth/token', {
    body: { api_key: credential.apiKey, api_secret: credential.apiSecret },
  });
  assert.equal(response.status, 201, response.text);
  return {
    credential,
    accessToken: response.body.access_token as string,
    refreshToken: response.body.refresh_token as string,
  };
}
