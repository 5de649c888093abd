'use strict';
// Seed 003's raw http server: no dependencies (the seed's simple.js).
// Runs on Node 12.13.0 and 16.13.2 alike (no node: prefixes, no ?.).
const http = require('http');
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('PORT=' + JSON.stringify(process.env.PORT) + ': need an integer 1-65535');
  process.exit(2);
}
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end('Hello World!');
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
