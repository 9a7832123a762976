import { QueryTypes } from 'sequelize';
import type { openDatabase } from '../db';

/** A database handle of the benchmark's. */
type Database = ReturnType<typeof openDatabase>;

/**
 * The statements an API runs on `table` to answer one GET of `url`, exactly as it sent them, caught
 * from the database's process list while the request runs. A list's totals, page starts and pages
 * are kept until a table they read changes, so each attempt first changes one row of `table` (its
 * `updated_at`), then asks once and reads the process list until the answer is in; the attempts go
 * on until a page statement (with LIMIT) was seen, 30 at most.
 */
export async function listStatements(
  db: Database,
  table: string,
  url: string,
  headers: Record<string, string>,
): Promise<string[]> {
  const seen = new Map<string, string>();
  for (let attempt = 0; attempt < 30 && ![...seen.values()].some((s) => /\bLIMIT\b/.test(s)); attempt += 1) {
    await db.sequelize.query(`UPDATE ${table} SET updated_at = NOW(3) ORDER BY id LIMIT 1`);
    let answered = false;
    const asking = fetch(url, { headers })
      .then((response) => response.arrayBuffer())
      .finally(() => {
        answered = true;
      });
    while (!answered) {
      const rows = await db.sequelize.query<{ info: string }>(
        `SELECT INFO AS info FROM information_schema.PROCESSLIST
         WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND COMMAND = 'Query' AND INFO LIKE 'SELECT%'`,
        { type: QueryTypes.SELECT },
      );
      for (const { info } of rows) {
        // One of each shape: the values differ from request to request, the plan does not.
        const shape = info.replace(/'[^']*'|\b\d+\b/g, '?').replace(/\s+/g, ' ');
        if (new RegExp(`\\bFROM ${table}\\b`).test(info) && !seen.has(shape)) seen.set(shape, info);
      }
    }
    await asking;
  }
  return [...seen.values()];
}

/** Statements other processes run on their own (relays, housekeeping), whatever the request. */
const BACKGROUND = [
  // The relays' rounds: candidates, the claim of a batch and its read back.
  /^SELECT id FROM workflow_outbox WHERE delivered_at IS NULL AND \(claimed_until IS NULL/,
  /^SELECT id FROM workflow_outbox WHERE claimed_by = /,
  /FROM `workflow_outbox` AS `Outbox` WHERE `Outbox`.`id` IN \(/,
  /^UPDATE workflow_outbox SET claimed_until = .* WHERE id IN \(/,
  /^DELETE FROM \w+ WHERE (expire|expires_at|created_at|delivered_at)/i,
  /^SELECT 1\b/,
];
/** Statements the database's triggers run (the collections' versions), which no client sends. */
const TRIGGERED = [
  /^UPDATE collection_versions SET version = version \+ 1 WHERE table_name = '\w+' AND shard = CONNECTION_ID\(\)/,
];
/** The statements of sending a committed message, which run after the answer. */
const SENDING = [/^UPDATE `?workflow_outbox`? SET `?(claimed_until|delivered_at|attempts)/];

/**
 * The statements one `POST` costs the database, read from MariaDB's general log (written to its
 * table for the time of one request): those of every connection but this one's between the request
 * and its answer, less what relays and housekeeping run on their own; apart, those the database's
 * triggers ran (MariaDB logs them too) and those of the background send of its workflow start.
 */
export async function statementsOfOneWrite(
  db: Database,
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ request: string[]; triggered: string[]; sending: string[] }> {
  const [settings] = await db.sequelize.query<{ output: string; on: number }>(
    'SELECT @@log_output AS output, @@general_log AS `on`',
    { type: QueryTypes.SELECT },
  );
  await db.sequelize.query("SET GLOBAL log_output = 'TABLE'");
  await db.sequelize.query('TRUNCATE TABLE mysql.general_log');
  const stamp = async () =>
    (
      await db.sequelize.query<{ at: string }>('SELECT CAST(NOW(6) AS CHAR) AS at', {
        type: QueryTypes.SELECT,
      })
    )[0].at;
  let from = '';
  let to = '';
  await db.sequelize.query('SET GLOBAL general_log = 1');
  try {
    from = await stamp();
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    to = await stamp();
    // The background send of the start runs after the answer: give it a moment to be logged.
    await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    await db.sequelize.query('SET GLOBAL general_log = 0');
    await db.sequelize.query('SET GLOBAL log_output = :output', {
      replacements: { output: settings.output },
    });
    if (Number(settings.on)) await db.sequelize.query('SET GLOBAL general_log = 1');
  }
  const rows = await db.sequelize.query<{ at: string; argument: string }>(
    `SELECT CAST(event_time AS CHAR) AS at, CONVERT(argument USING utf8mb4) AS argument FROM mysql.general_log
      WHERE command_type IN ('Query', 'Execute') AND thread_id <> CONNECTION_ID() ORDER BY event_time`,
    { type: QueryTypes.SELECT },
  );
  const statements = rows
    .map((row) => ({ at: row.at, text: row.argument.replace(/\s+/g, ' ').trim() }))
    .filter(({ text }) => !BACKGROUND.some((shape) => shape.test(text)));
  const sending = (text: string) => SENDING.some((shape) => shape.test(text));
  const triggered = (text: string) => TRIGGERED.some((shape) => shape.test(text));
  const inRequest = statements.filter(({ at, text }) => at >= from && at <= to && !sending(text));
  return {
    request: inRequest.filter(({ text }) => !triggered(text)).map(({ text }) => text),
    triggered: inRequest.filter(({ text }) => triggered(text)).map(({ text }) => text),
    sending: statements.filter(({ text }) => sending(text)).map(({ text }) => text),
  };
}

/** Each statement with its EXPLAIN, as text. */
export async function explained(db: Database, statements: readonly string[]): Promise<string> {
  let text = '';
  for (const statement of statements) {
    const plan = await db.sequelize.query<Record<string, unknown>>(`EXPLAIN ${statement}`, {
      type: QueryTypes.SELECT,
    });
    text += `\n${statement.replace(/\s+/g, ' ')}\n`;
    for (const row of plan) {
      text += `  ${['id', 'select_type', 'table', 'type', 'key', 'rows', 'Extra'].map((column) => `${column}=${String(row[column])}`).join(' ')}\n`;
    }
  }
  return text || '\n(no list statement was caught running in 30 requests)\n';
}
