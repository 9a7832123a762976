import { loadSpec, specOperations } from '../../spec';
import type { Fault } from './faults';
import type { Item } from './messages';
import { isItem, readJson, targets, withJson } from './messages';

/**
 * Faults of discovery: /implementation declaring what does not answer or no schema version,
 * /health saying ok.
 */

/** Rewrites the JSON object a GET on `suffix` answers with 200. */
function editDocument(suffix: string, edit: (body: Item) => Item | undefined): Fault['response'] {
  return (res, req) => {
    if (!targets(req, 'GET', suffix) || res.status !== 200) return res;
    const body = readJson(res);
    const edited = isItem(body) ? edit(body) : undefined;
    return edited ? withJson(res, edited) : res;
  };
}

/** An operation to declare that the server does not route: a real one it lacks, else an unknown one. */
function undeclaredOperation(declared: ReadonlySet<string>): string {
  const missing = specOperations(loadSpec()).find(
    (op) => op.method === 'get' && !op.path.includes('{') && !declared.has(op.operationId),
  );
  return missing?.operationId ?? 'facility_statistics_list';
}

export function discoveryFaults(): Fault[] {
  return [
    {
      id: 'implementation-declares-unrouted',
      description: 'GET /implementation declares an operation the server does not route',
      response: editDocument('/implementation', (body) => {
        if (!Array.isArray(body.supported_operations)) return undefined;
        const declared = body.supported_operations.map(String);
        return { ...body, supported_operations: [...declared, undeclaredOperation(new Set(declared))] };
      }),
    },
    {
      id: 'implementation-missing-schema-version',
      description: 'GET /implementation does not say which schema version it implements',
      response: editDocument('/implementation', (body) => {
        if (!('schema_version' in body)) return undefined;
        const { schema_version: _version, ...rest } = body;
        return rest;
      }),
    },
    {
      id: 'health-status-ok',
      description: 'GET /health reports status "ok" instead of pass, warn or fail',
      response: editDocument('/health', (body) => ('status' in body ? { ...body, status: 'ok' } : undefined)),
    },
  ];
}
