'use strict';
// Seed 002 on NestJS with its Express adapter (@nestjs/platform-express):
// the four workloads and /metrics; the POST body is checked by Nest's
// ValidationPipe against a class-validator DTO with the same fields as the
// hand-written check. Plain JavaScript: the decorators are applied by
// hand (what TypeScript would emit), so no compiler is needed.
require('reflect-metadata');
const { Module, Controller, Get, Post, Body, Header, ValidationPipe } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { ExpressAdapter } = require('@nestjs/platform-express');
const v = require('class-validator');
const c = require('./common');

// The POST body: name (1–64 characters), age (integer 0–150), email
// (3–254 characters, containing '@').
class Person {}
const field = (name, ...decorators) => decorators.forEach((d) => d(Person.prototype, name));
field('name', v.IsString(), v.Length(1, 64));
field('age', v.IsInt(), v.Min(0), v.Max(150));
field('email', v.IsString(), v.Length(3, 254), v.Contains('@'));

class AppController {
  hello() { return c.HELLO; }
  json() { return c.SMALL; }
  validate(body) { return c.accepted(body); }
  async wait() { return c.dependency(); }
  metrics() { return c.metrics(); }
}
const route = (decorators, name) => {
  const proto = AppController.prototype;
  const desc = Object.getOwnPropertyDescriptor(proto, name);
  for (const d of decorators) d(proto, name, desc);
  Object.defineProperty(proto, name, desc);
};
route([Get('hello'), Header('Content-Type', 'text/plain; charset=utf-8')], 'hello');
route([Get('json')], 'json');
route([Post('validate')], 'validate');
route([Get('await')], 'wait');
route([Get('metrics'), Header('Content-Type', c.METRICS_TYPE)], 'metrics');
// @Body() on validate's first parameter, typed Person (what
// emitDecoratorMetadata would record), and 200 instead of Nest's 201 for POST.
Body()(AppController.prototype, 'validate', 0);
Reflect.defineMetadata('design:paramtypes', [Person], AppController.prototype, 'validate');
require('@nestjs/common').HttpCode(200)(AppController.prototype, 'validate', Object.getOwnPropertyDescriptor(AppController.prototype, 'validate'));
Controller()(AppController);

class AppModule {}
Module({ controllers: [AppController] })(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: ['error'] });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  app.enableShutdownHooks();
  await app.listen(c.port(), c.HOST);
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
