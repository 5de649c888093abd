'use strict';
// Seed 002 on Express 5: the four workloads and /metrics; the POST body is
// parsed by express.json() and checked by the same hand-written check as
// Node http's.
const express = require('express');
const c = require('./common');

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.get('/hello', (req, res) => res.type('text/plain').send(c.HELLO));
app.get('/json', (req, res) => res.json(c.SMALL));
app.post('/validate', express.json({ limit: '16kb' }), (req, res) => {
  const bad = c.validate(req.body);
  if (bad) return res.status(400).json({ error: bad });
  res.json(c.accepted(req.body));
});
app.get('/await', async (req, res) => res.json(await c.dependency()));
app.get('/metrics', (req, res) => res.type(c.METRICS_TYPE).send(c.metrics()));
const server = app.listen(c.port(), c.HOST);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
