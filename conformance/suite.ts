import type { Revision } from './revisions';
import { olderRevision, revisionFor } from './revisions';
import type Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import { decodeJwt } from 'jose';
import type { OpenApiDocument, OpenApiOperation } from '../spec';
import { pointer, specOperations } from '../spec';
import { DOCUMENT_ID, compileRef, ajvOf } from '../spec/ajv';
import type { HttpRequest, HttpResponse } from './http';
import { HttpClient } from './http';
import { Ledger } from './ledger';
import type { Profile, RecordedExchange } from './model';
import type { RetryPolicy } from './throttling';

/** The accounts the suite acts as. `secondary` must be unrelated to `primary`. */
export interface Credentials {
  primary: { api_key: string; api_secret: string };
  secondary?: { api_key: string; api_secret: string };
  /** An account the primary one manages, if the server has resellers. */
  subaccount?: { api_key: string; api_secret: string };
}

export type Role = keyof Credentials;

export interface Session {
  accessToken: string;
  refreshToken: string;
  accountId: string | undefined;
}

export interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
  operation: OpenApiOperation;
}

/** How long the suite waits for what the exchange does asynchronously, in milliseconds. */
export interface Waits {
  /** Provisioning: an order reaching production, before a check goes on without it. */
  provisioning: number;
  /** A change or a cancellation showing. */
  settling: number;
}

export const DEFAULT_WAITS: Waits = { provisioning: 20_000, settling: 10_000 };

/** Raised inside a check to end it with an outcome other than pass or fail. */
export class Verdict extends Error {
  constructor(
    readonly outcome: 'NOT_APPLICABLE' | 'INCONCLUSIVE',
    reason: string,
    /** For INCONCLUSIVE: what the exchange would need to hold for the check to judge. */
    readonly lacking?: string,
  ) {
    super(reason);
  }
}

/**
 * What every check shares during one run: the server, its declarations, the document and the
 * sessions of the configured accounts (logged in once, on first use).
 */
export class Suite {
  readonly http: HttpClient;
  ajv: Ajv;
  readonly operations: Map<string, SpecOperation>;
  /** Properties the judged revision marks sensitive. */
  sensitive: ReadonlySet<string>;
  declared: ReadonlySet<string> = new Set();
  schemaVersion: string | null = null;
  /** The schema revision responses are judged by, chosen from the claimed schema version. */
  revision: Revision = { name: '2.6.0' };
  private judgedDocument: OpenApiDocument;
  implementation: Record<string, unknown> | undefined;
  readonly warnings: string[] = [];
  readonly ledger: Ledger;
  readonly waits: Waits;
  /** Answers worth sharing between checks (whole collections, by operation and role). */
  readonly memo = new Map<string, Promise<unknown>>();
  private readonly sessions = new Map<Role, Promise<Session>>();

  constructor(
    readonly options: {
      baseUrl: string;
      credentials: Credentials;
      profile: Profile;
      document: OpenApiDocument;
      /** Where a mutating run writes down what it creates. */
      ledgerFile?: string;
      /** How the server's 429s are waited out. */
      retry?: Partial<RetryPolicy>;
      /** How long the suite waits for the exchange (default: `DEFAULT_WAITS`). */
      waits?: Partial<Waits>;
    },
  ) {
    this.waits = { ...DEFAULT_WAITS, ...options.waits };
    this.ledger = new Ledger(options.ledgerFile);
    this.ajv = ajvOf(options.document);
    this.operations = new Map(
      specOperations(options.document).map((op) => [
        op.operationId,
        { ...op, method: op.method.toUpperCase() },
      ]),
    );
    this.sensitive = sensitivePropertiesOf(options.document);
    // Evidence stays redacted by the current revision's marks whatever revision is judged.
    this.http = new HttpClient(options.baseUrl, this.sensitive, { retry: options.retry });
    this.judgedDocument = options.document;
  }

  /** The document of the revision being judged. */
  get document(): OpenApiDocument {
    return this.judgedDocument;
  }

  /** Judges responses by `revision` from now on. */
  useRevision(revision: Revision): void {
    this.revision = revision;
    if (revision.note) this.warnings.push(revision.note);
    this.judgedDocument =
      revision.name === 'older' ? olderRevision(this.options.document) : this.options.document;
    this.ajv = ajvOf(this.judgedDocument);
    this.sensitive = sensitivePropertiesOf(this.judgedDocument);
  }

