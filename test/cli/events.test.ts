import { expect } from 'chai';
import { EventTail, type Event } from '../../cli/tail.ts';
import type { Page } from '../../sdk/index.ts';
import { sendingTenant } from '../support/fixtures.ts';
import { cliEnv, cliJson, finished, startCli } from './run-cli.ts';

describe('dispatch events tail', () => {
  it('--json prints the events of a message sent meanwhile, once each, and exits 0 on Ctrl-C', async () => {
    const tenant = await sendingTenant();
    const since = new Date().toISOString();
    const child = startCli(['events', 'tail', '--json', '--interval', '100', '--since', since], cliEnv({ DISPATCH_API_KEY: tenant.key }));
    const result = finished(child);
    let stdout = '';
    child.stdout.on('data', (chunk: string) => (stdout += chunk));

    const message = await cliJson(['send', '--to', '+14155550123', '--from', 'Dispatch', '--body', 'Tail me'], { apiKey: tenant.key });
    const lines = () => stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Event);
    const deadline = Date.now() + 15_000;
    while (!lines().some((event) => event.type === 'message.delivered')) {
      if (Date.now() > deadline) throw new Error(`no message.delivered event in time; stdout: ${stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 400)); // a few more polls: nothing may come twice
    child.kill('SIGINT');
    const { code, stderr } = await result;

    expect(code, stderr).to.equal(0);
    expect(stderr).to.equal('');
    const events = lines();
    expect(events.map((event) => event.type)).to.deep.equal(['message.sent', 'message.delivered']);
    expect(events.every((event) => event.object === 'event' && event.data.id === message.id)).to.equal(true);
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
    const list = async (page: number): Promise<Page<Event>> => {
      calls.push(page);
      const sorted = [...store].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (b.id < a.id ? -1 : 1));
      const data = sorted.slice((page - 1) * limit, page * limit);
      return { data, pagination: { page, limit, total: sorted.length, pages: Math.ceil(sorted.length / limit), has_more: page * limit < sorted.length } };
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
