import { expect } from 'chai';
import { EventTail, type Event } from '../../cli/tail.ts';
import type { Message, Page } from '../../sdk/index.ts';
import { eventually, sendingTenant } from '../support/fixtures.ts';
import { cliEnv, cliJson, finished, startCli } from './run-cli.ts';

describe('dispatch events tail', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('--json prints the events of a message sent meanwhile, once each, and exits 0 on Ctrl-C', async () => {
    const tenant = await sendingTenant();
    const since = new Date().toISOString();
    const child = startCli(['events', 'tail', '--json', '--interval', '100', '--since', since], cliEnv({ DISPATCH_API_KEY: tenant.key }));
    const result = finished(child);
    let stdout = '';
    child.stdout.on('data', (chunk: string) => (stdout += chunk));

    const send = (body: string) => cliJson<Message>(['send', '--to', '+14155550123', '--from', 'Dispatch', '--body', body], { apiKey: tenant.key });
    // Whole lines only: a chunk may end in the middle of one.
    const lines = () =>
      stdout
        .slice(0, stdout.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Event);
    const printed = (id: string, type: string) =>
      eventually(
        () => lines(),
        (events) => events.some((event) => event.data.id === id && event.type === type),
        { timeoutMs: 25_000, what: `${type} of ${id} on stdout` },
      );
    const message = await send('Tail me');
    await printed(message.id, 'message.delivered');
    // A repeat would come from a later poll: a second message's events, printed only by later
    // polls, show that the tail has moved on past the first message's.
    const later = await send('And me');
    await printed(later.id, 'message.delivered');
    child.kill('SIGINT');
    const { code, stderr } = await result;

    expect(code, stderr).to.equal(0);
    expect(stderr).to.equal('');
    const events = lines();
    expect(events.map((event) => [event.data.id, event.type])).to.deep.equal([
      [message.id, 'message.sent'],
      [message.id, 'message.delivered'],
      [later.id, 'message.sent'],
      [later.id, 'message.delivered'],
    ]);
    expect(events.every((event) => event.object === 'event')).to.equal(true);
    expect(new Set(events.map((event) => event.id)).size).to.equal(events.length);
  });

  it('a bad key exits 1 at once', async () => {
    const child = startCli(['events', 'tail', '--type', 'message.failed', '--interval', '100'], cliEnv({ DISPATCH_API_KEY: 'ds_live_wrong' }));
    const { code, stderr } = await finished(child);
    expect(code).to.equal(1);
    expect(stderr).to.include('(unauthorized');
  });
});

describe('cli/tail.ts', () => {
  const T0 = Date.parse('2025-11-21T14:00:00.000Z');
  let counter = 0;
  const event = (ms: number, id = `evt_${String(++counter).padStart(24, '0')}`): Event =>
    ({ id, object: 'event', type: 'message.sent', created_at: new Date(T0 + ms).toISOString(), data: {} }) as unknown as Event;

  /** A fake GET /events over `store` (any order), newest first, `limit` per page. */
  function lister(store: Event[], limit = 2) {
    const calls: number[] = [];
    const list = (page: number): Promise<Page<Event>> => {
      calls.push(page);
      const sorted = [...store].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (b.id < a.id ? -1 : 1));
      const data = sorted.slice((page - 1) * limit, page * limit);
      return Promise.resolve({
        data,
        pagination: { page, limit, total: sorted.length, pages: Math.ceil(sorted.length / limit), has_more: page * limit < sorted.length },
      });
    };
    return { list, calls };
  }

  it('yields events from `since` on, oldest first, reading back page after page', async () => {
    const store = [event(-5), event(1), event(2), event(3), event(4), event(5)];
    const { list } = lister(store);
    const tail = new EventTail({ list, since: T0 });
    expect((await tail.poll()).map((e) => e.created_at)).to.deep.equal([1, 2, 3, 4, 5].map((ms) => new Date(T0 + ms).toISOString()));
    expect(await tail.poll()).to.deep.equal([]);
  });

  it('never yields an event twice, and misses none created in the same millisecond or committed late', async () => {
    const store: Event[] = [event(10)];
    const { list } = lister(store);
    const tail = new EventTail({ list, since: T0, windowMs: 1000 });
    expect(await tail.poll()).to.have.length(1);

    // Two more in the very millisecond of the first, and one a little older committed only now.
    const same = [event(10), event(10)];
    const late = event(-0 + 5);
    store.push(...same, late);
    const second = await tail.poll();
    expect(second.map((e) => e.id).sort()).to.deep.equal([...same, late].map((e) => e.id).sort());
    expect(second[0].id).to.equal(late.id);

    // Pages shift as new events arrive: repeats are absorbed.
    store.push(event(20), event(20), event(21));
    const third = await tail.poll();
    expect(third).to.have.length(3);
    expect(await tail.poll()).to.deep.equal([]);
  });

  it('forgets ids outside the window and stops reading pages at the floor', async () => {
    const store = Array.from({ length: 10 }, (_, i) => event(i * 1000));
    const { list, calls } = lister(store, 2);
    const tail = new EventTail({ list, since: T0, windowMs: 1500 });
    expect(await tail.poll()).to.have.length(10);
    calls.length = 0;
    store.push(event(9500));
    expect((await tail.poll()).map((e) => e.created_at)).to.deep.equal([new Date(T0 + 9500).toISOString()]);
    // floor = 9500 - 1500 = 8000: pages 1 (9500, 9000) and 2 (8000, 7000) are enough.
    expect(calls).to.deep.equal([1, 2]);
  });
});
