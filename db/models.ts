import type { Model, ModelStatic, Optional, Sequelize } from 'sequelize';
import { DataTypes } from 'sequelize';

/**
 * Sequelize models, defined once per Sequelize instance. They stay inside db/: repositories turn
 * rows into plain objects before anything leaves this folder.
 *
 * JSON values are kept in TEXT columns with explicit (de)serialisation, because MariaDB reports
 * its JSON type as LONGTEXT and the mysql dialect would hand them back as strings.
 */

function jsonColumn(field: string, fallback: unknown, allowNull = false) {
  return {
    type: DataTypes.TEXT,
    allowNull,
    get(this: Model): unknown {
      const raw = this.getDataValue(field) as string | null;
      return raw === null || raw === undefined ? (allowNull ? null : fallback) : JSON.parse(raw);
    },
    set(this: Model, value: unknown): void {
      this.setDataValue(
        field,
        value === null || value === undefined
          ? allowNull
            ? null
            : JSON.stringify(fallback)
          : JSON.stringify(value),
      );
    },
  };
}

export interface AccountRow {
  id: string;
  name: string;
  legalName: string | null;
  address: Record<string, unknown> | null;
  billingInformation: Record<string, unknown> | null;
  discoverable: boolean;
  externalRef: string | null;
  managingAccount: string | null;
  metroAreaNetworkPresence: string[];
  state: string;
  status: unknown[];
  isExchange: boolean;
  /** The keys of a discoverable account's name (domain/account-names.ts), unique; null otherwise. */
  nameKeyCased: string | null;
  nameKeyCaseless: string | null;
  createdAt?: Date;
  updatedAt?: Date;
}

export interface ContactRow {
  id: string;
  managingAccount: string;
  consumingAccount: string;
  externalRef: string | null;
  name: string | null;
  email: string | null;
  telephone: string | null;
}

export interface RoleRow {
  id: string;
  name: string;
  requiredFields: string[];
}

export interface RoleAssignmentRow {
  id: string;
  role: string;
  contact: string;
}

export interface ApiKeyRow {
  apiKey: string;
  accountId: string;
  secretHash: string;
  label: string;
  createdAt?: Date;
  revokedAt: Date | null;
  /** When a token pair was last issued through the key, to the minute; null if never since recorded. */
  lastUsedAt: Date | null;
}

export interface RefreshTokenRow {
  jti: string;
  apiKey: string;
  accountId: string;
  familyId: string;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
}

export interface EventRow {
  serial: number;
  type: string;
  payload: Record<string, unknown>;
  timestamp: Date;
  account: string | null;
  /** A second account the event concerns (the consuming side of a resource). */
  also_account?: string | null;
  /** The id of the resource the event is about, as its payload names it (domain/events.ts). */
  resource?: string | null;
}

export interface OutboxRow {
  id: number;
  workflowType: string;
  workflowId: string;
  args: unknown[];
  searchAttributes: Record<string, string[]>;
  /** Set when the row signals a running workflow instead of starting one. */
  signalName: string | null;
  createdAt?: Date;
  deliveredAt: Date | null;
  /** Until when the process sending the row holds it (see migration 0016). */
  claimedUntil: Date | null;
  attempts: number;
  lastError: string | null;
  /** The W3C trace context of the request that wrote the row (migration 0020), or null. */
  traceContext: Record<string, string> | null;
}

type Defined<T extends object, Opt extends keyof T = never> = ModelStatic<Model<T, Optional<T, Opt>>>;

export interface Models {
  Account: Defined<
    AccountRow,
    | 'legalName'
    | 'billingInformation'
    | 'externalRef'
    | 'managingAccount'
    | 'status'
    | 'isExchange'
    | 'discoverable'
    | 'metroAreaNetworkPresence'
    | 'nameKeyCased'
    | 'nameKeyCaseless'
  >;
  Contact: Defined<ContactRow, 'externalRef' | 'name' | 'email' | 'telephone'>;
  Role: Defined<RoleRow>;
  RoleAssignment: Defined<RoleAssignmentRow>;
  ApiKey: Defined<ApiKeyRow, 'revokedAt' | 'label' | 'lastUsedAt'>;
  RefreshToken: Defined<RefreshTokenRow, 'usedAt' | 'revokedAt'>;
  Event: Defined<EventRow, 'serial' | 'account'>;
  Outbox: Defined<
    OutboxRow,
    | 'id'
    | 'deliveredAt'
    | 'claimedUntil'
    | 'attempts'
    | 'lastError'
    | 'searchAttributes'
    | 'signalName'
    | 'traceContext'
  >;
}

