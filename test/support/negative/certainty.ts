import type { ValidateFunction } from 'ajv';
import type Ajv from 'ajv';
import { DOCUMENT_ID } from '../../../spec/ajv';
import { pointer } from '../../../spec';
import { ACCOUNT_IDENTITIES } from '../matrix';
import type { AccountIdentity } from '../matrix';
import { bodyLenience } from './lenience';
import type { CampaignOperation } from './operations';
import { routedOperation } from './operations';
import type { SchemaReader } from './schema-values';
import type { CampaignWorld } from './targets';
import type { WireRequest } from './wire';

/**
 * Why a write is certain to be refused, judged from the request alone by the rules the document and
 * the README state (not by what the server answered). A write the campaign sends must have at least
 * one reason; the server accepting it is then a finding, never a matter of luck.
 */
export interface Judge {
  judge(request: WireRequest): Judgement;
}

export interface Judgement {
  /** Why the request is certain to be refused (only for writes); empty when nothing makes it so. */
  reasons: string[];
  /** What the document took in the body that it should not (see lenience.ts). */
  lenience: string[];
}

/** The largest JSON body the server reads from an authenticated caller (1 MiB). */
const BODY_LIMIT = 1024 * 1024;
/** An Idempotency-Key: 1 to 255 visible ASCII characters, possibly in quotes. */
const KEY = /^[\x21-\x7e]{1,255}$/;
const PARTIES = ['managing_account', 'consuming_account', 'billing_account'];
/** The accounts a create names that the caller must act for, by operation (see api/routes). */
const ACCOUNT_REFERENCES: Record<string, string[]> = {
  accounts_create: ['managing_account'],
  contacts_create: ['managing_account', 'consuming_account'],
  ips_create: ['managing_account', 'consuming_account'],
  macs_create: ['managing_account', 'consuming_account'],
  member_joining_rules_create: ['managing_account'],
  connections_create: PARTIES,
  network_services_create: PARTIES,
  network_service_configs_create: PARTIES,
  network_feature_configs_create: PARTIES,
};
/** Creates whose body names a resource the caller must be able to change. */
const RESOURCE_REFERENCES: Record<string, string> = {
  role_assignments_create: 'contact',
  port_reservations_create: 'connection',
};

/**
 * Writes whose body must name an existing resource of a family: an order cannot be made of (or
 * changed to) an offering, service, connection, config, feature, contact or role that does not
 * exist (a 400 naming the property). What else such a body holds then reaches the handler's rules
 * and repositories.
 */
const EXISTING_REFERENCES: Record<string, Record<string, string>> = {
  connections_create: { product_offering: 'product-offerings' },
  network_services_create: { product_offering: 'product-offerings' },
  network_service_configs_create: { network_service: 'network-services', connection: 'connections' },
  network_feature_configs_create: {
    network_service_config: 'network-service-configs',
    network_feature: 'network-features',
  },
  member_joining_rules_create: { network_service: 'network-services' },
  role_assignments_create: { contact: 'contacts', role: 'roles' },
  port_reservations_create: { connection: 'connections' },
  // A change to an offering that does not exist is refused the same way.
  connections_update: { product_offering: 'product-offerings' },
  connections_partial_update: { product_offering: 'product-offerings' },
  network_services_update: { product_offering: 'product-offerings' },
  network_services_partial_update: { product_offering: 'product-offerings' },
};

const header = (request: WireRequest, name: string) =>
  request.headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What the server makes of the body: not read, refused while reading, or the value it parsed. */
type Body =
  { read: false } | { read: 'unknown' } | { read: true; refused: string } | { read: true; value: unknown };

function bodyAsRead(request: WireRequest, op: CampaignOperation): Body {
  const length = request.body?.length ?? 0;
  const sent = request.body !== undefined || ['POST', 'PUT', 'PATCH'].includes(request.method);
  const contentType = header(request, 'Content-Type') ?? '';
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  if (length > 0 && op.mediaTypes.length && !op.mediaTypes.includes(mediaType))
    return {
      read: true,
      refused: `a media type the operation does not take: "${mediaType}"`,
    };
  const json = mediaType === 'application/json' || /^application\/[\w.-]+\+json$/.test(mediaType);
  const plain =
    !/charset=(?!utf-8\s*$)/i.test(contentType) &&
    (header(request, 'Content-Encoding') ?? 'identity') === 'identity';
  if (!sent || !json || !op.bodySchema) return { read: false };
  // Another charset or a content coding: what the parser makes of it is not for this judge to say.
  if (!plain) return { read: 'unknown' };
  if (length > BODY_LIMIT) return { read: true, refused: `a body over the size limit: ${length} bytes` };
  const text = (request.body ?? Buffer.alloc(0)).toString('utf8').replace(/^\uFEFF/, '');
  if (text === '') return { read: true, value: {} };
  try {
    return { read: true, value: JSON.parse(text) as unknown };
  } catch {
    return { read: true, refused: 'a body that is not JSON' };
  }
}

