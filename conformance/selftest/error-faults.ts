import { STATUS_CODES } from 'node:http';
import type { Fault } from './faults';
import type { Item, ProxiedRequest, ProxiedResponse } from './messages';
import {
  isItem,
  jsonResponse,
  listItems,
  pathnameOf,
  problemResponse,
  readJson,
  withBody,
  withJson,
} from './messages';

/**
 * Faults of refusals: problem documents without a type, with a foreign one or the wrong status,
 * 400s naming no properties, errors as HTML, invalid bodies and others' changes accepted.
 */

/** Rewrites the JSON object body of error answers. */
function editProblem(res: ProxiedResponse, edit: (problem: Item) => Item | undefined): ProxiedResponse {
  if (res.status < 400) return res;
  const body = readJson(res);
  if (!isItem(body)) return res;
  const edited = edit(body);
  return edited ? withJson(res, edited) : res;
}

/** A fault on the first collection listed through the proxy, and on everything below its path. */
function firstCollectionFault(
  id: string,
  description: string,
  methods: readonly string[] | 'all',
  answer: () => ProxiedResponse,
): Fault {
  let collection: string | undefined;
  const covers = (req: ProxiedRequest) => {
    if (collection === undefined || (methods !== 'all' && !methods.includes(req.method))) return false;
    const pathname = pathnameOf(req);
    return pathname === collection || pathname.startsWith(`${collection}/`);
  };
  return {
    id,
    description,
    reset: () => {
      collection = undefined;
    },
    request: (req) => (covers(req) ? answer() : req),
    response(res, req) {
      if (collection !== undefined || !listItems(res, req)) return res;
      collection = pathnameOf(req);
      return answer();
    },
  };
}

export function errorFaults(): Fault[] {
  return [
    {
      id: 'problem-missing-type',
      description: 'problem documents lack the type property',
      response: (res) =>
        editProblem(res, (problem) => {
          if (!('type' in problem)) return undefined;
          const { type: _type, ...rest } = problem;
          return rest;
        }),
    },
    {
      id: 'problem-foreign-type',
      description: 'problem types are URIs outside the IX-API error namespace',
      response: (res) =>
        editProblem(res, (problem) => {
          if (typeof problem.type !== 'string') return undefined;
          const name = /([a-z-]+)(?:\.html)?$/.exec(problem.type)?.[1] ?? 'error';
          return { ...problem, type: `https://problems.example.net/${name}` };
        }),
    },
    {
      id: 'problem-status-mismatch',
      description:
        'problem documents give another status than the HTTP one (500 for client errors, 400 for a 500)',
      response: (res) =>
        editProblem(res, (problem) => ({ ...problem, status: res.status === 500 ? 400 : 500 })),
    },
    {
      id: 'validation-missing-properties',
      description: '400 validation errors do not say which properties failed',
      response: (res) =>
        res.status !== 400
          ? res
          : editProblem(res, (problem) => {
              if (!('properties' in problem)) return undefined;
              const { properties: _properties, ...rest } = problem;
              return rest;
            }),
    },
    {
      id: 'error-as-html',
      description: 'errors are answered as an HTML page instead of a JSON problem',
      response(res) {
        if (res.status < 400) return res;
        const reason = STATUS_CODES[res.status] ?? 'Error';
        const page = `<!DOCTYPE html>\n<html><head><title>${res.status} ${reason}</title></head><body><h1>${reason}</h1></body></html>\n`;
        return withBody(res, Buffer.from(page), 'text/html; charset=utf-8');
      },
    },
    firstCollectionFault(
      'collection-500',
      'reading the first collection listed (and its items) fails with 500',
      ['GET'],
      () => problemResponse(500, 'server-error', 'The server failed to answer.'),
    ),
    firstCollectionFault(
      'collection-404',
      'the first collection listed is not routed: every request below its path answers 404',
      'all',
      () => problemResponse(404, 'not-found', 'No operation matches this path.'),
    ),
    {
      id: 'accept-invalid-body',
      description: 'a POST the server refuses with 400 is answered 201 with the request body echoed',
      response(res, req) {
        if (req.method !== 'POST' || res.status !== 400) return res;
        const echoed = req.body.length ? req.body : Buffer.from('{}');
        return withBody({ status: 201, headers: {}, body: echoed }, echoed, 'application/json');
      },
    },
    (() => {
      const collections = new Set<string>();
      return {
        id: 'read-not-found-as-null',
        description: 'reading an unknown id of a listed collection answers 200 with null instead of 404',
        reset: () => collections.clear(),
        response(res, req) {
          if (listItems(res, req)) collections.add(pathnameOf(req));
          const pathname = pathnameOf(req);
          const parent = pathname.slice(0, pathname.lastIndexOf('/'));
          if (req.method !== 'GET' || res.status !== 404 || !collections.has(parent)) return res;
          return jsonResponse(200, null);
        },
      } satisfies Fault;
    })(),
    {
      id: 'foreign-change-accepted',
      description: 'a change the caller is not allowed to make answers 202 instead of 403',
      response: (res, req) =>
        ['PUT', 'PATCH', 'DELETE'].includes(req.method) && res.status === 403 ? jsonResponse(202, {}) : res,
    },
    {
      id: 'mutation-of-unknown-200',
      description: 'PUT, PATCH and DELETE of a resource that does not exist answer 200 instead of 404',
      response: (res, req) =>
        ['PUT', 'PATCH', 'DELETE'].includes(req.method) && res.status === 404 ? jsonResponse(200, {}) : res,
    },
  ];
}
