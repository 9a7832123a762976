import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SPEC_PATH } from '../../spec';

describe('generated TypeScript types', function () {
  this.timeout(60_000);

  it('spec/types.ts matches the OpenAPI document (regenerate with `npm run spec:types`)', async () => {
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    const generated = astToString(await openapiTS(pathToFileURL(SPEC_PATH)));
    const committed = readFileSync(path.join(path.dirname(SPEC_PATH), 'types.ts'), 'utf8');
    // The committed file carries the generator's banner comment before the generated code.
    const body = committed.slice(committed.indexOf('export '));
    assert.ok(body === generated, 'spec/types.ts is stale: run `npm run spec:types` and commit the result');
  });
});
