import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES } from '../../config/config';

const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');

describe('README', () => {
  it('documents every configuration variable the code reads, and no other', () => {
    const table = readme.split('## Configuration')[1].split('\n## ')[0];
    const documented = [...table.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]);
    assert.deepEqual([...documented].sort(), CONFIG_VARIABLES.map((v) => v.name).sort());
  });

  it('gives the two commands', () => {
    assert.match(readme, /npm ci && npm start/);
    assert.match(readme, /npm ci && npm test/);
  });

  it('names only npm scripts that exist', () => {
    const scripts = (
      JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    for (const [, name] of readme.matchAll(/npm run ([a-z:]+)/g)) assert.ok(scripts[name], `npm run ${name}`);
  });
});
