import cluster from 'node:cluster';
import { Client, Connection } from '@temporalio/client';
import express from 'express';
import mysql from 'mysql2/promise';

/**
 * The benchmark's ceilings: Express with no authentication or validation.
 * - GET anything answers a fixed JSON body (POST /set stores it).
 * - POST /write runs, for each request, what an order costs the database at least: one transaction
 *   inserting the resource's row, its event and its outbox entry (tables `bench_ceiling_*`, made by
 *   the benchmark), through a pool as large as the API's, and answers the body it was sent.
 * - POST /order does the same and, after answering, starts one workflow of a type no worker runs
 *   on the Temporal server at TEMPORAL_ADDRESS (namespace TEMPORAL_NAMESPACE): an order's
 *   irreducible work, its start sent once it is answered.
 * With CEILING_PROCESSES=n, n processes share the port as the API's do with API_PROCESSES (node:cluster);
 * CEILING_BODY then sets the body, as POST /set would reach one process only.
 */
const processes = Number(process.env.CEILING_PROCESSES ?? 1);
if (processes > 1 && cluster.isPrimary) {
  for (let i = 0; i < processes; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    process.exit(0);
  });
} else serve();

function serve(): void {
  const app = express();
  let body = process.env.CEILING_BODY ?? '{}';
  const pool = process.env.DATABASE_URL
    ? mysql.createPool({ uri: process.env.DATABASE_URL, connectionLimit: 10 })
    : undefined;
  let written = 0;

  app.post('/set', express.text({ type: '*/*' }), (req, res) => {
    body = String(req.body);
    res.status(204).end();
  });
  /** One transaction of the three inserts; answers the id it wrote. */
  async function write(order: unknown): Promise<string> {
    const connection = await pool!.getConnection();
    try {
      const now = new Date();
      const id = `bench-${process.pid}-${(written += 1)}`;
      const text = JSON.stringify(order);
      await connection.beginTransaction();
      await connection.query('INSERT INTO bench_ceiling_rows (id, body, created_at) VALUES (?, ?, ?)', [
        id,
        text,
        now,
      ]);
      await connection.query(
        'INSERT INTO bench_ceiling_events (resource, payload, created_at) VALUES (?, ?, ?)',
        [id, text, now],
      );
      await connection.query(
        'INSERT INTO bench_ceiling_outbox (resource, args, created_at) VALUES (?, ?, ?)',
        [id, text, now],
      );
      await connection.commit();
      return id;
    } catch (error) {
      await connection.rollback().catch(() => undefined);
      throw error;
    } finally {
      connection.release();
    }
  }

  let temporal: Promise<Client> | undefined;
  const client = () =>
    (temporal ??= Connection.connect({ address: process.env.TEMPORAL_ADDRESS }).then(
      (connection) => new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' }),
    ));

  for (const [route, starts] of [
    ['/write', false],
    ['/order', true],
  ] as const)
    app.post(route, express.json(), async (req, res) => {
      let id: string;
      try {
        id = await write(req.body);
      } catch (error) {
        res.status(500).json({ error: String(error) });
        return;
      }
      res.status(201).json({ id, ...(req.body as object) });
      if (starts)
        await (
          await client()
        ).workflow
          .start('benchCeilingOrder', { taskQueue: 'bench-ceiling-orders', workflowId: id, args: [] })
          .catch((error: unknown) => process.stderr.write(`start of ${id} failed: ${String(error)}\n`));
    });
  app.get('/{*path}', (_req, res) => {
    res.type('application/json').send(body);
  });
  app.listen(Number(process.env.PORT ?? 8102), '127.0.0.1');
}
