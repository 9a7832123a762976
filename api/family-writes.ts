import type { Access, Scope } from '../domain/authority';
import { requireActingAccount, requireChange } from '../domain/authority';
import type { PropertyError } from '../domain/errors';
import { ValidationError } from '../domain/errors';
import type { FamilyDeps, ResourceFamily } from './families';
import { statusesOf, writableDefaults } from './families';
import type { OperationDefinition } from './operations';
import { merged, replacement } from './writes';

/**
 * What a store answers for a write: the resource as committed. The workflow messages the write
 * decided are in the outbox, which sends them once the write has committed.
 */
export interface Stored {
  resource: unknown;
}

/** What a family's own rule is told about a write. */
export interface RuleContext<Current> {
  scope: Scope;
  now: Date;
  /** The resource as it is, for a change. */
  current?: Current;
}

/**
 * The writes of a family whose create, update, partial update and destroy follow one pattern: the
 * body is filled in with the document's defaults (a PUT replaces, a PATCH merges into what is
 * stored), the references to accounts must name accounts the caller acts for, the family's own rule
 * judges the result, and the store writes it under the family's authority rule. Which of the four a
 * family has follows from the store functions it gives.
 *
 * `Found` is what the store finds of a resource for the authority rule (the resource, and for a
 * joining rule its service); its first element is the resource.
 */
export interface GeneratedWrites<
  Input extends Record<string, unknown>,
  Found extends [object, ...unknown[]],
> {
  /** Who may do what with a resource, from what the store found of it. */
  access(scope: Scope, ...found: Found): Access;
  /**
   * References to accounts the caller must act for (managing, consuming); a function when they
   * depend on the resource (an address the exchange allocated keeps its accounts as they are).
   */
  references: readonly (keyof Input & string)[] | ((current: Found[0] | undefined) => readonly string[]);
  /** Shapes an input once filled in (a deny rule has no capacities). */
  shape?(input: Input): Input;
  /**
   * The family's own check of a change's body against the stored resource, for a body whose schema
   * depends on the stored resource: the generated update then leaves validation to it.
   */
  given?(operationId: string, body: unknown, current: Found[0]): void;
  /** What a change keeps of the stored resource whatever the body says. */
  keep?(current: Found[0]): Partial<Input>;
  /** The family's own rule: what is wrong with a new or changed resource, by property. */
  problems?(input: Input, context: RuleContext<Found[0]>): PropertyError[] | Promise<PropertyError[]>;
  create?: (input: Input) => Promise<Stored>;
  /**
   * Changes a resource: finds it (under its row lock, where the store takes the decision inside
   * its transaction), lets `decide` check the caller and the change and answer what to store, and
   * stores it; `allow` checks the caller again where the store locks the row only when it writes.
   */
  change?: (
    id: string,
    decide: (...found: Partial<Found>) => Promise<Input>,
    allow: (...found: Found) => void,
  ) => Promise<Stored>;
  /** Removes a resource once `allow` accepts the caller. */
  destroy?: (id: string, allow: (...found: Found) => void) => Promise<Stored>;
}

const prefixOf = (family: Pick<ResourceFamily, 'name'>) => family.name.replace(/-/g, '_');

/**
 * The create, update, partial update and destroy of a family, generated from its descriptor: the
 * operation ids follow from its name (`macs_create`), the writable properties and their defaults
 * from the document's request schemas, the answers from whether it is asynchronous.
 */
export function generatedWrites<Input extends Record<string, unknown>, Found extends [object, ...unknown[]]>(
  family: Pick<ResourceFamily, 'name' | 'asynchronous' | 'changeStatus'>,
  deps: FamilyDeps,
  spec: GeneratedWrites<Input, Found>,
): OperationDefinition[] {
  const { document, validators, writes } = deps;
  const prefix = prefixOf(family);
  const statuses = statusesOf(family);
  const now = () => (deps.clock ?? (() => new Date()))();
  const defaults = writableDefaults<Input>(document, `${prefix}_create`);
  const shape = (input: Input) => (spec.shape ? spec.shape(input) : input);
  const allowed =
    (scope: Scope, id: string) =>
    (...found: Found) =>
      requireChange(spec.access(scope, ...found), `${family.name} with id ${id}`);

  async function check(scope: Scope, input: Input, current?: Found[0]) {
    const references = typeof spec.references === 'function' ? spec.references(current) : spec.references;
    for (const property of references) requireActingAccount(scope, property, input[property]);
    const problems = (await spec.problems?.(input, { scope, now: now(), current })) ?? [];
    if (problems.length) throw new ValidationError(problems);
  }

  async function answer(stored: Promise<Stored>, status: number) {
    const { resource } = await stored;
    return { status, body: resource };
  }

  const operations: OperationDefinition[] = [];
  const { create, change, destroy } = spec;
  if (create)
    operations.push({
      operationId: `${prefix}_create`,
      authenticated: true,
      async handle({ body, caller }) {
        const scope = await writes.scope(caller);
        const input = shape(replacement(body, defaults));
        await check(scope, input);
        return answer(create(input), 201);
      },
    });
  if (change)
    for (const partial of [false, true]) {
      const operationId = `${prefix}_${partial ? 'partial_update' : 'update'}`;
      operations.push({
        operationId,
        authenticated: true,
        validatesBody: spec.given !== undefined,
        async handle({ params, body, caller }) {
          const scope = await writes.scope(caller);
          const allow = allowed(scope, params.id);
          const decide = async (...found: Partial<Found>) => {
            const current = found[0];
            requireChange(
              current ? spec.access(scope, ...(found as Found)) : 'none',
              `${family.name} with id ${params.id}`,
            );
            spec.given?.(operationId, body, current!);
            const filled = partial ? merged(merged(defaults, current!), body) : replacement(body, defaults);
            const next = shape({ ...filled, ...spec.keep?.(current!) });
            if (!spec.given) validators.body(`${prefix}_update`, next);
            await check(scope, next, current);
            return next;
          };
          return answer(change(params.id, decide, allow), statuses.change);
        },
      });
    }
  if (destroy)
    operations.push({
      operationId: `${prefix}_destroy`,
      authenticated: true,
      async handle({ params, caller }) {
        const scope = await writes.scope(caller);
        return answer(destroy(params.id, allowed(scope, params.id)), statuses.destroy);
      },
    });
  return operations;
}
