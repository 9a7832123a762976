import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES } from '../../config/config';

/**
 * The README a newcomer reads, and the reference pages it points to: docs/*.md and the conformance
 * suite's README. What they state about the code (the configuration variables, the npm scripts, the
 * folders) is checked against it, and every relative link among them must lead somewhere.
 */

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

const README = 'README.md';
const CONFORMANCE_README = 'conformance/README.md';
const DOCS = readdirSync(path.join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)
  .sort();
/** Every page of documentation: the README, docs/*.md and the conformance suite's README. */
const PAGES = [README, ...DOCS, CONFORMANCE_README];

const readme = read(README);

/** The part of a page under the heading `## title`, up to the next heading of that level. */
function section(file: string, title: string): string {
  const page = read(file);
  const heading = `\n## ${title}\n`;
  const start = page.indexOf(heading);
  assert.notEqual(start, -1, `${file} has no "## ${title}" section`);
  return page.slice(start + heading.length).split('\n## ')[0];
}

/** The anchors GitHub gives the headings of a Markdown page. */
function anchors(file: string): Set<string> {
  const page = read(file).replace(/^```[\s\S]*?^```/gm, '');
  return new Set(
    [...page.matchAll(/^#{1,6} (.+)$/gm)].map(([, title]) =>
      title
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

/** The targets of a page's Markdown links (`[text](target)`), code blocks and spans left out. */
function linkTargets(file: string): string[] {
  const page = read(file)
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...page.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(([, target]) => target);
}

/** Relative links of a page: a target that is neither a URL with a scheme nor mail. */
const isRelative = (target: string): boolean => !/^[a-z][a-z0-9+.-]*:/i.test(target);

describe('README', () => {
  it('gives the two commands', () => {
    assert.match(readme, /npm ci && npm start/);
    assert.match(readme, /npm ci && npm test/);
  });

  it('is short enough to read in ten minutes', () => {
    const lines = readme.split('\n').length;
    assert.ok(lines < 200, `README.md has ${lines} lines; move reference material to docs/`);
  });

  it('links every page of docs/ and the conformance suite README', () => {
    const linked = new Set(
      linkTargets(README)
        .filter(isRelative)
        .map((target) => path.normalize(target.split('#')[0])),
    );
    assert.ok(DOCS.length > 0, 'docs/ holds no page');
    for (const page of [...DOCS, CONFORMANCE_README])
      assert.ok(linked.has(page), `README.md does not link ${page}`);
  });

  it('names every top-level folder in its folder table', () => {
    const table = section(README, 'Folders');
    const named = new Set([...table.matchAll(/^\| `([\w.-]+)\/` +\|/gm)].map(([, folder]) => folder));
    const ignored = new Set(
      read('.gitignore')
        .split(/\r?\n/)
        .map((line) => /^\/?([\w.-]+)\/$/.exec(line.trim())?.[1])
        .filter((name): name is string => name !== undefined),
    );
    const folders = readdirSync(ROOT).filter(
      (name) => !name.startsWith('.') && !ignored.has(name) && statSync(path.join(ROOT, name)).isDirectory(),
    );
    for (const folder of folders) assert.ok(named.has(folder), `the folder table does not name ${folder}/`);
  });
});

describe('documentation pages', () => {
  it('link only to files that exist, and to headings that exist', () => {
    for (const file of PAGES) {
      for (const target of linkTargets(file).filter(isRelative)) {
        const [relative, anchor] = target.split('#');
        const linked = relative === '' ? file : path.normalize(path.join(path.dirname(file), relative));
        assert.ok(
          !linked.startsWith('..') && existsSync(path.join(ROOT, linked)),
          `${file} links ${target}, but ${linked} does not exist`,
        );
        if (anchor !== undefined && linked.endsWith('.md')) {
          assert.ok(
            anchors(linked).has(anchor),
            `${file} links ${target}, but ${linked} has no such heading`,
          );
        }
      }
    }
  });

  it('name only npm scripts that exist', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    for (const file of PAGES) {
      for (const [, name] of read(file).matchAll(/npm run ([a-z:]+)/g)) {
        assert.ok(scripts[name], `${file}: npm run ${name}`);
      }
    }
  });
});

describe('docs/configuration.md', () => {
  it('documents every configuration variable the code reads, and no other', () => {
    const table = section('docs/configuration.md', 'Environment variables');
    const documented = [...table.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]);
    assert.deepEqual([...documented].sort(), CONFIG_VARIABLES.map((v) => v.name).sort());
  });
});
