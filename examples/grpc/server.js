// The Greeter service of internal/grpcephemeral/greeter.proto on
// @grpc/grpc-js: every method answers as the grpc-go server of package
// grpcephemeral does (greeter.go), Missing is declared and not
// implemented (UNIMPLEMENTED). Server reflection is served when
// @grpc/reflection is installed.
//
//   node server.js [--port N] [--tls CERT KEY]
//
// The port is --port, else $PORT, else 0 (a free one); it listens on
// 127.0.0.1 and its first line on standard output is
// "listening on 127.0.0.1:PORT". Plaintext HTTP/2 (h2c) unless --tls names
// a PEM certificate chain and its private key. On SIGTERM or SIGINT it stops
// taking calls, lets the running ones finish for at most 2 s, cuts the rest,
// writes the calls and request messages it served to standard error, and
// exits 0.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const protoFile = path.join(__dirname, '..', '..', 'internal', 'grpcephemeral', 'greeter.proto');
const serviceName = 'benchrig.test.v1.Greeter';

// Bounds of the requests, beyond which a call is INVALID_ARGUMENT (as in
// greeter.go).
const maxSleepMS = 60000;
const maxLotsCount = 1000000;
const shutdownGraceMS = 2000;

// usage ends the process with a message naming what was wrong.
function usage(msg) {
  process.stderr.write(`server.js: ${msg}\nusage: node server.js [--port N] [--tls CERT KEY]\n`);
  process.exit(2);
}

// parsePort reads a TCP port (0–65535; 0: a free one) from what.
function parsePort(text, what) {
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > 65535) {
    usage(`${what}: want a port 0–65535, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

// parseArgs reads the command line.
function parseArgs(argv) {
  const opts = { port: null, tls: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port') {
      if (i + 1 >= argv.length) usage('--port: missing its value');
      opts.port = parsePort(argv[++i], '--port');
    } else if (a === '--tls') {
      if (i + 2 >= argv.length) usage('--tls: want two files, CERT and KEY');
      opts.tls = { cert: argv[++i], key: argv[++i] };
    } else {
      usage(`unexpected argument ${JSON.stringify(a)}`);
    }
  }
  if (opts.port === null) {
    opts.port = process.env.PORT ? parsePort(process.env.PORT, '$PORT') : 0;
  }
  return opts;
}

// A status error for a handler's callback or a stream's 'error' event.
function statusError(code, details) {
  return { code, details };
}

// The counts written at exit, as cmd/greeter-server writes them.
let calls = 0;
let messages = 0;

// sayHello answers "hello " + name, with the request's id.
function sayHello(call, callback) {
  calls++;
  messages++;
  callback(null, { message: 'hello ' + call.request.name, id: call.request.id });
}

// fail answers with the status asked for: code 0 is OK (reply "ok"), 1–16
// that code with the message, anything else INVALID_ARGUMENT.
function fail(call, callback) {
  calls++;
  messages++;
  const code = call.request.code;
  if (code === 0) {
    callback(null, { message: 'ok', id: 0 });
  } else if (code < 1 || code > 16) {
    callback(statusError(grpc.status.INVALID_ARGUMENT, `code ${code} out of range`));
  } else {
    callback(statusError(code, call.request.message));
  }
}

// sleep answers "slept N ms" (id N) after ms milliseconds (0–60000); a
// call that ends first (deadline, cancel) is answered by grpc-js itself.
function sleep(call, callback) {
  calls++;
  messages++;
  const ms = Number(call.request.ms);
  if (!Number.isInteger(ms) || ms < 0 || ms > maxSleepMS) {
    callback(statusError(grpc.status.INVALID_ARGUMENT, `ms ${call.request.ms} out of range 0–${maxSleepMS}`));
    return;
  }
  const timer = setTimeout(() => callback(null, { message: `slept ${ms} ms`, id: ms }), ms);
  call.on('cancelled', () => clearTimeout(timer));
}

// lots streams count replies (0–1,000,000), "hello NAME I" with id I from
// 0, waiting for the stream to drain when its buffer is full.
function lots(call) {
  calls++;
  messages++;
  const count = call.request.count;
  if (count < 0 || count > maxLotsCount) {
    call.emit('error', statusError(grpc.status.INVALID_ARGUMENT, `count ${count} out of range 0–${maxLotsCount}`));
    return;
  }
  const prefix = 'hello ' + call.request.name + ' ';
  let i = 0;
  let cancelled = false;
  call.on('cancelled', () => { cancelled = true; });
  const more = () => {
    while (i < count && !cancelled) {
      const ok = call.write({ message: prefix + i, id: i });
      i++;
      if (!ok) {
        call.once('drain', more);
        return;
      }
    }
    if (!cancelled) call.end();
  };
  more();
}

// collect reads the requests to the end and answers "collected N", id N.
function collect(call, callback) {
  calls++;
  let n = 0;
  call.on('data', () => { n++; messages++; });
  call.on('end', () => callback(null, { message: `collected ${n}`, id: n }));
}

// chat answers each request with "hello " + name and its id.
function chat(call) {
  calls++;
  call.on('data', (req) => {
    messages++;
    call.write({ message: 'hello ' + req.name, id: req.id });
  });
  call.on('end', () => call.end());
}

// reflectionOf returns @grpc/reflection's service for the package, or null
// when the package is not installed.
function reflectionOf(pkgDef) {
  let ReflectionService;
  try {
    ({ ReflectionService } = require('@grpc/reflection'));
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err;
    return null;
  }
  return new ReflectionService(pkgDef);
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  // keepCase: the JSON field names of the .proto (name, id, …); longs as
  // strings, so that an int64 id goes back as it came, whole.
  const pkgDef = protoLoader.loadSync(protoFile, {
    keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
  });
  const Greeter = grpc.loadPackageDefinition(pkgDef).benchrig.test.v1.Greeter;
  if (!Greeter || !Greeter.service) {
    process.stderr.write(`server.js: ${protoFile} declares no service ${serviceName}\n`);
    process.exit(1);
  }
  const server = new grpc.Server();
  // Missing is left out: grpc-js answers it UNIMPLEMENTED.
  server.addService(Greeter.service, { SayHello: sayHello, Fail: fail, Sleep: sleep, Lots: lots, Collect: collect, Chat: chat });
  const reflection = reflectionOf(pkgDef);
  if (reflection) reflection.addToServer(server);

  let creds = grpc.ServerCredentials.createInsecure();
  if (opts.tls) {
    let cert, key;
    try {
      cert = fs.readFileSync(opts.tls.cert);
      key = fs.readFileSync(opts.tls.key);
    } catch (err) {
      usage(`--tls: ${err.message}`);
    }
    creds = grpc.ServerCredentials.createSsl(null, [{ cert_chain: cert, private_key: key }], false);
  }
  server.bindAsync(`127.0.0.1:${opts.port}`, creds, (err, port) => {
    if (err) {
      process.stderr.write(`server.js: listen on 127.0.0.1:${opts.port}: ${err.message}\n`);
      process.exit(1);
    }
    // A pipe's writes are synchronous on Linux: the line is out now.
    process.stdout.write(`listening on 127.0.0.1:${port}\n`);
  });

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const done = () => {
      process.stderr.write(`server.js: served ${calls} calls, ${messages} request messages\n`);
      process.exit(0);
    };
    const cut = setTimeout(() => { server.forceShutdown(); done(); }, shutdownGraceMS);
    server.tryShutdown(() => { clearTimeout(cut); done(); });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
