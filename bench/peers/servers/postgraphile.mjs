// PostGraphile v5 (grafserv on node:http), Amber preset, RLS mode: the JWT (HS256, claim user_id) is
// verified in preset.grafast.context (what the v5 docs recommend) and becomes pgSettings
// { role: 'pgl_user', 'jwt.claims.user_id': … }; no/invalid token → role pgl_anon (no grants).
// env: PORT, DATABASE_URL (connect as pgl_authenticator), JWT_SECRET, POOL_MAX
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { jwtVerify } from 'jose';

const PORT = Number(process.env.PORT ?? 3204);
const key = new TextEncoder().encode(process.env.JWT_SECRET);
const ANON = { role: 'pgl_anon' };

async function settingsFor(header) {
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return ANON;
  try {
    const { payload } = await jwtVerify(header.slice(7), key, { algorithms: ['HS256'] });
    const id = Number(payload.user_id);
    if (!Number.isSafeInteger(id)) return ANON;
    return { role: 'pgl_user', 'jwt.claims.user_id': String(id) };
  } catch {
    return ANON;
  }
}

const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [
    makePgService({
      connectionString: process.env.DATABASE_URL ?? 'postgres://pgl_authenticator@127.0.0.1:5432/peerbench',
      schemas: ['public'],
      poolConfig: { max: Number(process.env.POOL_MAX ?? 10) },
    }),
  ],
  grafserv: { port: PORT, host: '127.0.0.1', graphiql: false, watch: false, maxRequestLength: 100000 },
  grafast: {
    explain: false,
    async context(requestContext) {
      const req = requestContext.node?.req;
      return { pgSettings: await settingsFor(req?.headers?.authorization) };
    },
  },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.keepAliveTimeout = 65_000;
await serv.addTo(server);
await pgl.getSchema();
server.listen(PORT, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${PORT}`));
process.on('SIGTERM', async () => {
  server.close();
  await pgl.release();
  process.exit(0);
});
