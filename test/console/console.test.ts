import { join } from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import {
  consoleNav,
  openConsoleBrowser,
  openView,
  seriousViolations,
  signInToConsole,
  DESKTOP,
  PHONE,
  SCREENSHOTS,
  WAIT_MS,
  type ConsoleBrowser,
} from '../support/browser.ts';
import { call } from '../support/client.ts';
import { createAdminKey, sendingTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

/** Names of the controls that change something: none may be shown to a key without the scope. */
const WRITE_CONTROL = /^(Send|Schedule|Cancel|Create|Revoke|Add|Remove|Delete|Rotate|Register|Save|Disable|Enable|Resend)/;
const RECIPIENT = '+14155550123';

// What the functions run in the page use of the browser's globals (tsconfig has no DOM library).
declare const document: { readonly activeElement: { readonly textContent: string | null } | null };
declare const sessionStorage: { readonly length: number };

/** `date` in the browser's local time, as an `<input type="datetime-local">` takes it (the browser runs in this process's zone). */
function localInput(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

describe('the console in a browser (headless Chromium)', () => {
  let browser: ConsoleBrowser | undefined;
  let page: Page;
  let tenant: Tenant;
  let origin: string;

  const nav = () => consoleNav(page);
  const main = () => page.locator('main');
  const focusedText = () => page.evaluate(() => document.activeElement?.textContent ?? null);

  const signIn = (token: string) => signInToConsole(page, origin, token);
  const open = (label: string) => openView(page, label);

  /** A new form each time: the Send view keeps what was typed while it stays open. */
  async function fillMessage(body: string): Promise<void> {
    await page.goto(`${origin}/console/send`);
    await page.getByLabel('To', { exact: true }).fill(RECIPIENT);
    await page.getByLabel('From (an approved sender ID)').fill('Dispatch');
    await page.getByLabel('Message', { exact: true }).fill(body);
  }

  before(async function () {
    this.timeout(60_000);
    origin = new URL(harness.baseUrl).origin;
    tenant = await sendingTenant();
    browser = await openConsoleBrowser(origin);
    page = browser.page;
    await signIn(tenant.key);
  });

  after(async function () {
    this.timeout(30_000);
    await browser?.close();
  });

  it('answers client routes under /console/ with the application, and a missing asset with 404', async () => {
    for (const path of ['/console/', '/console/messages/msg_x']) {
      const response = await fetch(`${origin}${path}`, { headers: { accept: 'text/html' } });
      expect(response.status, path).to.equal(200);
      expect(await response.text(), path).to.include('<div id="root">');
    }
    expect((await fetch(`${origin}/console/assets/missing.js`)).status).to.equal(404);
  });

  it('sends a message from the form once the preview shows its segments and price, sees it delivered in the log, and opens its timeline', async function () {
    this.timeout(60_000);
    await fillMessage('Hello from the console');
    // The route's price is 0.01 a segment.
    await page.getByTestId('preview-summary').filter({ hasText: 'GSM-7 · 1 segment · $0.01' }).waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Message accepted' }).waitFor();

    await open('Messages');
    const row = main()
      .locator('tbody tr', { hasText: RECIPIENT })
      .filter({ has: page.locator('.status-delivered') });
    await row.first().waitFor({ timeout: WAIT_MS });
    await row.first().getByRole('link').click();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await page.getByRole('list', { name: 'Timeline' }).getByText('Status delivered').waitFor();
    expect(await page.getByTestId('message-status').textContent()).to.equal('delivered');
  });

  it('shows the characters that force UCS-2 where they are in the text, and what smart encoding would send', async () => {
    await fillMessage('Price “10” now');
    await page.getByTestId('preview-summary').filter({ hasText: 'UCS-2' }).waitFor();
    expect(await page.getByTestId('preview-body').locator('mark').allTextContents()).to.deep.equal(['“', '”']);
    await page.getByText('Smart encoding would send it as GSM-7').waitFor();
  });

  it('schedules a message and cancels it', async function () {
    this.timeout(30_000);
    await fillMessage('Scheduled from the console');
    await page.getByText('Scheduling and validity').click();
    await page.getByLabel('Send at').fill(localInput(new Date(Date.now() + 24 * 3_600_000)));
    await page.getByTestId('preview-summary').waitFor();
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Message accepted' }).getByRole('link').click();
    await page.getByRole('button', { name: 'Cancel this scheduled message' }).click();
    await page.getByTestId('message-status').filter({ hasText: 'failed' }).waitFor();
    await page.getByText('canceled').first().waitFor();
  });

  it('creates a key, shows it once with a copy button, and revokes it', async () => {
    await open('Keys');
    await page.getByLabel('Name', { exact: true }).fill('Console test key');
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.getByTestId('plain-key').textContent()).to.match(/^ds_live_/);
    await page.getByRole('button', { name: 'Copy key' }).waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('plain-key').count(), 'the plain key, once dismissed').to.equal(0);
    const row = main().locator('tbody tr', { hasText: 'Console test key' });
    await row.getByRole('button', { name: 'Revoke Console test key' }).click();
    await row.getByRole('button', { name: 'Revoke', exact: true }).click();
    await row.getByText('revoked').waitFor();
  });

  it('adds a webhook endpoint, sends it a test event and shows the attempt with its response code', async function () {
    this.timeout(30_000);
    const receiver = await WebhookReceiver.start();
    try {
      await open('Webhooks');
      await page.getByLabel('URL').fill(receiver.url);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('button', { name: 'Copy secret' }).waitFor();
      await page.getByRole('button', { name: 'Done' }).click();
      const card = main().locator('article', { hasText: receiver.url });
      await card.getByRole('button', { name: 'Send test event' }).click();
      await card.getByTestId('attempt-response').filter({ hasText: '200' }).first().waitFor({ timeout: WAIT_MS });
      expect(receiver.received.length).to.be.greaterThan(0);
    } finally {
      await receiver.stop();
    }
  });

  it('has no serious or critical accessibility violation on each main view, and saves screenshots at desktop and phone widths', async function () {
    this.timeout(90_000);
    const views = ['Messages', 'Send', 'Insights', 'Balance', 'Keys', 'Senders', 'Webhooks', 'Inbound', 'Opt-outs'];
    const shots = new Set(['Messages', 'Send', 'Insights', 'Webhooks']);
    const violations: string[] = [];
    for (const view of views) {
      await page.setViewportSize(DESKTOP);
      await open(view);
      // Each view has loaded once no request is pending and its loading text is gone.
      await page.waitForLoadState('networkidle');
      if (view === 'Insights') await page.locator('.figures').waitFor();
      // The Send view is checked, and shown, with its preview.
      if (view === 'Send') {
        await page.getByLabel('To', { exact: true }).fill(RECIPIENT);
        await page.getByLabel('From (an approved sender ID)').fill('Dispatch');
        await page.getByLabel('Message', { exact: true }).fill('Your order “A-1042” ships today');
        await page.getByTestId('preview-summary').waitFor();
      }
      violations.push(...(await seriousViolations(page, view, view === views[0])));
      if (!shots.has(view)) continue;
      const name = view.toLowerCase();
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-desktop.png`) });
      await page.setViewportSize(PHONE);
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-phone.png`) });
    }
    await page.setViewportSize(DESKTOP);
    expect(violations).to.deep.equal([]);
  });

  it('can be used with the keyboard alone: the first Tab reaches the skip link, which leads to the content', async () => {
    await open('Messages');
    await page.reload();
    await nav().waitFor();
    await page.keyboard.press('Tab');
    expect(await focusedText()).to.equal('Skip to content');
    await page.keyboard.press('Enter');
    expect(page.url()).to.match(/#main$/);
    await page.keyboard.press('Tab');
    expect(await focusedText(), 'the first control after the skip link').to.not.equal('Skip to content');
  });

  it('gives a key that only reads (sms:read) a console without a control that writes', async function () {
    this.timeout(30_000);
    const reader = await createAdminKey(tenant.accountId, { name: 'Reader', permissions: ['sms:read'] });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key or operator token').waitFor();
    await signIn(reader.plain_key);
    expect(await nav().getByRole('link').allTextContents()).to.deep.equal(['Messages', 'Insights', 'Inbound', 'Opt-outs']);
    for (const view of ['Messages', 'Inbound', 'Opt-outs']) {
      await open(view);
      await page.waitForLoadState('networkidle');
      const writes = (await main().getByRole('button').allTextContents()).filter((name) => WRITE_CONTROL.test(name.trim()));
      expect(writes, view).to.deep.equal([]);
      expect(await main().getByRole('link', { name: WRITE_CONTROL }).count(), view).to.equal(0);
    }
    // A scheduled message, still cancelable by a key that may send: its detail shows no Cancel to this one.
    const sendAt = new Date(Date.now() + 24 * 3_600_000).toISOString();
    const scheduled = await call('POST', '/messages/send', { auth: tenant.key, body: { to: RECIPIENT, from: 'Dispatch', body: 'Later', send_at: sendAt } });
    expect(scheduled.status, JSON.stringify(scheduled.body)).to.equal(201);
    await page.goto(`${origin}/console/messages/${scheduled.body.data.id}`);
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    expect((await main().getByRole('button').allTextContents()).filter((name) => WRITE_CONTROL.test(name.trim()))).to.deep.equal([]);
  });

  it('forgets the credentials on sign-out, and loaded nothing from another host (no CDN)', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key or operator token').waitFor();
    expect(await page.evaluate(() => sessionStorage.length), 'items left in sessionStorage').to.equal(0);
    expect(browser?.foreign).to.deep.equal([]);
    expect(browser?.pageErrors).to.deep.equal([]);
  });
});