  /** Reads what the server declares about itself; called once before the checks. */
  async discover(): Promise<void> {
    try {
      const response = await this.http.send({ method: 'GET', path: '/implementation' });
      if (response.status === 200 && typeof response.body === 'object' && response.body !== null) {
        this.implementation = response.body as Record<string, unknown>;
        const operations = this.implementation.supported_operations;
        this.declared = new Set(Array.isArray(operations) ? operations.map(String) : []);
        this.schemaVersion =
          typeof this.implementation.schema_version === 'string' ? this.implementation.schema_version : null;
        this.useRevision(revisionFor(this.schemaVersion));
      } else {
        this.warnings.push(
          `GET /implementation answered ${response.status}; no operation counts as declared`,
        );
      }
    } catch (error) {
      this.warnings.push(
        `GET /implementation failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  operation(operationId: string): SpecOperation {
    const op = this.operations.get(operationId);
    if (!op) throw new Error(`operation ${operationId} is not in the document`);
    return op;
  }

  isDeclared(operationId: string): boolean {
    return this.declared.has(operationId);
  }

  hasCredentials(role: Role): boolean {
    return this.options.credentials[role] !== undefined;
  }

  /** Logs in as `role` once per run. */
  session(role: Role, record?: (exchange: RecordedExchange) => void): Promise<Session> {
    let session = this.sessions.get(role);
    if (!session) {
      session = this.login(role, record);
      this.sessions.set(role, session);
      session.catch(() => this.sessions.delete(role));
    }
    return session;
  }

  async login(role: Role, record?: (exchange: RecordedExchange) => void): Promise<Session> {
    const credentials = this.options.credentials[role];
    if (!credentials)
      throw new Verdict('NOT_APPLICABLE', `no credentials for the ${role} account were given`);
    const response = await this.http.send({ method: 'POST', path: '/auth/token', body: credentials }, record);
    const body = response.body as { access_token?: string; refresh_token?: string } | undefined;
    if (response.status !== 201 || !body?.access_token || !body.refresh_token) {
      throw new Verdict(
        'INCONCLUSIVE',
        `logging in as the ${role} account answered ${response.status}; nothing that needs it could be judged`,
      );
    }
    let accountId: string | undefined;
    try {
      accountId = decodeJwt(body.access_token).sub;
    } catch {
      accountId = undefined;
    }
    return { accessToken: body.access_token, refreshToken: body.refresh_token, accountId };
  }

  /**
   * Validates a response against the document: the status must be one the operation documents and
   * the body must match the schema documented for it. Returns what is wrong, or an empty list.
   */
  contractProblems(operationId: string, response: HttpResponse): string[] {
    const op = this.operation(operationId);
    const status = String(response.status);
    let declared = op.operation.responses[status] as
      { $ref?: string; content?: Record<string, unknown> } | undefined;
    if (!declared) {
      return [`${response.status} is not a documented status of ${operationId}`];
    }
    let at = pointer('paths', op.path, op.method.toLowerCase(), 'responses', status);
    if (declared.$ref) {
      at = declared.$ref.slice(1);
      const name = declared.$ref.split('/').pop()!;
      declared = (this.document.components.responses as Record<string, typeof declared>)[name];
    }
    if (!declared?.content?.['application/json']) return [];
    const problems: string[] = [];
    const contentType = response.headers['content-type'];
    if (response.status < 400 && !/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType ?? '')) {
      problems.push(`a JSON answer is labelled ${contentType ?? '(no content type)'}, not application/json`);
    }
    const validate = this.validator(`${at}/content/application~1json/schema`);
    if (!validate(response.body)) {
      problems.push(
        `the body does not match the document: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`,
      );
    }
    if (response.status >= 400) problems.push(...this.problemDocumentProblems(response));
    return problems;
  }

  /** An error must be a problem document with an IX-API error type and the HTTP status. */
  problemDocumentProblems(response: HttpResponse): string[] {
    const problems: string[] = [];
    const body = response.body as { type?: unknown; status?: unknown } | undefined;
    if (!/application\/(problem\+)?json/.test(response.headers['content-type'] ?? '')) {
      problems.push(`an error answered with content type ${response.headers['content-type'] ?? '(none)'}`);
    }
    if (typeof body !== 'object' || body === null)
      return [...problems, 'the error body is not a JSON object'];
    if (
      typeof body.type !== 'string' ||
      !/^https:\/\/errors\.ix-api\.net\/v2\/[a-z-]+\.html$/.test(body.type)
    ) {
      problems.push(`the problem type ${JSON.stringify(body.type)} is not an IX-API error type URI`);
    }
    if (body.status !== response.status) {
      problems.push(
        `the problem says status ${JSON.stringify(body.status)}, the response ${response.status}`,
      );
    }
    return problems;
  }

  validator(at: string): ValidateFunction {
    return compileRef(this.ajv, `${DOCUMENT_ID}#${at}`);
  }

  send(request: HttpRequest, record?: (exchange: RecordedExchange) => void): Promise<HttpResponse> {
    return this.http.send(request, record);
  }
}

/** Names of every property the document marks `x-sensitive`, anywhere. */
function sensitivePropertiesOf(document: OpenApiDocument): Set<string> {
  const names = new Set<string>();
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (typeof node === 'object' && node !== null) {
      const properties = (node as { properties?: Record<string, { 'x-sensitive'?: boolean }> }).properties;
      for (const [name, property] of Object.entries(properties ?? {})) {
        if (property?.['x-sensitive'] === true) names.add(name);
      }
      Object.values(node).forEach(walk);
    }
  };
  walk(document.components.schemas);
  return names;
}
