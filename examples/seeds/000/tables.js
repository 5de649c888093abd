// Prints the seeds' tables (markdown) from benchrig results files, as the
// READMEs show them: requests/s by path, the server-resource table, and
// the ratios between paths. Every figure is median [min–max] across the
// repeats of a case.
//
//   node tables.js seed000 RESULTS.json...   # seed 000: app view and pg-driver view
//   node tables.js seed001 RESULTS.json      # seed 001: prepared, ANY, SQL function, RESP
'use strict';
const fs = require('node:fs');

function samples(files) {
  const out = [];
  for (const f of files) {
    for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const d = JSON.parse(line);
      if (d.type === 'sample' && !d.error && d.load) out.push(d);
    }
  }
  return out;
}

function med(v) {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function fmt(v, d) {
  return v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

// cell renders median [min–max] of f over ss ("–" when none has it).
function cell(ss, f, d = 0) {
  const v = ss.map(f).filter((x) => x !== undefined && x !== null && Number.isFinite(x));
  if (!v.length) return '–';
  if (v.length === 1) return fmt(v[0], d);
  return `${fmt(med(v), d)} [${fmt(Math.min(...v), d)}–${fmt(Math.max(...v), d)}]`;
}

function medOf(ss, f) {
  const v = ss.map(f).filter((x) => Number.isFinite(x));
  return v.length ? med(v) : NaN;
}

const rps = (s) => s.load.requests_per_sec;
const clientCores = (s) => s.load.client && s.load.client.cores;
function headline(s) {
  const c = (s.companions || []).find((x) => x.role === 'headline');
  return c ? c.server : s.server;
}
const fig = (sv, k) => (sv && sv.figures && sv.figures.window_s > 0 ? sv.figures[k] : undefined);
const peakMiB = (sv) => {
  if (!sv || !sv.figures) return undefined;
  const b = sv.figures.pss_peak_bytes || sv.figures.rss_peak_bytes;
  return b ? b / (1 << 20) : undefined;
};

// key describes a seed 000 sample: view (app or pg), path, keys, workload,
// connections.
function key000(s) {
  const c = s.config.cell;
  if (c.target === 'app') {
    const m = /^(?:app-)?(prepared|mget)-k(\d+)-(\w+)$/.exec(c.path);
    return { view: 'app', path: m[1], keys: Number(m[2]), workload: m[3], conns: c.connections };
  }
  return { view: 'pg', path: c.path, keys: c.batch, workload: c.workload, conns: c.connections };
}

function group(ss, keyf) {
  const g = new Map();
  for (const s of ss) {
    const k = JSON.stringify(keyf(s));
    if (!g.has(k)) g.set(k, []);
    g.get(k).push(s);
  }
  return (want) => g.get(JSON.stringify(want)) || [];
}

function table(header, rows) {
  let t = `| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`;
  for (const r of rows) t += `| ${r.join(' | ')} |\n`;
  return t;
}

function seed000(ss) {
  const at = group(ss, key000);
  const conns = [...new Set(ss.map((s) => key000(s).conns))].sort((a, b) => a - b);
  const workloads = [...new Set(ss.map((s) => key000(s).workload))];
  const keys = [...new Set(ss.map((s) => key000(s).keys))].sort((a, b) => a - b);
  let out = '';
  for (const w of workloads) {
    out += `\n**Requests/s, workload ${w}** (median [min–max] of ${at({ view: 'app', path: 'prepared', keys: keys[0], workload: w, conns: conns[0] }).length || '?'} samples)\n\n`;
    const rows = [];
    for (const c of conns) {
      for (const k of keys) {
        rows.push([k, c, ...['app', 'pg'].flatMap((v) => ['prepared', 'mget'].map((p) => cell(at({ view: v, path: p, keys: k, workload: w, conns: c }), rps)))]);
      }
    }
    out += table(['Keys/request', 'Connections', 'app: prepared SQL', 'app: SQL mget', 'pg driver: prepared SQL', 'pg driver: SQL mget'], rows);
  }
  for (const w of workloads) {
    out += `\n**Resources, workload ${w}** (server = the headline: PostgreSQL's whole tree; app = the Node process, sampled beside it)\n\n`;
    const rows = [];
    for (const c of conns) {
      for (const k of keys) {
        for (const v of ['app', 'pg']) {
          for (const p of ['prepared', 'mget']) {
            const g = at({ view: v, path: p, keys: k, workload: w, conns: c });
            if (!g.length) continue;
            const app = (s) => (v === 'app' ? s.server : undefined);
            rows.push([k, c, `${v === 'app' ? 'app' : 'pg driver'}: ${p === 'mget' ? 'SQL mget' : 'prepared SQL'}`,
              cell(g, clientCores, 2),
              `${cell(g, (s) => fig(headline(s), 'cores'), 2)} (${cell(g, (s) => fig(headline(s), 'machine_pct'), 1)} %)`,
              cell(g, (s) => fig(headline(s), 'us_per_request'), 1),
              cell(g, (s) => peakMiB(headline(s)), 1),
              v === 'app' ? cell(g, (s) => fig(app(s), 'cores'), 2) : '–',
              v === 'app' ? cell(g, (s) => fig(app(s), 'us_per_request'), 1) : '–']);
          }
        }
      }
    }
    out += table(['Keys', 'Conns', 'Path', 'Client cores', 'Server cores (% machine)', 'Server µs/request', 'Server peak MiB', 'App cores', 'App µs/request'], rows);
  }
  out += '\n**Ratios, SQL mget ÷ prepared SQL** (of the medians)\n\n';
  const rows = [];
  for (const w of workloads) {
    for (const c of conns) {
      for (const k of keys) {
        for (const v of ['app', 'pg']) {
          const a = at({ view: v, path: 'mget', keys: k, workload: w, conns: c });
          const b = at({ view: v, path: 'prepared', keys: k, workload: w, conns: c });
          if (!a.length || !b.length) continue;
          const r = (f) => fmt(medOf(a, f) / medOf(b, f), 2);
          rows.push([w, k, c, v === 'app' ? 'app' : 'pg driver', r(rps), r((s) => fig(headline(s), 'us_per_request'))]);
        }
      }
    }
  }
  out += table(['Workload', 'Keys', 'Conns', 'View', 'req/s ratio', 'server µs/request ratio'], rows);
  return out;
}

function seed001(ss) {
  const at = group(ss, (s) => ({ path: s.config.cell.path, keys: s.config.cell.batch, conns: s.config.cell.connections }));
  const paths = ['prepared', 'any', 'sql-mget', 'resp-mget'];
  const keys = [...new Set(ss.map((s) => s.config.cell.batch))].sort((a, b) => a - b);
  const conns = [...new Set(ss.map((s) => s.config.cell.connections))].sort((a, b) => a - b);
  const n = at({ path: 'any', keys: keys[0], conns: conns[0] }).length;
  let out = `\n**Requests/s** (median [min–max] of ${n} samples)\n\n`;
  const rows = [];
  for (const k of keys) for (const c of conns) rows.push([k, c, ...paths.map((p) => cell(at({ path: p, keys: k, conns: c }), rps))]);
  out += table(['Keys/request', 'Connections', 'prepared (id = $1)', 'ANY($1)', 'SQL mget', 'RESP MGET'], rows);
  for (const c of conns) {
    out += `\n**Server resources, ${c} connections**\n\n`;
    const r = [];
    for (const k of keys) {
      for (const p of paths) {
        const g = at({ path: p, keys: k, conns: c });
        if (!g.length) continue;
        r.push([k, p, cell(g, clientCores, 2), `${cell(g, (s) => fig(headline(s), 'cores'), 2)} (${cell(g, (s) => fig(headline(s), 'machine_pct'), 1)} %)`,
          cell(g, (s) => fig(headline(s), 'us_per_request'), 1), cell(g, (s) => peakMiB(headline(s)), 1)]);
      }
    }
    out += table(['Keys/request', 'Path', 'Client cores', 'Server cores (% machine)', 'Server µs/request', 'Sampled peak MiB'], r);
  }
  out += '\n**Ratios** (of the medians)\n\n';
  const ratio = (a, b, f) => fmt(medOf(at(a), f) / medOf(at(b), f), 2);
  const us = (s) => fig(headline(s), 'us_per_request');
  const r = [];
  for (const c of conns) {
    for (const k of keys) {
      for (const [a, b] of [['sql-mget', 'any'], ['resp-mget', 'any'], ['resp-mget', 'sql-mget'], ['any', 'prepared'], ['sql-mget', 'prepared']]) {
        const A = { path: a, keys: k, conns: c }, B = { path: b, keys: k, conns: c };
        if (!at(A).length || !at(B).length) continue;
        r.push([`${a} ÷ ${b}`, k, c, ratio(A, B, rps), ratio(A, B, us)]);
      }
    }
  }
  out += table(['Ratio', 'Keys', 'Conns', 'req/s', 'server µs/request'], r);
  return out;
}

const [mode, ...files] = process.argv.slice(2);
if (!files.length || !['seed000', 'seed001'].includes(mode)) {
  console.error('usage: node tables.js seed000|seed001 RESULTS.json...');
  process.exit(2);
}
const ss = samples(files);
process.stdout.write(mode === 'seed000' ? seed000(ss) : seed001(ss));
