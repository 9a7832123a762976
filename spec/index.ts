import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { components } from './types';

/** Where the OpenAPI document lives, beside this module in the source tree and in dist/. */
export const SPEC_PATH = path.join(__dirname, 'openapi.yaml');

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
