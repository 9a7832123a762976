import type { CheckDefinition } from '../runner';
import { wholeList } from './collections';

/** Errors are problem documents everywhere, even where no operation matched. */
export const ERROR_CHECKS: CheckDefinition[] = [
  {
    id: 'ERR-001',
    title: 'An unknown path is a 404 problem',
    clause: 'Errors: every error answer is a JSON problem document with an IX-API error type.',
    operations: [],
    safety: 'read',
    async run(t) {
      const response = await t.send({
        method: 'GET',
        path: '/conformance-no-such-path',
        token: await t.token(),
      });
      t.must(response.status === 404, `answered ${response.status}, not 404`);
      const problems = t.suite.problemDocumentProblems(response);
      t.must(problems.length === 0, problems.join('; '));
    },
  },
  {
    id: 'ERR-002',
    title: 'A body that is not JSON is a 400 problem',
    clause: 'Errors: a request body that cannot be parsed answers 400 validation-error.',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.call('auth_token_create', {
        role: null,
        rawBody: '{"api_key": ',
        headers: { 'content-type': 'application/json' },
      });
      t.must(response.status === 400, `answered ${response.status}, not 400`);
    },
  },
  {
    id: 'ERR-003',
    title: 'A wrong method on a known path is a problem, not a bare error page',
    clause: 'Errors: clients decode every error body as a problem; 405 with Allow is the expected answer.',
    operations: ['api_implementation_read'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.send({ method: 'DELETE', path: '/implementation', token: await t.token() });
      t.must(response.status >= 400 && response.status < 500, `answered ${response.status}`);
      const problems = t.suite.problemDocumentProblems(response);
      t.must(problems.length === 0, problems.join('; '));
      t.should(response.status === 405, `answered ${response.status}; 405 says what happened`);
    },
  },
  {
    id: 'EXT-001',
    title: "GET /extensions lists the implementation's extensions",
    clause: 'Extensions: the list of extensions is readable and each entry matches the schema.',
    operations: ['api_extensions_list'],
    safety: 'read',
    async run(t) {
      await wholeList(t, 'api_extensions_list', { role: null });
    },
  },
];
