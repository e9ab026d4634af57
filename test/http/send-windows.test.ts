import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

/** New York (America/New_York), and a North American toll-free number that the mapping spreads over 42 zones, Guam to St John's. */
const NEW_YORK = '+12127365000';
const TOLL_FREE = '+18005550100';
/** International Freephone: valid, and in no time zone. */
const NO_ZONE = '+80012345678';
const DAYTIME = { start: '09:00', end: '20:00' };

const send = (tenant: Tenant, body: Record<string, unknown>) =>
  call('POST', '/messages/send', { auth: tenant.key, body: { from: 'Dispatch', body: 'Hi', ...body } });

describe("send windows in the recipient's time zone", function () {
  this.timeout(60_000);

  it("schedules a message sent outside the window for the window's next opening in the recipient's zone, and it can be canceled", async () => {
    const tenant = await sendingTenant();
    // 23:00 in New York (EDT, UTC-4).
    harness.clock.set(new Date('2031-05-20T03:00:00Z'));
    const held = await send(tenant, { to: NEW_YORK, send_window: DAYTIME });
    expect(held.status).to.equal(201);
    expect(held.body.data).to.include({ status: 'pending', send_at: '2031-05-20T13:00:00.000Z' });
    expect(held.body.data.send_window).to.deep.equal({ ...DAYTIME, time_zone: null, time_zones: ['America/New_York'], delayed: true });
    expect((await call('GET', '/messages?scheduled=true', { auth: tenant.key })).body.data.map((message: { id: string }) => message.id)).to.deep.equal([
      held.body.data.id,
    ]);
    const canceled = await call('POST', `/messages/${held.body.data.id}/cancel`, { auth: tenant.key });
    expect(canceled.body.data.error).to.include({ code: 'canceled' });
  });

  it('sends at once inside the window, and moves a send_at outside it to the next opening, saying so', async () => {
    const tenant = await sendingTenant();
    // 11:00 in New York.
    harness.clock.set(new Date('2031-05-20T15:00:00Z'));
    const now = await send(tenant, { to: NEW_YORK, send_window: DAYTIME });
    expect(now.body.data).to.include({ send_at: null });
    expect(now.body.data.send_window).to.include({ delayed: false });
    // 21:30 in New York the same day: moved to 09:00 the next morning.
    const moved = await send(tenant, { to: NEW_YORK, send_window: DAYTIME, send_at: '2031-05-21T01:30:00Z' });
    expect(moved.body.data).to.include({ send_at: '2031-05-21T13:00:00.000Z' });
    expect(moved.body.data.send_window).to.include({ delayed: true });
    // A send_at inside the window stays.
    const kept = await send(tenant, { to: NEW_YORK, send_window: DAYTIME, send_at: '2031-05-20T20:00:00Z' });
    expect(kept.body.data).to.include({ send_at: '2031-05-20T20:00:00.000Z' });
    expect(kept.body.data.send_window).to.include({ delayed: false });
    harness.clock.reset();
    await waitForMessage(tenant, now.body.data.id, (message) => message.status !== 'pending');
  });

  it('holds a number of several zones until the window holds in every one of them', async () => {
    const tenant = await sendingTenant();
    harness.clock.set(new Date('2031-01-15T12:00:00Z'));
    const held = await send(tenant, { to: TOLL_FREE, send_window: DAYTIME });
    expect(held.status).to.equal(201);
    const sendAt = held.body.data.send_at!;
    const window = held.body.data.send_window!;
    expect(window.time_zones).to.have.length(42);
    // In every zone the local time at send_at is inside 09:00-20:00, and a minute before it is not in all of them.
    const localTime = (at: Date, zone: string) =>
      new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
    const inside = (at: Date) => window.time_zones.every((zone: string) => localTime(at, zone) >= '09:00' && localTime(at, zone) < '20:00');
    expect(inside(new Date(sendAt)), sendAt).to.equal(true);
    expect(inside(new Date(Date.parse(sendAt) - 60_000))).to.equal(false);
  });

  it('refuses a number with no known zone unless the window names time_zone, and a bad window naming its field', async () => {
    const tenant = await sendingTenant();
    harness.clock.set(new Date('2031-05-20T03:00:00Z'));
    expectError(await send(tenant, { to: NO_ZONE, send_window: DAYTIME }), 400, 'send_window_zone_unknown', 'send_window');
    const named = await send(tenant, { to: NO_ZONE, send_window: { ...DAYTIME, time_zone: 'Asia/Tokyo' } });
    expect(named.status).to.equal(201);
    // 12:00 in Tokyo: inside.
    expect(named.body.data).to.include({ send_at: null });
    expectError(await send(tenant, { to: NEW_YORK, send_window: { start: '09:00', end: '09:00' } }), 400, 'parameter_invalid', 'send_window.end');
    expectError(
      await send(tenant, { to: NEW_YORK, send_window: { ...DAYTIME, time_zone: 'Mars/Olympus' } }),
      400,
      'parameter_invalid',
      'send_window.time_zone',
    );
    expectError(await send(tenant, { to: NEW_YORK, send_window: { start: '9am', end: '20:00' } }), 400, 'parameter_invalid', 'send_window.start');
  });

  it('applies the window to each bulk recipient in its own zone, failing alone a recipient with no zone', async () => {
    const tenant = await sendingTenant();
    // 23:00 in New York, 12:00 in Tokyo... and 04:00 in London (BST).
    harness.clock.set(new Date('2031-05-20T03:00:00Z'));
    const bulk = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { from: 'Dispatch', body: 'Hi', send_window: DAYTIME, recipients: [NEW_YORK, '+447911123456', NO_ZONE] },
    });
    expect(bulk.status).to.equal(201);
    const [newYork, london, noZone] = bulk.body.data.messages;
    expect(newYork).to.include({ status: 'pending', send_at: '2031-05-20T13:00:00.000Z' });
    expect(london).to.include({ status: 'pending', send_at: '2031-05-20T08:00:00.000Z' });
    expect(noZone).to.include({ status: 'failed' });
    expect(noZone.error).to.include({ code: 'send_window_zone_unknown' });
  });

  it("applies the account's default window to sends that give none, and none to a send that passes null", async () => {
    const tenant = await sendingTenant();
    const set = await call('PATCH', '/account', { auth: tenant.key, body: { send_window: DAYTIME } });
    expect(set.status).to.equal(200);
    expect(set.body.data.send_window).to.deep.equal({ ...DAYTIME, time_zone: null });
    harness.clock.set(new Date('2031-05-20T03:00:00Z'));
    expect((await send(tenant, { to: NEW_YORK })).body.data).to.include({ send_at: '2031-05-20T13:00:00.000Z' });
    const anyHour = await send(tenant, { to: NEW_YORK, send_window: null });
    expect(anyHour.body.data).to.include({ send_at: null, send_window: null });
    expectError(
      await call('PATCH', '/account', { auth: tenant.key, body: { send_window: { start: '10:00', end: '10:00' } } }),
      400,
      'parameter_invalid',
      'send_window.end',
    );
    expect((await call('PATCH', '/account', { auth: tenant.key, body: { send_window: null } })).body.data.send_window).to.equal(null);
    expect((await send(tenant, { to: NEW_YORK })).body.data).to.include({ send_at: null });
  });

  it('previews the send time the window gives', async () => {
    const tenant = await sendingTenant();
    harness.clock.set(new Date('2031-05-20T03:00:00Z'));
    const previewed = await call('POST', '/messages/preview', { auth: tenant.key, body: { from: 'Dispatch', body: 'Hi', to: NEW_YORK, send_window: DAYTIME } });
    expect(previewed.body.data.recipients[0]).to.include({ send_at: '2031-05-20T13:00:00.000Z' });
  });
});
