import assert from 'node:assert/strict';
import { renderDocsPage } from '../../api/docs-page';
import { loadSpec, specOperations } from '../../spec';

describe('the built-in docs overview', () => {
  const html = renderDocsPage(loadSpec(), 'https://ixapi.example/api/v2');

  it('lists every operation of the document with an anchor', () => {
    for (const { operationId } of specOperations()) assert.match(html, new RegExp(`id="${operationId}"`));
  });

  it('is self-contained: no scripts, nothing loaded from elsewhere', () => {
    assert.doesNotMatch(html, /<script/);
    assert.doesNotMatch(html, /<link[^>]+href="http/);
  });
});