export function createJudge(
  ajv: Ajv,
  reader: SchemaReader,
  operations: readonly CampaignOperation[],
  campaign: CampaignWorld,
): Judge {
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (op: CampaignOperation) => {
    let validate = validators.get(op.operationId);
    if (!validate) {
      const mediaType = op.mediaTypes.find((type) => type.includes('json'))!;
      const at = pointer(
        'paths',
        op.path,
        op.method.toLowerCase(),
        'requestBody',
        'content',
        mediaType,
        'schema',
      );
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${at}` });
      validators.set(op.operationId, validate);
    }
    return validate;
  };
  const pathValidators = new Map<string, ValidateFunction>();
  const pathValidatorOf = (op: CampaignOperation) => {
    let validate = pathValidators.get(op.operationId);
    if (!validate) {
      validate = ajv.compile(op.pathParameter ?? {});
      pathValidators.set(op.operationId, validate);
    }
    return validate;
  };

  function identityReasons(
    request: WireRequest,
    op: CampaignOperation,
    id: string | undefined,
    body: Body,
  ): string[] {
    if (!op.authenticated) return [];
    if (!(ACCOUNT_IDENTITIES as readonly string[]).includes(request.identity))
      return [`no valid token: ${request.identity}`];
    const identity = request.identity as AccountIdentity;
    const reasons: string[] = [];
    if (id !== undefined) {
      const target = campaign.targets.find(
        (candidate) => candidate.family === op.family && candidate.id === id,
      );
      if (target && !target.changers.has(identity))
        reasons.push(`an identity that may not change the resource: ${identity}, ${op.family}/${id}`);
    }
    if (op.method === 'POST' && id === undefined && 'value' in body && isPlainObject(body.value)) {
      const given = body.value;
      for (const property of ACCOUNT_REFERENCES[op.operationId] ?? [])
        if (typeof given[property] === 'string' && !campaign.actsFor[identity].has(given[property]))
          reasons.push(`a reference to an account the caller does not act for: ${property}`);
      const reference = RESOURCE_REFERENCES[op.operationId];
      const manager =
        reference && typeof given[reference] === 'string'
          ? campaign.managerOf.get(given[reference])
          : undefined;
      if (manager && !campaign.actsFor[identity].has(manager))
        reasons.push(`a reference to a resource the caller may not change: ${reference}`);
    }
    return reasons;
  }

  /** A write naming something that does not exist, whoever sends it. */
  function referenceReasons(op: CampaignOperation, body: Body): string[] {
    const references = EXISTING_REFERENCES[op.operationId];
    if (!references || !('value' in body) || !isPlainObject(body.value)) return [];
    const given = body.value;
    return Object.entries(references)
      .filter(
        ([property, family]) =>
          typeof given[property] === 'string' && !campaign.existing.get(family)?.has(given[property]),
      )
      .map(([property]) => `a reference to nothing: ${property}`);
  }

  function bodyReasons(
    request: WireRequest,
    op: CampaignOperation,
    body: Body,
    type: string | undefined,
  ): Judgement {
    const refused = (reason: string): Judgement => ({ reasons: [reason], lenience: [] });
    const none: Judgement = { reasons: [], lenience: [] };
    if ('refused' in body) return refused(body.refused);
    if (op.mediaTypes.length && !op.bodySchema) {
      const bytes = request.body ?? Buffer.alloc(0);
      const pdf = bytes.length > 5 && bytes.subarray(0, 5).toString('latin1') === '%PDF-';
      return pdf ? none : refused('a letter of authorisation that is not a PDF');
    }
    if (body.read === 'unknown') return none;
    if (!op.bodySchema || !body.read)
      return op.bodyRequired && op.bodySchema ? refused('no JSON body where one is required') : none;
    const value = body.value;
    if (value === null || value === undefined)
      return op.bodyRequired ? refused('no JSON body where one is required') : none;
    let judged = value;
    if (op.typedUpdate) {
      if (!isPlainObject(value)) return refused('a body that is not an object');
      // The server takes a left-out type from the stored resource; without knowing it, no judgement.
      if (value.type === undefined && !type) return none;
      judged = value.type === undefined ? { type, ...value } : value;
    }
    const validate = validatorOf(op);
    if (!validate(judged))
      return refused(`a body against the document: ${ajv.errorsText(validate.errors).slice(0, 160)}`);
    return { reasons: [], lenience: bodyLenience(reader, op.bodySchema, judged) };
  }

  return {
    judge(request) {
      const route = request.path.split('?')[0];
      const op = routedOperation(operations, request.method, route);
      if (!op)
        return {
          reasons:
            request.method === 'GET' || request.method === 'OPTIONS'
              ? []
              : ['no write operation at this method and path'],
          lenience: [],
        };
      if (!op.write) return { reasons: [], lenience: [] };
      if (!op.authenticated) return { reasons: ['credentials the server never issued'], lenience: [] };
      const reasons: string[] = [];
      let id: string | undefined;
      if (op.pathParameter) {
        const segment = route.split('/')[op.path.split('/').indexOf('{id}')];
        try {
          id = decodeURIComponent(segment);
        } catch {
          id = undefined;
        }
        if (id !== undefined && !pathValidatorOf(op)(id)) reasons.push('an id the path does not take');
        else if (id !== undefined && !campaign.existing.get(op.family)?.has(id))
          reasons.push(`an id that names nothing: ${op.family}`);
      }
      const key = header(request, 'Idempotency-Key');
      if (key !== undefined) {
        const trimmed = key.trim();
        if (!KEY.test(/^"[^"]*"$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed))
          reasons.push('a malformed Idempotency-Key');
      }
      const body = bodyAsRead(request, op);
      const type = campaign.targets.find((target) => target.family === op.family && target.id === id)?.type;
      const judged = bodyReasons(request, op, body, type);
      reasons.push(
        ...identityReasons(request, op, id, body),
        ...referenceReasons(op, body),
        ...judged.reasons,
      );
      return { reasons, lenience: judged.lenience };
    },
  };
}
