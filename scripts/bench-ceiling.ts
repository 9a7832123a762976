import cluster from 'node:cluster';
import express from 'express';
import mysql from 'mysql2/promise';

/**
 * The benchmark's ceilings: Express with no authentication or validation.
 * - GET anything answers a fixed JSON body (POST /set stores it).
 * - POST /write runs, for each request, what an order costs the database at least: one transaction
 *   inserting the resource's row, its event and its outbox entry (tables `bench_ceiling_*`, made by
 *   the benchmark), through a pool as large as the API's, and answers the body it was sent.
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
  app.post('/write', express.json(), async (req, res) => {
    const connection = await pool!.getConnection();
    try {
      const now = new Date();
      const id = `bench-${process.pid}-${(written += 1)}`;
      const text = JSON.stringify(req.body);
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
      res.status(201).json({ id, ...(req.body as object) });
    } catch (error) {
      await connection.rollback().catch(() => undefined);
      res.status(500).json({ error: String(error) });
    } finally {
      connection.release();
    }
  });
  app.get('/{*path}', (_req, res) => {
    res.type('application/json').send(body);
  });
  app.listen(Number(process.env.PORT ?? 8102), '127.0.0.1');
}
