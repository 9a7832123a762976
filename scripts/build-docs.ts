import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DOCS_DIR, SPEC_PATH } from '../spec';

const ROOT = path.resolve(__dirname, '..');
const BUNDLE = 'redoc.standalone.js';
/** The page's own script (Redoc's state and the call that renders it), moved out of the HTML. */
const STATE = 'redoc-state.js';

/** Whether the built docs are missing or older than the document. */
export function docsAreStale(): boolean {
  try {
    const built = Math.min(
      statSync(path.join(DOCS_DIR, 'index.html')).mtimeMs,
      statSync(path.join(DOCS_DIR, STATE)).mtimeMs,
    );
    return built < statSync(SPEC_PATH).mtimeMs;
  } catch {
    return true;
  }
}

/**
 * Renders the OpenAPI document into readable HTML with Redoc, ahead of time, into spec/docs/. The
 * page loads Redoc's script from beside it instead of a CDN, so the docs need no network, and its
 * inline script moves into a file beside it, so the page runs under a Content-Security-Policy that
 * allows scripts of its own origin only.
 */
export function buildDocs(): void {
  mkdirSync(DOCS_DIR, { recursive: true });
  const target = path.join(DOCS_DIR, 'index.html');
  execFileSync(
    process.execPath,
    [
      require.resolve('@redocly/cli/bin/cli.js'),
      'build-docs',
      SPEC_PATH,
      '--output',
      target,
      '--disableGoogleFont',
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  let inline = '';
  const html = readFileSync(target, 'utf8')
    .replace(/https:\/\/cdn\.redocly\.com\/redoc\/[^"']+\/redoc\.standalone\.js/g, `docs/${BUNDLE}`)
    .replace(/<script>([\s\S]*?)<\/script>/, (_match, code: string) => {
      inline = code;
      return `<script src="docs/${STATE}"></script>`;
    });
  if (!inline) throw new Error('the Redoc page has no inline script to move out');
  writeFileSync(path.join(DOCS_DIR, STATE), inline);
  writeFileSync(target, html);
  copyFileSync(
    path.join(path.dirname(require.resolve('redoc/package.json')), 'bundles', BUNDLE),
    path.join(DOCS_DIR, BUNDLE),
  );
}

if (require.main === module) {
  buildDocs();
  process.stdout.write(`docs written to ${path.relative(ROOT, DOCS_DIR)}/\n`);
}
