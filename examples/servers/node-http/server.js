// A plain Node.js HTTP server like seed 003's simple.js: no dependencies.
// PORT (default 3000) and HOST (default 127.0.0.1) come from the environment.
'use strict';
const http = require('node:http');

const port = Number(process.env.PORT || 3000);
const host = process.env.HOST || '127.0.0.1';

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end('hello world\n');
});

server.listen(port, host, () => {
  console.log(`listening on ${host}:${server.address().port}`);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => server.close(() => process.exit(0)));
}
