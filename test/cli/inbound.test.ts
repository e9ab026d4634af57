import { expect } from 'chai';
import { InboundTail } from '../../cli/inbound-tail.ts';
import type { InboundMessage, Page } from '../../sdk/index.ts';
import { eventually } from '../support/fixtures.ts';
import { inboundTenant, randomHandset, simulateInbound, type InboundTenant } from '../support/inbound.ts';
import { cli, cliEnv, cliJson, finished, startCli } from './run-cli.ts';

describe('dispatch inbound', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  let tenant: InboundTenant;
  before(async () => {
    tenant = await inboundTenant();
  });
  const reply = (from: string, body: string) => simulateInbound(tenant.routeId, { from, to: tenant.number, body });
  /**
   * Takes this machine's clock (Dispatch and its database run on it) and waits until it has moved
   * on: what was stored before the call is stored at or before the answer, what is stored after it
   * is stored after it.
   */
  const instant = async () => {
    const time = Date.now();
    await eventually(
      () => Date.now(),
      (now) => now > time,
      { what: 'the clock to move on' },
    );
    return time;
  };
  const iso = (time: number) => new Date(time).toISOString();

  it('list prints the inbound messages, newest first, filtered by from, to and time', async () => {
    const [alice, bob] = [randomHandset(), randomHandset()];
    const first = await reply(alice, 'Can I move my delivery to Friday?');
    const afterFirst = await instant();
    const second = await reply(bob, 'Stop.');
    const beforeThird = await instant();
    const third = await reply(alice, 'Thanks!');

    const human = await cli(['inbound', 'list', '--to', tenant.number], { apiKey: tenant.key });
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout)
      .to.include(first.id)
      .and.include('Can I move my delivery to Friday?')
      .and.include('STOP')
      .and.include('Page 1 of 1 (3 inbound messages)');
    expect(human.stdout.indexOf(third.id)).to.be.lessThan(human.stdout.indexOf(second.id));

    const fromAlice = await cliJson<Page<InboundMessage>>(['inbound', 'list', '--from', alice], { apiKey: tenant.key });
    expect(fromAlice.data.map((message: InboundMessage) => message.id)).to.deep.equal([third.id, first.id]);
    expect(fromAlice.data[1]).to.include({ object: 'inbound_message', from: alice, to: tenant.number, keyword: null });
    const window = await cliJson<Page<InboundMessage>>(['inbound', 'list', '--created-after', iso(afterFirst), '--created-before', iso(beforeThird + 1)], {
      apiKey: tenant.key,
    });
    expect(window.data.map((message: InboundMessage) => message.id)).to.deep.equal([second.id]);
    expect((await cli(['inbound', 'list', '--from', bob, '--to', '+19999999999'], { apiKey: tenant.key })).stdout).to.equal('No inbound messages.\n');

    const bad = await cli(['inbound', 'list', '--from', 'nope'], { apiKey: tenant.key });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('param from');
  });

  it('tail --json prints each message stored after it started, once, oldest first, and exits 0 on Ctrl-C', async () => {
    const handset = randomHandset();
    const before = await reply(handset, 'Before the tail');
    // --since includes its own millisecond: from the one after `before` was stored by.
    const since = iso((await instant()) + 1);
    const child = startCli(['inbound', 'tail', '--json', '--interval', '100', '--since', since], cliEnv({ DISPATCH_API_KEY: tenant.key }));
    const result = finished(child);
    let stdout = '';
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    // Whole lines only: a chunk may end in the middle of one.
    const lines = () =>
      stdout
        .slice(0, stdout.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as InboundMessage);
    const printed = (id: string) =>
      eventually(
        () => lines(),
        (messages) => messages.some((message) => message.id === id),
        { timeoutMs: 25_000, what: `${id} on stdout` },
      );

    const first = await reply(handset, 'Hello?');
    await printed(first.id);
    const second = await reply(handset, 'stop');
    const third = await reply(randomHandset(), 'Where is my parcel?');
    await printed(third.id);
    // Later polls re-read the last seconds: a fourth message, printed only by a later poll, shows they print no repeat.
    const fourth = await reply(handset, 'start');
    await printed(fourth.id);
    child.kill('SIGINT');
    const { code, stderr } = await result;

    expect(code, stderr).to.equal(0);
    expect(stderr).to.equal('');
    expect(lines().map((message) => message.id))
      .to.deep.equal([first.id, second.id, third.id, fourth.id])
      .and.not.include(before.id);
    expect(lines()[1]).to.include({ object: 'inbound_message', body: 'stop', keyword: 'STOP', from: handset, to: tenant.number });
  });

  it('tail prints a readable line per message; a bad key exits 1 at once', async () => {
    const child = startCli(['inbound', 'tail', '--interval', '100'], cliEnv({ DISPATCH_API_KEY: tenant.key }));
    const result = finished(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    // The note says the tail has taken its start time: a message sent after it is printed.
    await eventually(
      () => stderr,
      (text) => text.includes('Following inbound messages since'),
      { timeoutMs: 25_000, what: 'the tail to start' },
    );
    const handset = randomHandset();
    const message = await reply(handset, 'HELP');
    await eventually(
      () => stdout,
      (text) => text.includes(message.id),
      { timeoutMs: 25_000, what: `${message.id} on stdout` },
    );
    child.kill('SIGTERM');
    expect((await result).code).to.equal(0);
    expect(stdout).to.equal(`${message.received_at}  ${message.id}  ${handset} -> ${tenant.number}  [HELP]  "HELP"\n`);

    const refused = await finished(startCli(['inbound', 'tail', '--interval', '100'], cliEnv({ DISPATCH_API_KEY: 'ds_live_wrong' })));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('(unauthorized');
  });
});

