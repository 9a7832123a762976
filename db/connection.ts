import mysql from 'mysql2/promise';
import { Sequelize } from 'sequelize';

export interface DatabaseOptions {
  url: string;
  poolMax?: number;
  /** Called with each SQL statement; off by default. */
  logging?: (sql: string) => void;
}

interface ParsedUrl {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export function parseDatabaseUrl(url: string): ParsedUrl {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username) || 'root',
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')),
  };
}

function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z0-9_$-]{1,64}$/.test(name)) throw new Error(`unsafe database name "${name}"`);
  return `\`${name}\``;
}

/** Errors of a connection attempt that a busy or starting server answers, and that pass. */
const PASSING_CONNECT_ERRORS = new Set(['ETIMEDOUT', 'ECONNREFUSED', 'ECONNRESET', 'ER_CON_COUNT_ERROR']);

/**
 * Opens one connection to the server, trying again (`attempts` in all, waiting `delayMs` more after
 * each) where the attempt failed in a way that passes: a server that is starting, or too busy to
 * answer within the connect timeout. Any other error (wrong credentials, say) is thrown at once.
 */
export async function openConnection(
  options: mysql.ConnectionOptions,
  { attempts = 4, delayMs = 1000 }: { attempts?: number; delayMs?: number } = {},
): Promise<mysql.Connection> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await mysql.createConnection({ connectTimeout: 5000, ...options });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= attempts || !code || !PASSING_CONNECT_ERRORS.has(code)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs * attempt));
    }
  }
}

async function withServerConnection<T>(
  url: string,
  work: (connection: mysql.Connection) => Promise<T>,
): Promise<T> {
  const { host, port, user, password } = parseDatabaseUrl(url);
  const connection = await openConnection({ host, port, user, password });
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const { database } = parseDatabaseUrl(url);
  await withServerConnection(url, async (connection) => {
    await connection.query(
      `CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
  });
}

/** Drops the database named in the URL (test databases only). */
export async function dropDatabase(url: string): Promise<void> {
  const { database } = parseDatabaseUrl(url);
  await withServerConnection(url, async (connection) => {
    await connection.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(database)}`);
  });
}

export function createSequelize(options: DatabaseOptions): Sequelize {
  const { host, port, user, password, database } = parseDatabaseUrl(options.url);
  return new Sequelize(database, user, password, {
    host,
    port,
    dialect: 'mysql',
    timezone: '+00:00',
    logging: options.logging ?? false,
    pool: { max: options.poolMax ?? 10, min: 0, acquire: 10000, idle: 10000, evict: 5000 },
    dialectOptions: {
      connectTimeout: 5000,
      dateStrings: false,
      supportBigNumbers: true,
      bigNumberStrings: false,
    },
    define: { underscored: true, freezeTableName: true },
    hooks: {
      // Every connection's transactions are READ COMMITTED unless they say otherwise: the writes
      // that take something scarce (orders) need it and so skip a statement each; the unit of work
      // asks for REPEATABLE READ for the others (db/unit-of-work.ts).
      afterConnect: (connection) =>
        new Promise<void>((resolve, reject) => {
          (connection as { query(sql: string, done: (error: Error | null) => void): void }).query(
            'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
            (error) => (error ? reject(error) : resolve()),
          );
        }),
    },
  });
}
