import type { OpenApiDocument } from '../spec';
import { specOperations } from '../spec';

const escape = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/**
 * A self-contained HTML overview of the OpenAPI document (no scripts, no network), built once at
 * start-up: every operation with its method, path, summary and response codes.
 */
export function renderDocsPage(document: OpenApiDocument, baseUrl: string): string {
  const rows = specOperations(document)
    .map(({ operationId, method, path, operation }) => {
      const summary = typeof operation.summary === 'string' ? operation.summary : '';
      const codes = Object.keys(operation.responses).join(', ');
      const open = Array.isArray(operation.security) && operation.security.length === 0;
      return `<tr id="${escape(operationId)}"><td><code>${method.toUpperCase()}</code></td><td><code>${escape(path)}</code></td><td><code>${escape(
        operationId,
      )}</code></td><td>${escape(summary)}</td><td>${codes}</td><td>${open ? 'none' : 'Bearer'}</td></tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(document.info.title)} ${escape(document.info.version)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:80rem}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}code{font-size:.9em}</style></head>
<body><h1>${escape(document.info.title)} ${escape(document.info.version)}</h1>
<p>Base URL: <code>${escape(baseUrl)}</code>. Machine-readable document: <a href="${escape(baseUrl)}/spec">${escape(
    baseUrl,
  )}/spec</a>. Obtain a token with <code>POST /auth/token</code> and send it as <code>Authorization: Bearer &lt;access_token&gt;</code>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>Operation</th><th>Summary</th><th>Responses</th><th>Auth</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>`;
}
