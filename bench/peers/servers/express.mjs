// Hand-written baseline (same shape as rest's bench/baseline-server.ts): express 5 + pg Pool (10) +
// jose HS256 verify per request, one unnamed statement. env: PORT, DATABASE_URL, JWT_SECRET, POOL_MAX
import express from 'express';
import pg from 'pg';
import { jwtVerify } from 'jose';

const PORT = Number(process.env.PORT ?? 3202);
const key = new TextEncoder().encode(process.env.JWT_SECRET);
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
});
const SQL = 'SELECT id, user_id, title, done FROM todos WHERE user_id = $1 ORDER BY id LIMIT 20';
const INSERT =
  'INSERT INTO todos (user_id, title, done) VALUES ($1, $2, $3) RETURNING id, user_id, title, done';

async function userIdOf(h) {
  if (typeof h !== 'string' || !h.startsWith('Bearer ')) return undefined;
  try {
    const { payload } = await jwtVerify(h.slice(7), key, { algorithms: ['HS256'] });
    const id = Number(payload.user_id);
    return Number.isSafeInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

const app = express();
app.disable('x-powered-by');
app.use(express.json());
app.get('/todos', async (req, res) => {
  const uid = await userIdOf(req.headers.authorization);
  if (uid === undefined)
    return res.status(401).set('WWW-Authenticate', 'Bearer').json({ error: 'unauthorized' });
  const { rows } = await pool.query(SQL, [uid]);
  res.json(rows);
});
app.post('/todos', async (req, res) => {
  const uid = await userIdOf(req.headers.authorization);
  if (uid === undefined) return res.status(401).json({ error: 'unauthorized' });
  const b = req.body ?? {};
  if (b.user_id !== undefined && Number(b.user_id) !== uid)
    return res.status(403).json({ error: 'forbidden' });
  const { rows } = await pool.query(INSERT, [uid, String(b.title ?? ''), Boolean(b.done)]);
  res.status(201).json(rows[0]);
});
app.use((err, _req, res, _next) => {
  console.error(err.message);
  res.status(500).json({ error: 'internal' });
});
const server = app.listen(PORT, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${PORT}`));
process.on('SIGTERM', () => {
  server.close();
  pool.end().finally(() => process.exit(0));
});