describe('cli/inbound-tail.ts', () => {
  const T0 = Date.parse('2025-11-21T14:00:00.000Z');
  let counter = 0;
  /** A fake GET /inbound-messages over messages with the time each was stored, `limit` a page. */
  function server(limit = 2) {
    const store: { message: InboundMessage; storedAt: number }[] = [];
    const asked: string[] = [];
    const add = (storedAt: number) => {
      const message = { id: `inb_${String(++counter).padStart(24, '0')}`, received_at: new Date(T0 + storedAt - 50).toISOString() } as InboundMessage;
      store.push({ message, storedAt: T0 + storedAt });
      return message;
    };
    const list = ({ created_after, page }: { created_after: string; page: number }): Promise<Page<InboundMessage>> => {
      asked.push(`${new Date(created_after).getTime() - T0}/${page}`);
      const after = store
        .filter((item) => item.storedAt > Date.parse(created_after))
        .sort((a, b) => b.storedAt - a.storedAt || (b.message.id < a.message.id ? -1 : 1));
      const data = after.slice((page - 1) * limit, page * limit).map((item) => item.message);
      return Promise.resolve({
        data,
        pagination: { page, limit, total: after.length, pages: Math.ceil(after.length / limit), has_more: page * limit < after.length },
      });
    };
    return { add, list, asked };
  }

  it('yields what was stored from `since` on, oldest first, reading every page; nothing twice', async () => {
    const { add, list } = server();
    add(-10);
    const stored = [add(0), add(1), add(2), add(3), add(4)];
    let now = T0 + 5;
    const tail = new InboundTail({ list, since: T0, windowMs: 1000, now: () => now });
    expect((await tail.poll()).map((message) => message.id)).to.deep.equal(stored.map((message) => message.id));
    now += 100;
    expect(await tail.poll()).to.deep.equal([]);
  });

  it('catches a message committed after a newer one (stored earlier, listed later) within the window', async () => {
    const { add, list } = server();
    let now = T0 + 100;
    const tail = new InboundTail({ list, since: T0, windowMs: 1000, now: () => now });
    const newer = add(50);
    expect((await tail.poll()).map((message) => message.id)).to.deep.equal([newer.id]);
    now = T0 + 600;
    const late = add(40); // stored before `newer`, committed only now
    const next = add(550);
    expect((await tail.poll()).map((message) => message.id)).to.deep.equal([late.id, next.id]);
  });

  it('moves its floor to the window behind its own clock, and forgets ids once that floor is a window past them', async () => {
    const { add, list, asked } = server();
    let now = T0;
    let ignoreFloor = false;
    // A server that lists everything stored, whatever the floor: what a clock far behind this one would do.
    const skewed = (query: { created_after: string; page: number }) => list(ignoreFloor ? { ...query, created_after: new Date(0).toISOString() } : query);
    const tail = new InboundTail({ list: skewed, since: T0, windowMs: 1000, now: () => now });
    const early = add(0);
    now = T0 + 10;
    expect(await tail.poll()).to.have.length(1);
    now = T0 + 1500;
    expect(await tail.poll()).to.deep.equal([]);
    ignoreFloor = true;
    expect(await tail.poll(), 'remembered while the floor (500) could still list it').to.deep.equal([]);
    now = T0 + 9000;
    ignoreFloor = false;
    const later = add(8990);
    expect((await tail.poll()).map((message) => message.id)).to.deep.equal([later.id]);
    ignoreFloor = true;
    expect(
      (await tail.poll()).map((message) => message.id),
      'forgotten once the floor (8000) is past it by a window',
    ).to.deep.equal([early.id]);
    // since - 1, then the floor trails each poll's clock by the window.
    expect(asked.slice(0, 4)).to.deep.equal(['-1/1', '-1/1', `${-T0}/1`, '499/1']);
  });
});
