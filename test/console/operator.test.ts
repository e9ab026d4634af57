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
  type ConsoleBrowser,
} from '../support/browser.ts';
import { call } from '../support/client.ts';
import { createOperator, createTenant, eventually, receivingEndpoint, sendingTenant, type Tenant } from '../support/fixtures.ts';
import { ADMIN_TOKEN, harness } from '../support/harness.ts';
import type { WebhookReceiver } from '../support/webhook-receiver.ts';
import { randomBase62 } from '../../domain/ids.ts';

/** A number no other test sends to: the search across accounts finds this test's message alone. */
const NUMBER = '+14155559876';

describe("the console's operator section in a browser (headless Chromium)", () => {
  let browser: ConsoleBrowser | undefined;
  let page: Page;
  let origin: string;
  let tenant: Tenant;
  let messageId: string;
  let supportToken: string;
  let receiver: WebhookReceiver | undefined;

  const main = () => page.locator('main');
  const signIn = (token: string) => signInToConsole(page, origin, token);
  const open = (label: string) => openView(page, label);
  async function signOut(): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key or operator token').waitFor();
  }

  before(async function () {
    this.timeout(60_000);
    origin = new URL(harness.baseUrl).origin;
    tenant = await sendingTenant();
    ({ receiver } = await receivingEndpoint(tenant, 200));
    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: NUMBER, from: 'Dispatch', body: 'Where is my parcel?' } });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    messageId = sent.body.data.id;
    // Delivered, and its webhook deliveries recorded: the story the test opens is complete.
    await eventually(
      async () => (await call('GET', `/admin/messages/${messageId}/story`, { auth: 'admin' })).body.data,
      (story) => story.message.status === 'delivered' && story.entries.filter((entry) => entry.kind === 'webhook_delivery').length >= 2,
      { what: 'the delivered message with its webhook deliveries' },
    );
    browser = await openConsoleBrowser(origin);
    page = browser.page;
  });

  after(async function () {
    this.timeout(30_000);
    await browser?.close();
    await receiver?.stop();
  });

  it('lets root (the admin token) create a support operator, whose token it shows once', async () => {
    await signIn(ADMIN_TOKEN);
    await open('Operators');
    await page.getByLabel('Name', { exact: true }).fill('Sam from support');
    await page.getByLabel('Role').selectOption('support');
    await page.getByRole('button', { name: 'Create operator' }).click();
    supportToken = (await page.getByTestId('operator-token').textContent()) ?? '';
    expect(supportToken).to.match(/^op_/);
    await page.getByRole('button', { name: 'Copy token' }).waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('operator-token').count(), 'the token, once dismissed').to.equal(0);
    await main().locator('tbody tr', { hasText: 'Sam from support' }).getByText('support', { exact: true }).waitFor();
    await signOut();
  });

  it('lets support find a message across accounts by its number and open its story (resending a webhook event), and gives it no Credit button, which the API refuses it', async function () {
    this.timeout(30_000);
    await signIn(supportToken);
    expect(await consoleNav(page).getByRole('link').allTextContents(), 'the views a support operator may use').to.not.include('Operators');
    await open('Messages');
    // The `+` reaches the API encoded: a raw one would be read as a space, and refused as no E.164 number.
    await page.getByLabel('To (E.164)').fill(NUMBER);
    await page.getByRole('button', { name: 'Search' }).click();
    const row = main().locator('tbody tr', { hasText: NUMBER });
    await row.waitFor();
    expect(await main().locator('tbody tr').count()).to.equal(1);
    await row.getByRole('link').first().click();
    await page.getByRole('list', { name: 'Timeline' }).getByText('Status delivered').waitFor();
    expect(await page.getByTestId('message-status').textContent()).to.equal('delivered');
    // Support may deliver a webhook event again, from the story.
    const before = receiver?.received.length ?? 0;
    await main().getByRole('button', { name: 'Resend' }).first().click();
    await page.getByRole('status').filter({ hasText: 'Resent' }).waitFor();
    await eventually(
      () => receiver?.received.length ?? 0,
      (count) => count > before,
      { what: 'the resent delivery' },
    );

    await main().getByRole('link', { name: tenant.accountId }).click();
    await page.getByRole('heading', { name: 'Ledger' }).waitFor();
    await page.getByRole('button', { name: 'Add note' }).waitFor();
    expect(
      await main()
        .getByRole('button', { name: /^(Credit|Suspend account)$/ })
        .count(),
      'admin buttons shown to support',
    ).to.equal(0);
    const credit = await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: supportToken, body: { amount: 5 } });
    expect(credit.status).to.equal(403);
    await signOut();
  });

  it('lets an admin operator approve a sender found by its text, suspend an account (whose key is then refused) and read it in the audit log under its name', async function () {
    this.timeout(45_000);
    const admin = await createOperator('admin');
    const applicant = await createTenant();
    const senderText = `Ops${randomBase62(8)}`;
    const registered = await call('POST', '/senders/create', { auth: applicant.key, body: { sender_id: senderText } });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);

    await signIn(admin.token);
    await open('Senders');
    await page.getByLabel('Sender ID').fill(senderText.toLowerCase());
    await page.getByRole('button', { name: 'Search' }).click();
    const sender = main().locator('tbody tr', { hasText: senderText });
    await sender.getByRole('button', { name: `Approve ${senderText}` }).click();
    // The queue shows pending senders: once approved, it leaves the list.
    await main().getByText('No sender waits for approval.').waitFor();
    const senders = await call('GET', `/admin/senders?sender_id=${senderText}`, { auth: 'admin' });
    expect(senders.body.data.map((found) => found.status)).to.deep.equal(['approved']);

    await page.goto(`${origin}/console/operator/accounts/${applicant.accountId}`);
    await page.getByLabel('Reason').fill('Chargebacks under review');
    await page.getByRole('button', { name: 'Suspend account' }).click();
    await page.getByTestId('account-status').filter({ hasText: 'suspended' }).waitFor();
    const refused = await call('GET', '/account', { auth: applicant.key });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.details).to.deep.include({ reason: 'account_inactive' });

    await main().getByRole('link', { name: 'Audit log' }).click();
    const entry = main().getByTestId('audit-entry').filter({ hasText: 'account.suspend' });
    await entry.waitFor();
    expect(await entry.count()).to.equal(1);
    expect(await entry.textContent())
      .to.include(admin.name)
      .and.to.include('Chargebacks under review');
  });

  it('lets the admin block a number and remove it, the `+` of its path encoded', async () => {
    const number = '+14155550999';
    await open('Blocklist');
    await page.getByLabel('Number (E.164)').fill(number);
    await page.getByRole('button', { name: 'Add to blocklist' }).click();
    const row = main().locator('tbody tr', { hasText: number });
    await row.getByRole('button', { name: `Remove ${number}` }).click();
    await row.getByRole('button', { name: 'Remove', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    const left = await call('GET', `/admin/blocklist?number=${encodeURIComponent(number)}`, { auth: 'admin' });
    expect(left.body.data).to.deep.equal([]);
  });

  it('has no serious or critical accessibility violation on each operator view, and saves screenshots at desktop and phone widths', async function () {
    this.timeout(90_000);
    const views: { name: string; path: string; shot?: string }[] = [
      { name: 'Overview', path: 'operator' },
      { name: 'Accounts', path: 'operator/accounts' },
      { name: 'Account', path: `operator/accounts/${tenant.accountId}`, shot: 'operator-account' },
      { name: 'Messages', path: 'operator/messages', shot: 'operator-messages' },
      { name: 'Message story', path: `operator/messages/${messageId}`, shot: 'operator-message-story' },
      { name: 'Senders', path: 'operator/senders?status=any', shot: 'operator-senders' },
      { name: 'Routes', path: 'operator/routes', shot: 'operator-routes' },
      { name: 'Blocklist', path: 'operator/blocklist' },
      { name: 'Audit log', path: 'operator/audit-log', shot: 'operator-audit-log' },
      { name: 'Operators', path: 'operator/operators' },
    ];
    const violations: string[] = [];
    for (const view of views) {
      await page.setViewportSize(DESKTOP);
      await page.goto(`${origin}/console/${view.path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      // Each view has loaded once no request is pending.
      await page.waitForLoadState('networkidle');
      violations.push(...(await seriousViolations(page, view.name, view === views[0])));
      // Each route's health includes how often it accepted what it was offered.
      if (view.name === 'Routes') await main().getByRole('columnheader', { name: 'Submit success' }).waitFor();
      if (!view.shot) continue;
      await page.screenshot({ path: join(SCREENSHOTS, `${view.shot}-desktop.png`) });
      await page.setViewportSize(PHONE);
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: join(SCREENSHOTS, `${view.shot}-phone.png`) });
    }
    await page.setViewportSize(DESKTOP);
    expect(violations).to.deep.equal([]);
    expect(browser?.foreign).to.deep.equal([]);
    expect(browser?.pageErrors).to.deep.equal([]);
  });
});
