import assert from 'node:assert/strict';
import { environmentOf, rawCompose, read, references } from '../support/compose';

/** docs/deployment.md against docker-compose.yml: every service and setting of the file is documented. */

describe('deployment: docs/deployment.md', () => {
  it('documents every service and every setting of docker-compose.yml', () => {
    const docs = read('docs/deployment.md');
    const file = rawCompose();
    const documented = (name: string): boolean => docs.includes(`\`${name}\``);
    for (const name of Object.keys(file.services)) {
      assert.ok(documented(name), `service ${name} is not documented`);
    }
    const settings = new Set<string>(
      Object.values(file.services).flatMap((service) => Object.keys(environmentOf(service))),
    );
    for (const [, braced, , , bare] of references()) {
      const name = braced ?? bare;
      if (name) settings.add(name);
    }
    for (const name of Object.keys(file.secrets ?? {})) settings.add(name);
    for (const name of settings) {
      assert.ok(documented(name), `setting ${name} is not documented`);
    }
  });
});
