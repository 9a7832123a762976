import type { CancellationPolicy } from '../domain/cancellation';
import type { Scope } from '../domain/authority';
import { UnableToFulfillError, ValidationError } from '../domain/errors';
import type { State } from '../domain/states';
import type { cancellationPolicies } from './cancellation';
import { isPdf } from './loa-document';
import type { OperationDefinition } from './operations';
import type { WriteContext } from './writes';

/** What the caller needs of a resource: to change it (cancel it, upload its LOA) or to read it. */
export type Need = 'change' | 'read';

/**
 * The DELETE of a resource that goes by a cancellation policy, and the read of that policy: the
 * caller must be let through (`allow` throws otherwise), the policy decides the day, and the store
 * records the cancellation and answers the resource as it is now (202); the workflow messages that
 * carry it out go from the outbox once the cancellation has committed.
 */
export function cancellationOperations(spec: {
  destroy: string;
  policyRead: string;
  writes: WriteContext;
  policies: ReturnType<typeof cancellationPolicies>;
  allow: (id: string, scope: Scope, need: Need) => Promise<unknown>;
  /**
   * Records the cancellation on `policy`'s day (`body` is the DELETE's, for a policy of another
   * resource) and answers the resource as stored.
   */
  cancel: (id: string, policy: CancellationPolicy, body: unknown) => Promise<unknown>;
}): OperationDefinition[] {
  const { writes, policies } = spec;
  return [
    {
      operationId: spec.destroy,
      authenticated: true,
      async handle({ params, body, caller }) {
        await spec.allow(params.id, await writes.scope(caller), 'change');
        const policy = await policies.forCancellation(params.id, body);
        return { status: 202, body: await spec.cancel(params.id, policy, body) };
      },
    },
    {
      operationId: spec.policyRead,
      authenticated: true,
      async handle({ params, query, caller }) {
        await spec.allow(params.id, await writes.scope(caller), 'read');
        return { status: 200, body: await policies.forQuery(params.id, query.decommission_at) };
      },
    },
  ];
}

/**
 * The letter of authorisation of a resource cross-connected to the exchange's ports: its download
 * (the uploaded PDF, or one the exchange issues) and its upload (a PDF, while the resource still
 * takes one), which tells the resource's workflow (202).
 */
export function loaOperations<T extends { id: string; state: State }>(spec: {
  download: string;
  upload: string;
  writes: WriteContext;
  /** The resource, if the caller may read it (and change it, when `change`); throws otherwise. */
  load: (id: string, scope: Scope, need: Need) => Promise<T>;
  /** The resource in refusals: `connection`, `reservation`. */
  what: string;
  /** Whether the resource in `state` still takes an LOA. */
  takesLoa: (state: State) => boolean;
  uploaded: (id: string) => Promise<Buffer | null>;
  /** The exchange's own LOA for the resource, where none was uploaded. */
  issue: (resource: T) => Buffer;
  /** Keeps an uploaded LOA and answers the resource as stored. */
  store: (id: string, document: Buffer) => Promise<unknown>;
}): OperationDefinition[] {
  const { writes } = spec;
  return [
    {
      operationId: spec.download,
      authenticated: true,
      async handle({ params, caller }) {
        const resource = await spec.load(params.id, await writes.scope(caller), 'read');
        const document = (await spec.uploaded(params.id)) ?? spec.issue(resource);
        return {
          status: 200,
          body: document,
          contentType: 'application/pdf',
          headers: { 'Content-Disposition': `attachment; filename="loa-${resource.id}.pdf"` },
        };
      },
    },
    {
      operationId: spec.upload,
      authenticated: true,
      async handle({ params, body, caller }) {
        const resource = await spec.load(params.id, await writes.scope(caller), 'change');
        if (!spec.takesLoa(resource.state))
          throw new UnableToFulfillError(
            'state',
            `the ${spec.what} is ${resource.state}; it takes no LOA any more`,
          );
        if (!Buffer.isBuffer(body) || !isPdf(body))
          throw new ValidationError([{ name: 'body', reason: 'Send the LOA as a PDF document.' }]);
        return { status: 202, body: await spec.store(params.id, body) };
      },
    },
  ];
}
