'use strict';
// Seed 003's Express 4 server: GET / answers a string; GET /small and
// GET /medium read one object (about 80 B and 1 KB of JSON) from
// PostgreSQL through node-postgres (the seed read them from MongoDB) and
// send it as JSON. The database is reached by the DSN in $SEED003_PG
// (benchrig's withpg wrapper starts an ephemeral server and sets it); a
// pool of 10 connections, one per client connection of the load.
// Runs on Node 12.13.0 and 16.13.2 alike.
const express = require('express');
const { Pool } = require('pg');

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('PORT=' + JSON.stringify(process.env.PORT) + ': need an integer 1-65535');
  process.exit(2);
}
const app = express();
app.get('/', (req, res) => res.send('Hello World!'));

const dsn = process.env.SEED003_PG;
const pool = dsn ? new Pool({ connectionString: dsn, max: 10 }) : null;
const read = (id) => (req, res, next) => {
  if (!pool) return res.status(503).send('no database: SEED003_PG is not set');
  pool.query('SELECT doc FROM objects WHERE id = $1', [id]).then((r) => {
    if (r.rows.length !== 1) return res.status(404).send('no object ' + id);
    res.json(r.rows[0].doc);
  }, next);
};
app.get('/small', read('small'));
app.get('/medium', read('medium'));

const server = app.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => (pool ? pool.end() : Promise.resolve()).then(() => process.exit(0))));
