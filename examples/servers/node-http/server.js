// A plain Node.js HTTP server like seed 003's simple.js: no dependencies.
// PORT (default 3000) and HOST (default 127.0.0.1) come from the environment.
// GET /metrics answers process.memoryUsage() in the Prometheus text format,
// under prom-client's names, for benchrig's metrics scraper.
'use strict';
const http = require('node:http');

const port = Number(process.env.PORT || 3000);
const host = process.env.HOST || '127.0.0.1';

// metrics renders the process's memory as Prometheus gauges.
function metrics() {
  const m = process.memoryUsage();
  const gauges = [
    ['nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', m.heapUsed],
    ['nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', m.heapTotal],
    ['nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', m.external],
    ['process_resident_memory_bytes', 'Resident memory size in bytes.', m.rss],
  ];
  return gauges.map(([name, help, v]) => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${v}\n`).join('');
}

const server = http.createServer((req, res) => {
  if (req.url === '/metrics') {
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(metrics());
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end('hello world\n');
});

server.listen(port, host, () => {
  console.log(`listening on ${host}:${server.address().port}`);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => server.close(() => process.exit(0)));
}
