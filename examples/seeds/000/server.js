// Seed 000's application view: a small HTTP server on node-postgres that
// answers a batch of keys through one of the seed's paths, with JSON
// decoding and the restoration of the input order inside the request.
//
//   GET  /prepared?ids=1-64      one prepared statement for the whole batch:
//                                SELECT t.id, row_to_json(t) FROM items t WHERE t.id = ANY($1::bigint[])
//                                rows come back in any order: put back in the keys' order
//   GET  /prepared-one?ids=1-64  one prepared statement per key (id = $1), in turn
//   GET  /mget?ids=1-64          the SQL-function path: SELECT array_to_json(items_mget($1::bigint[]))
//                                a JSON array of JSON-encoded rows, decoded and placed by position
//   POST /update?id=42           UPDATE items SET revision = revision + 1 WHERE id = $1
//   GET  /healthz                200 once the pool reaches the database
//
// ids is a comma-separated list of keys and ranges (1,5,9-12). The answer
// is a JSON array of the rows in the keys' order (null for a missing key).
//
// Environment: DATABASE_URL (the DSN; benchrig passes it, never on the
// command line), PORT (default 3000), POOL_MAX (default 256: one database
// connection per concurrent request at the seed's largest connection
// count), MGET_SQL (the statement of /mget; $1 is the bigint[] of keys).
'use strict';

const http = require('node:http');
const { Pool } = require('pg');

const dsn = process.env.DATABASE_URL;
if (!dsn) {
  console.error('DATABASE_URL is not set: give the DSN of the database in it');
  process.exit(2);
}
const port = intEnv('PORT', 3000, 1, 65535);
const poolMax = intEnv('POOL_MAX', 256, 1, 10000);
const mgetSQL = process.env.MGET_SQL || 'SELECT array_to_json(items_mget($1::bigint[])) AS rows';
const maxKeys = 1024;

const pool = new Pool({ connectionString: dsn, max: poolMax, idleTimeoutMillis: 0 });
pool.on('error', (err) => console.error('idle client error:', err.message));

// Named statements: node-postgres prepares each once per connection and
// reuses it, as the seed's runner does.
const q = {
  batch: { name: 'items_any', text: 'SELECT t.id, row_to_json(t) AS row FROM items t WHERE t.id = ANY($1::bigint[])' },
  one: { name: 'items_one', text: 'SELECT row_to_json(t) AS row FROM items t WHERE t.id = $1' },
  mget: { name: 'items_mget', text: mgetSQL },
  update: { name: 'items_update', text: 'UPDATE items SET revision = revision + 1 WHERE id = $1' },
};

function intEnv(name, def, lo, hi) {
  const v = process.env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < lo || n > hi) {
    console.error(`${name}=${v}: want an integer ${lo}–${hi}`);
    process.exit(2);
  }
  return n;
}

// parseIDs reads "1,5,9-12" into [1,5,9,10,11,12]; it throws on anything
// else, or on more than maxKeys keys.
function parseIDs(s) {
  if (!s) throw new Error('ids: missing; give ids=1,2,3 or ids=1-64');
  const out = [];
  for (const part of s.split(',')) {
    const m = /^(\d{1,18})(?:-(\d{1,18}))?$/.exec(part);
    if (!m) throw new Error(`ids: ${JSON.stringify(part)} is not a key or a range a-b`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || out.length + (b - a + 1) > maxKeys) throw new Error(`ids: at most ${maxKeys} keys, ranges low-high`);
    for (let i = a; i <= b; i++) out.push(i);
  }
  return out;
}

// byPosition puts rows that came back in any order into the keys' order.
function byPosition(ids, rows) {
  const at = new Map();
  for (const r of rows) at.set(Number(r.id), r.row);
  return ids.map((id) => (at.has(id) ? at.get(id) : null));
}

async function prepared(ids) {
  const res = await pool.query({ ...q.batch, values: [ids] });
  return byPosition(ids, res.rows);
}

async function preparedOne(ids) {
  const c = await pool.connect();
  try {
    const out = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const res = await c.query({ ...q.one, values: [ids[i]] });
      out[i] = res.rows.length ? res.rows[0].row : null;
    }
    return out;
  } finally {
    c.release();
  }
}

async function mget(ids) {
  const res = await pool.query({ ...q.mget, values: [ids] });
  let rows = res.rows.length ? res.rows[0].rows : null;
  if (typeof rows === 'string') rows = JSON.parse(rows); // json typed as text by a driver setting
  if (!Array.isArray(rows) || rows.length !== ids.length) {
    throw new Error(`mget returned ${Array.isArray(rows) ? rows.length : typeof rows} rows for ${ids.length} keys`);
  }
  // One JSON-encoded row per key, in the keys' order: decode each into
  // its position.
  const out = new Array(ids.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    out[i] = r === null ? null : typeof r === 'string' ? JSON.parse(r) : r;
  }
  return out;
}

async function update(id) {
  const res = await pool.query({ ...q.update, values: [id] });
  return { updated: res.rowCount };
}

const routes = {
  'GET /prepared': (u) => prepared(parseIDs(u.searchParams.get('ids'))),
  'GET /prepared-one': (u) => preparedOne(parseIDs(u.searchParams.get('ids'))),
  'GET /mget': (u) => mget(parseIDs(u.searchParams.get('ids'))),
  'POST /update': (u) => {
    const ids = parseIDs(u.searchParams.get('id'));
    if (ids.length !== 1) throw new Error('id: one key');
    return update(ids[0]);
  },
  'GET /healthz': async () => {
    await pool.query('SELECT 1');
    return { ok: true };
  },
};

function reply(res, status, body) {
  const b = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
  res.end(b);
}

const server = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://localhost');
  const h = routes[req.method + ' ' + u.pathname];
  if (!h) return reply(res, 404, { error: `no route ${req.method} ${u.pathname}` });
  req.resume(); // a body, if any, is not read
  let p;
  try {
    p = h(u);
  } catch (err) {
    return reply(res, 400, { error: err.message });
  }
  p.then((body) => reply(res, 200, body), (err) => reply(res, 500, { error: err.message }));
});
// benchrig's connections stay open between samples' phases.
server.keepAliveTimeout = 0;
server.headersTimeout = 0;
server.requestTimeout = 0;

server.listen(port, '127.0.0.1', () => console.log(`seed-000 app listening on 127.0.0.1:${port} (node ${process.version}, pool max ${poolMax})`));

function shutdown() {
  server.close();
  pool.end().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