const idColumn = { type: DataTypes.STRING(80), primaryKey: true };
const accountRef = (allowNull: boolean) => ({ type: DataTypes.STRING(80), allowNull });

export function defineModels(sequelize: Sequelize): Models {
  const Account = sequelize.define('accounts', {
    id: idColumn,
    name: { type: DataTypes.STRING(80), allowNull: false },
    legalName: { type: DataTypes.STRING(80), allowNull: true },
    address: jsonColumn('address', null, true),
    billingInformation: jsonColumn('billingInformation', null, true),
    discoverable: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    externalRef: { type: DataTypes.STRING(80), allowNull: true },
    managingAccount: accountRef(true),
    metroAreaNetworkPresence: jsonColumn('metroAreaNetworkPresence', []),
    state: { type: DataTypes.STRING(32), allowNull: false },
    status: jsonColumn('status', []),
    isExchange: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    nameKeyCased: { type: DataTypes.CHAR(64), allowNull: true },
    nameKeyCaseless: { type: DataTypes.CHAR(64), allowNull: true },
  }) as Models['Account'];

  const Contact = sequelize.define('contacts', {
    id: idColumn,
    managingAccount: accountRef(false),
    consumingAccount: accountRef(false),
    externalRef: { type: DataTypes.STRING(128), allowNull: true },
    name: { type: DataTypes.STRING(128), allowNull: true },
    email: { type: DataTypes.STRING(80), allowNull: true },
    telephone: { type: DataTypes.STRING(40), allowNull: true },
  }) as Models['Contact'];

  const Role = sequelize.define(
    'roles',
    {
      id: idColumn,
      name: { type: DataTypes.STRING(80), allowNull: false },
      requiredFields: jsonColumn('requiredFields', []),
    },
    { timestamps: false },
  ) as Models['Role'];

  const RoleAssignment = sequelize.define('role_assignments', {
    id: idColumn,
    role: { type: DataTypes.STRING(80), allowNull: false },
    contact: { type: DataTypes.STRING(80), allowNull: false },
  }) as Models['RoleAssignment'];

  const ApiKey = sequelize.define(
    'api_keys',
    {
      apiKey: { type: DataTypes.STRING(16).BINARY, primaryKey: true },
      accountId: accountRef(false),
      secretHash: { type: DataTypes.STRING(64), allowNull: false },
      label: { type: DataTypes.STRING(120), allowNull: false, defaultValue: '' },
      revokedAt: { type: DataTypes.DATE(3), allowNull: true },
      lastUsedAt: { type: DataTypes.DATE(3), allowNull: true },
    },
    { updatedAt: false },
  ) as Models['ApiKey'];

  const RefreshToken = sequelize.define(
    'refresh_tokens',
    {
      jti: { type: DataTypes.STRING(64).BINARY, primaryKey: true },
      apiKey: { type: DataTypes.STRING(16).BINARY, allowNull: false },
      accountId: accountRef(false),
      familyId: { type: DataTypes.STRING(64).BINARY, allowNull: false },
      expiresAt: { type: DataTypes.DATE(3), allowNull: false },
      usedAt: { type: DataTypes.DATE(3), allowNull: true },
      revokedAt: { type: DataTypes.DATE(3), allowNull: true },
    },
    { updatedAt: false },
  ) as Models['RefreshToken'];

  const Event = sequelize.define(
    'events',
    {
      serial: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
      type: { type: DataTypes.STRING(64), allowNull: false },
      payload: jsonColumn('payload', {}),
      timestamp: { type: DataTypes.DATE(3), allowNull: false },
      account: accountRef(true),
      also_account: accountRef(true),
      resource: { type: DataTypes.STRING(80), allowNull: true },
    },
    { timestamps: false },
  ) as Models['Event'];

  const Outbox = sequelize.define(
    'workflow_outbox',
    {
      id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
      workflowType: { type: DataTypes.STRING(120), allowNull: false },
      workflowId: { type: DataTypes.STRING(200), allowNull: false },
      args: jsonColumn('args', []),
      searchAttributes: jsonColumn('searchAttributes', {}),
      signalName: { type: DataTypes.STRING(120), allowNull: true },
      deliveredAt: { type: DataTypes.DATE(3), allowNull: true },
      claimedUntil: { type: DataTypes.DATE(3), allowNull: true },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      lastError: { type: DataTypes.TEXT, allowNull: true },
      traceContext: jsonColumn('traceContext', null, true),
    },
    { updatedAt: false },
  ) as Models['Outbox'];

  return { Account, Contact, Role, RoleAssignment, ApiKey, RefreshToken, Event, Outbox };
}
