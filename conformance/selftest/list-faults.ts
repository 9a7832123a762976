import { loadSpec, operationParameters, specOperations } from '../../spec';
import { COMMON_PARAMETERS, PAGING_PARAMETERS } from '../protocol';
import type { Fault } from './faults';
import {
  editQuery,
  editReadObjects,
  getHeader,
  idsAskedFor,
  isItem,
  isJsonType,
  isSuccess,
  listItems,
  pathnameOf,
  problemResponse,
  readJson,
  scalar,
  splitPath,
  withHeaders,
  withJson,
} from './messages';

/**
 * Faults of lists and their filters: items dropped, repeated or malformed, the wrong content type,
 * filters ignored or applied in part, bad filter values taken, unknown parameters refused.
 */

export function listFaults(): Fault[] {
  return [
    {
      id: 'list-drop-last-item',
      description: 'a 200 list leaves out its last item',
      response(res, req) {
        const items = listItems(res, req, [200]);
        return items?.length ? withJson(res, items.slice(0, -1)) : res;
      },
    },
    {
      id: 'list-duplicate-item',
      description: 'a 200 list holds its first item twice',
      response(res, req) {
        const items = listItems(res, req, [200]);
        return items?.length ? withJson(res, [items[0], ...items]) : res;
      },
    },
    {
      id: 'list-item-missing-id',
      description: 'list items lack the required id property',
      response(res, req) {
        const items = listItems(res, req);
        if (!items?.some((item) => isItem(item) && 'id' in item)) return res;
        return withJson(
          res,
          items.map((item) => {
            if (!isItem(item)) return item;
            const { id: _id, ...rest } = item;
            return rest;
          }),
        );
      },
    },
    {
      id: 'schema-integer-as-string',
      description: 'integer properties of resources are sent as strings',
      response: (res, req) =>
        editReadObjects(res, req, (item) => {
          const entries = Object.entries(item);
          if (!entries.some(([, value]) => Number.isInteger(value))) return undefined;
          return Object.fromEntries(
            entries.map(([key, value]) => [key, Number.isInteger(value) ? String(value) : value]),
          );
        }),
    },
    {
      id: 'content-type-text-plain',
      description: 'JSON success answers are labelled text/plain',
      response: (res) =>
        isSuccess(res) && res.body.length && isJsonType(getHeader(res, 'content-type'))
          ? withHeaders(res, { 'content-type': 'text/plain; charset=utf-8' })
          : res,
    },
  ];
}

export let knownParameters: Set<string> | undefined;

/** Every query parameter IX-API defines on any operation. */
function queryParameterNames(): Set<string> {
  if (!knownParameters) {
    const document = loadSpec();
    knownParameters = new Set(COMMON_PARAMETERS);
    for (const op of specOperations(document)) {
      for (const [parameter] of operationParameters(document, op.path, op.method, op.operation, 'query'))
        knownParameters.add(parameter.name);
    }
  }
  return knownParameters;
}

export function filterFaults(): Fault[] {
  return [
    {
      id: 'filter-ignore-id',
      description: 'the id filter is ignored',
      request: (req) => (req.method === 'GET' ? editQuery(req, (query) => query.delete('id')) : req),
    },
    {
      id: 'filter-id-first-only',
      description: 'an id filter naming several ids keeps only the first',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          const ids = idsAskedFor(query);
          if (ids.length > 1) query.set('id', ids[0]);
        });
      },
    },
    {
      id: 'filter-ignore-properties',
      description: 'filters on properties (state, name, external_ref, …) are ignored',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          for (const name of [...query.keys()]) if (!COMMON_PARAMETERS.has(name)) query.delete(name);
        });
      },
    },
    {
      id: 'filter-first-only',
      description: 'of several property filters only the first is applied',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          const filters = [...new Set(query.keys())].filter((name) => !COMMON_PARAMETERS.has(name));
          for (const name of filters.slice(1)) query.delete(name);
        });
      },
    },
    {
      id: 'filter-dropped-when-paging',
      description: 'property filters are ignored as soon as page_limit is given',
      request(req) {
        if (req.method !== 'GET') return req;
        return editQuery(req, (query) => {
          if (!query.has('page_limit')) return;
          for (const name of [...query.keys()]) if (!COMMON_PARAMETERS.has(name)) query.delete(name);
        });
      },
    },
    {
      id: 'fields-ignored',
      description: 'the fields projection is ignored: whole items come back',
      request: (req) => (req.method === 'GET' ? editQuery(req, (query) => query.delete('fields')) : req),
    },
    {
      id: 'filter-bad-value-accepted',
      description: 'a filter value the server refuses is silently dropped instead of answering 400',
      async response(res, req, forward) {
        if (req.method !== 'GET' || res.status !== 400) return res;
        const body = readJson(res);
        const properties = isItem(body) && Array.isArray(body.properties) ? body.properties : [];
        const { query } = splitPath(req.path);
        const refused = properties
          .map((property) => (isItem(property) ? (scalar(property.name) ?? '') : ''))
          .filter((name) => query.has(name) && !PAGING_PARAMETERS.has(name));
        if (!refused.length) return res;
        return forward(editQuery(req, (edited) => refused.forEach((name) => edited.delete(name))));
      },
    },
    {
      id: 'events-resource-ignored',
      description: "the event log's resource filter, announced in GET /extensions, is ignored",
      request: (req) =>
        req.method === 'GET' && pathnameOf(req).endsWith('/events')
          ? editQuery(req, (query) => query.delete('resource'))
          : req,
    },
    {
      id: 'query-unknown-parameter-rejected',
      description: 'a query parameter IX-API does not define is refused with 400 instead of ignored',
      request(req) {
        if (req.method !== 'GET') return req;
        const known = queryParameterNames();
        const unknown = [...new Set(splitPath(req.path).query.keys())].filter((name) => !known.has(name));
        if (!unknown.length) return req;
        return problemResponse(400, 'validation-error', 'The query names unknown parameters.', {
          properties: unknown.map((name) => ({ name, reason: 'Unknown query parameter.' })),
        });
      },
    },
  ];
}
