import assert from 'node:assert/strict';
import { CONFIG_VARIABLES } from '../../config/config';
import { isPinned, read } from '../support/compose';

/** Static checks of the Dockerfile and .dockerignore: Docker is not needed. */

describe('deployment: Dockerfile', () => {
  let dockerfile = '';
  /** Instructions with line continuations joined and comments dropped. */
  let instructions: string[] = [];
  /** The instructions of the final (runtime) stage. */
  let lastStage: string[] = [];

  before(() => {
    dockerfile = read('Dockerfile');
    instructions = dockerfile
      .replace(/\\\r?\n/g, ' ')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    lastStage = instructions.slice(instructions.map((line) => /^FROM\s/i.test(line)).lastIndexOf(true));
  });

  it('builds from pinned base images', () => {
    const stages = new Set<string>();
    const froms = instructions.filter((line) => /^FROM\s/i.test(line));
    assert.ok(froms.length >= 2, 'expected a multi-stage build');
    for (const line of froms) {
      const match = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
      assert.ok(match, `unexpected FROM line: ${line}`);
      const [, image, alias] = match;
      if (!stages.has(image)) assert.ok(isPinned(image), `unpinned base image: ${image}`);
      if (alias) stages.add(alias);
    }
  });

  it('runs as a non-root user', () => {
    const users = lastStage.filter((line) => /^USER\s/i.test(line));
    assert.ok(users.length > 0, 'the final stage sets no USER');
    const user = users[users.length - 1].split(/\s+/)[1];
    assert.ok(!/^(root|0)(:|$)/.test(user), `the final stage runs as ${user}`);
  });

  it("builds dist/ with the project's build command, which the tests run too", () => {
    // `npm run build` also places the OpenAPI document beside the compiled spec module; the
    // integration tests start the API and the worker from what it emits.
    assert.ok(
      instructions.some((line) => /^RUN\s+npm run build\b/.test(line)),
      'the image is not built with npm run build',
    );
  });

  it('ships production dependencies only and runs the API by default', () => {
    assert.match(dockerfile, /npm (?:prune|ci) [^\n]*--omit=dev/);
    assert.ok(lastStage.includes('ENV NODE_ENV=production'), 'NODE_ENV=production is not set');
    const port = CONFIG_VARIABLES.find((variable) => variable.name === 'PORT')?.default;
    assert.ok(lastStage.includes(`EXPOSE ${port}`), `the API port ${port} is not exposed`);
    assert.ok(lastStage.includes('CMD ["node", "dist/api/main.js"]'), 'the default command is not the API');
  });

  it('checks the health of the API', () => {
    const check = lastStage.find((line) => /^HEALTHCHECK\s/i.test(line));
    assert.ok(check, 'no HEALTHCHECK');
    assert.match(check, /\/api\/v2\/health/);
  });

  it('keeps local state and build output out of the build context', () => {
    const ignored = read('.dockerignore')
      .split(/\r?\n/)
      .map((line) => line.trim());
    for (const entry of ['node_modules', 'dist', '.data', '.git', '.env', 'secrets']) {
      assert.ok(ignored.includes(entry), `.dockerignore does not exclude ${entry}`);
    }
  });
});
