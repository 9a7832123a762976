import type { Finding } from './campaign';

/**
 * Findings whose fix lies outside what this campaign's change may touch, each with where it lies.
 * The campaign reports them apart instead of failing on them; NEGATIVE_STRICT=1 fails on them too.
 * Once a fix lands, delete its entry: the campaign then asserts it (and says when an entry matched
 * nothing in a run, which is the hint that it may go).
 */
export interface KnownFinding {
  what: string;
  /** Where the fix lies. */
  fix: string;
  matches: (finding: Finding) => boolean;
}

const header = (finding: Finding, name: string) =>
  finding.request.headers.find(([key]) => key.toLowerCase() === name)?.[1];

const undecodable = (path: string) =>
  path
    .split('?')[0]
    .split('/')
    .some((segment) => {
      try {
        decodeURIComponent(segment);
        return false;
      } catch {
        return true;
      }
    });

/** How deep a JSON text nests (brackets outside strings). */
function nesting(body: Buffer | undefined): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  const text = body?.toString('utf8') ?? '';
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '[' || char === '{') deepest = Math.max(deepest, ++depth);
    else if (char === ']' || char === '}') depth -= 1;
  }
  return deepest;
}

const lenience = (prefix: string) => (finding: Finding) =>
  finding.kind === 'document lenience' && finding.detail.startsWith(prefix);

export const KNOWN_ELSEWHERE: readonly KnownFinding[] = [
  {
    what: 'a body in a content coding it is not in (Content-Encoding: gzip or deflate over plain bytes) is a 500',
    fix: 'api/problems.ts: errors of the body parser that carry a 4xx status but no known type (zlib errors) answered as that status',
    matches: (finding) =>
      finding.kind === 'server error' &&
      !['identity', undefined].includes(header(finding, 'content-encoding')?.toLowerCase()),
  },
  {
    what: 'a path segment that is not valid percent-encoding (%zz, %, %C0%AE) is a 500',
    fix: "api/problems.ts or api/app.ts: the router's URIError (status 400) answered as a 404 or 400 problem",
    matches: (finding) => finding.kind === 'server error' && undecodable(finding.request.path),
  },
  {
    what: 'a body nesting thousands deep with an Idempotency-Key overflows the stack before the handler runs: 500 (in a property the schema leaves open, or as the whole body of a change whose handler validates it)',
    fix: 'api/idempotency.ts: canonical() recursion (a depth bound, or an iterative walk) before the fingerprint',
    matches: (finding) =>
      finding.kind === 'server error' &&
      header(finding, 'idempotency-key') !== undefined &&
      nesting(finding.request.body) > 1_000,
  },
  {
    what: 'a GET with If-None-Match: * is answered 304, a status the document does not give any operation',
    fix: "api/operations.ts: Express's freshness check on res.json (no ETags are sent, so nothing can match)",
    matches: (finding) =>
      finding.kind === 'contract' && finding.status === 304 && header(finding, 'if-none-match') !== undefined,
  },
  {
    what: 'the document takes strings without a bound',
    fix: 'spec/openapi.yaml and api/request-validation.ts, api/query-parameters.ts: the bounds change',
    matches: lenience('a string without a bound'),
  },
  {
    what: 'the document takes arrays without a bound',
    fix: 'spec/openapi.yaml and api/request-validation.ts, api/query-parameters.ts: the bounds change',
    matches: lenience('an array without a bound'),
  },
  {
    what: 'the document takes integers beyond the safe range (JSON.parse rounds them)',
    fix: 'spec/openapi.yaml and api/request-validation.ts, api/query-parameters.ts: the bounds change',
    matches: lenience('an integer beyond the safe range'),
  },
  {
    what: 'the document takes control and bidirectional-override characters in body strings',
    fix: 'spec/openapi.yaml and api/request-validation.ts: the bounds change',
    matches: lenience('control characters in a string'),
  },
];

/** The entry a finding is known as, unless NEGATIVE_STRICT=1; a write let through never is. */
export function knownAs(finding: Finding): KnownFinding | undefined {
  if (process.env.NEGATIVE_STRICT === '1' || finding.kind === 'write accepted') return undefined;
  return KNOWN_ELSEWHERE.find((known) => known.matches(finding));
}
