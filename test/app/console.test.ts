import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import express from 'express';
import { consoleRouter } from '../../app/console.ts';
import { requestLocals } from '../../app/request-locals.ts';

describe('the console route without a build', () => {
  let server: Server;
  let origin: string;
  let empty: string;

  before(async () => {
    empty = await mkdtemp(join(tmpdir(), 'dispatch-console-dist-'));
    const app = express();
    app.use((_req, res, next) => {
      requestLocals(res).requestId = 'req_000000000000000000000000';
      next();
    });
    app.use(consoleRouter(empty));
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(empty, { recursive: true, force: true });
  });

  it('answers 503 saying to run npm install, as HTML to a browser and as the error envelope to a program', async () => {
    const page = await fetch(`${origin}/console/messages`, { headers: { accept: 'text/html' } });
    expect(page.status).to.equal(503);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(await page.text()).to.include('npm install');

    const program = await fetch(`${origin}/console/`, { headers: { accept: 'application/json' } });
    expect(program.status).to.equal(503);
    const body = (await program.json()) as { success: boolean; error: { code: string; message: string }; meta: { request_id: string } };
    expect(body).to.deep.include({ success: false });
    expect(body.error.code).to.equal('console_not_built');
    expect(body.error.message).to.include('npm install');
    expect(body.meta.request_id).to.equal('req_000000000000000000000000');
  });

  it('sends /console to /console/, where the application is', async () => {
    const response = await fetch(`${origin}/console?x=1`, { redirect: 'manual' });
    expect([response.status, response.headers.get('location')]).to.deep.equal([302, '/console/?x=1']);
  });
});
