// Correctness probe, each server started fresh: for 20 random users the server returns exactly
// that user's first 20 todo ids (from PostgreSQL directly); no token / a forged token → no rows;
// user A asking for B's rows (each API's own filter) never gets a row of B; with --writes a POST
// as A stores A as owner and naming B as owner is refused or overwritten.
// usage: node check.mjs [names,comma,separated] [--writes]   → prints one JSON line per variant
import pg from 'pg';
import { mkdirSync } from 'node:fs';
import { pick, sign, PG, PEERS } from './variants.mjs';
import { startServer, stopServer, http } from './lib.mjs';

const args = process.argv.slice(2);
const writes = args.includes('--writes');
const names = args.find((a) => !a.startsWith('--'));
mkdirSync(`${PEERS}/logs`, { recursive: true });
const db = new pg.Client({ connectionString: PG });
await db.connect();
const users = Array.from({ length: 20 }, () => 1 + Math.floor(Math.random() * 1000));
const expected = new Map();
for (const u of users) {
  const { rows } = await db.query('SELECT id FROM todos WHERE user_id = $1 ORDER BY id LIMIT 20', [u]);
  expected.set(
    u,
    rows.map((r) => Number(r.id)),
  );
}
const forgedKey = new TextEncoder().encode('not-the-secret-not-the-secret-not-the-secret!!');
let allOk = true;
for (const v of pick(names)) {
  const fails = [];
  let s;
  try {
    s = await startServer(v);
    for (const u of users) {
      const r = await http(v, v.read, await sign(v.claims(u)));
      const rows = v.rows(r.body);
      const ids = rows?.map((x) => x.id);
      if (r.status !== 200 || !rows) fails.push(`user ${u}: status ${r.status} ${r.text.slice(0, 120)}`);
      else if (JSON.stringify(ids) !== JSON.stringify(expected.get(u)))
        fails.push(`user ${u}: ids ${ids.slice(0, 5)}… ≠ ${expected.get(u).slice(0, 5)}…`);
      else if (rows.some((x) => x.user !== u)) fails.push(`user ${u}: foreign row`);
    }
    for (const [what, tok] of [
      ['no token', null],
      ['forged token', await sign(v.claims(users[0]), forgedKey)],
    ]) {
      const r = await http(v, v.read, tok);
      const rows = v.rows(r.body);
      if (rows && rows.length > 0) fails.push(`${what}: ${rows.length} rows (status ${r.status})`);
      else if (r.status === 200 && !r.body?.errors) fails.push(`${what}: 200 without error`);
    }
    for (let k = 0; k < 5; k++) {
      const a = users[k],
        b = users[k + 1];
      if (a === b) continue;
      const r = await http(v, v.readAs(b), await sign(v.claims(a)));
      const rows = v.rows(r.body) ?? [];
      if (rows.some((x) => x.user !== a)) fails.push(`user ${a} asking for ${b}'s rows got a foreign row`);
    }
    let noteStatus;
    if (writes) {
      const a = users[0],
        b = users[1] === users[0] ? users[2] : users[1];
      const r = await http(v, v.insert(a), await sign(v.claims(a)));
      if (r.status >= 300 || Number(v.inserted(r.body)) !== a)
        fails.push(`POST as ${a}: status ${r.status} owner ${v.inserted(r.body)} ${r.text.slice(0, 120)}`);
      if (v.insertAs) {
        const r2 = await http(v, v.insertAs(b), await sign(v.claims(a)));
        if (r2.status < 300 && Number(v.inserted(r2.body)) !== a)
          fails.push(`POST as ${a} naming ${b}: stored owner ${v.inserted(r2.body)}`);
        noteStatus = `A naming B as owner → ${r2.status}${r2.status < 300 ? ` (owner ${v.inserted(r2.body)})` : ''}`;
      }
      const r3 = await http(v, v.insert(a), null);
      if (r3.status < 300 && !r3.body?.errors) fails.push(`POST without token: ${r3.status}`);
    }
    const anon = await http(v, v.read, null);
    console.log(
      JSON.stringify({
        variant: v.name,
        ok: fails.length === 0,
        users: users.length,
        anonStatus: anon.status,
        anonBody: anon.text.slice(0, 90),
        writes: writes ? (noteStatus ?? 'checked') : undefined,
        fails,
      }),
    );
  } catch (e) {
    fails.push(String(e.message ?? e));
    console.log(JSON.stringify({ variant: v.name, ok: false, fails }));
  } finally {
    if (s) await stopServer(s);
  }
  if (fails.length) allOk = false;
}
await db.end();
process.exit(allOk ? 0 : 1);
