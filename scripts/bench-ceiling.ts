import express from 'express';

/**
 * The benchmark's ceiling: Express answering a fixed JSON body, with no authentication, database or
 * validation. POST /set stores the body to serve; GET anything else returns it.
 */
const app = express();
let body = '{}';
app.post('/set', express.text({ type: '*/*' }), (req, res) => {
  body = String(req.body);
  res.status(204).end();
});
app.get('/{*path}', (_req, res) => {
  res.type('application/json').send(body);
});
app.listen(Number(process.env.PORT ?? 8102), '127.0.0.1');
