'use strict';
// Seed 002 on Node's own http module: the four workloads and /metrics.
const http = require('node:http');
const c = require('./common');

const JSON_TYPE = 'application/json; charset=utf-8';
const small = JSON.stringify(c.SMALL);
const MAX_BODY = 16 << 10;

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function post(req, res) {
  let size = 0;
  const chunks = [];
  req.on('data', (b) => {
    size += b.length;
    if (size > MAX_BODY) {
      send(res, 413, JSON_TYPE, '{"error":"body larger than 16 KiB"}');
      req.destroy();
      return;
    }
    chunks.push(b);
  });
  req.on('end', () => {
    if (res.writableEnded) return;
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, JSON_TYPE, '{"error":"body: not JSON"}');
    }
    const bad = c.validate(body);
    if (bad) return send(res, 400, JSON_TYPE, JSON.stringify({ error: bad }));
    send(res, 200, JSON_TYPE, JSON.stringify(c.accepted(body)));
  });
}

const server = http.createServer((req, res) => {
  const url = req.url;
  if (req.method === 'GET' && url === '/hello') return send(res, 200, 'text/plain; charset=utf-8', c.HELLO);
  if (req.method === 'GET' && url === '/json') return send(res, 200, JSON_TYPE, small);
  if (req.method === 'POST' && url === '/validate') return post(req, res);
  if (req.method === 'GET' && url === '/await') {
    return c.dependency().then((r) => send(res, 200, JSON_TYPE, JSON.stringify(r)));
  }
  if (req.method === 'GET' && url === '/metrics') return send(res, 200, c.METRICS_TYPE, c.metrics());
  send(res, 404, 'text/plain; charset=utf-8', 'not found');
});
server.listen(c.port(), c.HOST);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
