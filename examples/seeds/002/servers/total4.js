'use strict';
// Seed 002 on Total.js 4: the four workloads and /metrics; the POST body is
// checked by a NEWSCHEMA with the same fields as the hand-written check.
require('total4');
const c = require('./common');

NEWSCHEMA('Person', function (schema) {
  schema.define('name', 'String(64)', true);
  schema.define('age', Number, true);
  schema.define('email', 'Email', true);
});

ROUTE('GET /hello/', function () { this.plain(c.HELLO); });
ROUTE('GET /json/', function () { this.json(c.SMALL); });
ROUTE('POST /validate/ *Person', function () { this.json(c.accepted(this.body)); });
ROUTE('GET /await/', function () { c.dependency().then((r) => this.json(r)); });
ROUTE('GET /metrics/', function () { this.plain(c.metrics()); }); // text/plain: the Prometheus text format
HTTP('release', { port: c.port(), ip: c.HOST });
