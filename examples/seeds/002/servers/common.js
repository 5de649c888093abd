'use strict';
// What every seed 002 server shares: the four workloads' fixed answers,
// the hand-written check of the POST body (used by Node http and Express;
// Fastify checks the same fields by its JSON schema, NestJS by its
// validation pipe, Total.js by its schema), the simulated dependency and
// GET /metrics in the Prometheus text format (process.memoryUsage() as
// gauges, no prom-client).

const HELLO = 'hello world';
const SMALL = { id: 1, name: 'benchrig', tags: ['seed', '002'], active: true, score: 42.5 };

// The POST body's fields: name (string, 1–64 characters), age (integer
// 0–150), email (string, 3–254 characters, containing '@').
const RULES = {
  name: { type: 'string', minLength: 1, maxLength: 64 },
  age: { type: 'integer', minimum: 0, maximum: 150 },
  email: { type: 'string', minLength: 3, maxLength: 254, pattern: '@' },
};

// The same fields as a JSON schema (Fastify's, additional properties refused).
const SCHEMA = {
  type: 'object',
  required: ['name', 'age', 'email'],
  additionalProperties: false,
  properties: RULES,
};

// validate returns null when body holds exactly the three fields as RULES
// say, else the first field that does not.
function validate(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'body: not an object';
  for (const k of Object.keys(body)) if (!(k in RULES)) return k + ': unknown field';
  const { name, age, email } = body;
  if (typeof name !== 'string' || name.length < 1 || name.length > 64) return 'name: a string of 1-64 characters';
  if (!Number.isInteger(age) || age < 0 || age > 150) return 'age: an integer 0-150';
  if (typeof email !== 'string' || email.length < 3 || email.length > 254 || !email.includes('@')) return 'email: a string of 3-254 characters with @';
  return null;
}

// accepted is the answer to a valid POST.
function accepted(body) {
  return { ok: true, name: body.name };
}

// dependency is the simulated downstream call: a fixed 2 ms timer.
const DEPENDENCY_MS = 2;
function dependency() {
  return new Promise((resolve) => setTimeout(resolve, DEPENDENCY_MS, { ok: true, waited_ms: DEPENDENCY_MS }));
}

// metrics is process.memoryUsage() in the Prometheus text format.
function metrics() {
  const m = process.memoryUsage();
  const g = (name, help, v) => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${v}\n`;
  return g('nodejs_heap_size_used_bytes', 'V8 heap used, bytes.', m.heapUsed) +
    g('nodejs_heap_size_total_bytes', 'V8 heap total, bytes.', m.heapTotal) +
    g('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript objects, bytes.', m.external) +
    g('process_resident_memory_bytes', 'Resident set size, bytes.', m.rss);
}
const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

// port is $PORT, refused outside 1–65535.
function port() {
  const p = Number(process.env.PORT);
  if (!Number.isInteger(p) || p < 1 || p > 65535) {
    console.error(`PORT=${JSON.stringify(process.env.PORT)}: need an integer 1-65535`);
    process.exit(2);
  }
  return p;
}

const HOST = '127.0.0.1';

module.exports = { HELLO, SMALL, RULES, SCHEMA, validate, accepted, dependency, metrics, METRICS_TYPE, port, HOST };
