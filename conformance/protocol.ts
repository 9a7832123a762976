/** Names of the IX-API protocol that the checks and the self-test's faults both speak of. */

/** The seven headers of a 206 page, lower-cased as HTTP clients see them. */
export const PAGINATION_HEADERS = [
  'x-pagination-limit',
  'x-pagination-offset',
  'x-pagination-items',
  'x-pagination-pages',
  'x-pagination-page',
  'x-pagination-token',
  'x-pagination-next',
] as const;

export const PAGING_PARAMETERS: ReadonlySet<string> = new Set(['page_limit', 'page_offset', 'page_token']);

/** Query parameters every collection takes that are not filters on its properties. */
export const COMMON_PARAMETERS: ReadonlySet<string> = new Set([...PAGING_PARAMETERS, 'id', 'fields']);
