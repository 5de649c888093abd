'use strict';
// Seed 002 on Total.js 5: the four workloads and /metrics in direct
// controllers; the POST body is checked by a compact NEWSCHEMA with the same
// fields as the hand-written check (as the seed's Total5 adapter does).
require('total5');
const c = require('./common');

const person = NEWSCHEMA('Person', '*name:String(64),*age:Number,*email:Email');

ROUTE('GET /hello/', ($) => $.plain(c.HELLO));
ROUTE('GET /json/', ($) => $.json(c.SMALL));
ROUTE('POST /validate/', ($) => {
  const r = person.transform($.body);
  if (r.error) {
    $.response.status = 400;
    return $.json({ error: r.error.items.map((e) => e.path || e.name).join(',') || 'invalid' });
  }
  $.json(c.accepted(r.response));
});
ROUTE('GET /await/', ($) => c.dependency().then((r) => $.json(r)));
ROUTE('GET /metrics/', ($) => $.plain(c.metrics())); // text/plain: the Prometheus text format
F.http({ port: c.port(), ip: c.HOST, load: 'none' });
