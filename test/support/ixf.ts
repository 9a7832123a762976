import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { stack } from './stack';

const SCHEMA = path.resolve(__dirname, '../../spec/ixf/ixp-member-list-1.0.schema.json');

/** The IX-F member export's URL: beside the API base path, at the root of the API's origin. */
export const memberExportUrl = () => `${new URL(stack().baseUrl).origin}/ixf/member-export`;

let validator: ReturnType<Ajv04['compile']> | undefined;

/** Asserts that `document` is valid against the IX-F Member Export schema 1.0 (draft-04). */
export function assertMemberExport(document: unknown): void {
  if (!validator) {
    const ajv = new Ajv04({ allErrors: true, strict: false });
    addFormats(ajv);
    validator = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')) as object);
  }
  assert.ok(validator(document), JSON.stringify(validator.errors, null, 2));
}
