import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { components } from './types';

/** Where the OpenAPI document lives, beside this module in the source tree and in dist/. */
export const SPEC_PATH = path.join(__dirname, 'openapi.yaml');

/** Where `npm run docs:build` puts the rendered HTML docs (not in git). */
export const DOCS_DIR = path.join(__dirname, 'docs');

export interface OpenApiOperation {
  operationId: string;
  security?: unknown[];
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
  [key: string]: unknown;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, Record<string, unknown>>; [key: string]: unknown };
  [key: string]: unknown;
}

let cached: { text: string; document: OpenApiDocument } | undefined;

function load() {
  if (!cached) {
    const text = readFileSync(SPEC_PATH, 'utf8');
    cached = { text, document: parse(text) as OpenApiDocument };
  }
  return cached;
}

/** The parsed document. Treat it as read-only: it is shared by every caller. */
export function loadSpec(): OpenApiDocument {
  return load().document;
}

/** The document as written, for serving it verbatim. */
export function specText(): string {
  return load().text;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Every operation of the document as `{ operationId, method, path }`. */
export function specOperations(document: OpenApiDocument = loadSpec()) {
  const operations: Array<{
    operationId: string;
    method: HttpMethod;
    path: string;
    operation: OpenApiOperation;
  }> = [];
  for (const [route, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) operations.push({ operationId: operation.operationId, method, path: route, operation });
    }
  }
  return operations;
}

/** The document's schemas as TypeScript types (generated into spec/types.ts by `npm run spec:types`). */
export type Schemas = components['schemas'];

/** A JSON pointer (`/a/b~1c`) from its unescaped segments. */
export function pointer(...segments: string[]): string {
  return segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export interface ParameterObject {
  name: string;
  in: string;
  required?: boolean;
  schema?: { type?: string; items?: { type?: string } } & Record<string, unknown>;
  $ref?: string;
}

function resolveParameter(
  document: OpenApiDocument,
  parameter: ParameterObject,
  at: string,
): [ParameterObject, string] {
  if (!parameter.$ref) return [parameter, at];
  const name = parameter.$ref.split('/').pop()!;
  const parameters = (document.components.parameters ?? {}) as Record<string, ParameterObject>;
  return [parameters[name], pointer('components', 'parameters', name)];
}

/** Every parameter of an operation in `location`, resolved, with the JSON pointer of its object. */
export function operationParameters(
  document: OpenApiDocument,
  path: string,
  method: string,
  operation: OpenApiOperation,
  location: 'query' | 'path',
): Array<[ParameterObject, string]> {
  const declared = (operation.parameters ?? []) as ParameterObject[];
  return declared
    .map((parameter, index) =>
      resolveParameter(document, parameter, pointer('paths', path, method, 'parameters', String(index))),
    )
    .filter(([parameter]) => parameter.in === location);
}

/** An operation's query parameter `name`, resolved, if it declares one. */
export function queryParameter(
  document: OpenApiDocument,
  path: string,
  method: string,
  operation: OpenApiOperation,
  name: string,
): ParameterObject | undefined {
  return operationParameters(document, path, method, operation, 'query').find(
    ([parameter]) => parameter.name === name,
  )?.[0];
}
