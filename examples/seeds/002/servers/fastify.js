'use strict';
// Seed 002 on Fastify 5: the four workloads and /metrics; the POST body is
// checked by Fastify's JSON schema (the same fields as the hand-written check).
const fastify = require('fastify')({ logger: false, bodyLimit: 16 << 10 });
const c = require('./common');

fastify.get('/hello', async (req, reply) => {
  reply.type('text/plain; charset=utf-8');
  return c.HELLO;
});
fastify.get('/json', async () => c.SMALL);
fastify.post('/validate', { schema: { body: c.SCHEMA } }, async (req) => c.accepted(req.body));
fastify.get('/await', async () => c.dependency());
fastify.get('/metrics', async (req, reply) => {
  reply.type(c.METRICS_TYPE);
  return c.metrics();
});
fastify.listen({ port: c.port(), host: c.HOST }).catch((err) => {
  console.error(err);
  process.exit(1);
});
process.on('SIGTERM', () => fastify.close().then(() => process.exit(0)));
