import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import yaml from 'js-yaml';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { PUBLIC_DIR, SOURCE_PATH, TITLE } from '../../scripts/build-docs.ts';
import { harness } from '../support/harness.ts';

/** Debian's chromium: no test downloads a browser of its own. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const SCREENSHOT = join(ARTIFACTS, 'docs.png');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

// Redoc 3's sidebar: a menu of tags; a tag's operations are listed once it is opened.
const MENU = '[data-component-name="Menu/Menu"]';
const MENU_OPERATION_LABELS = `${MENU} .menu-item-type-operation [data-text]`;

// What the functions run in the page use of the browser's globals (tsconfig has no DOM library).
interface PageElement {
  getAttribute(name: string): string | null;
  readonly href: string;
  readonly innerText: string;
}
declare const window: { readonly scrollY: number; scrollTo(x: number, y: number): void };
declare const document: {
  readonly documentElement: { readonly scrollHeight: number };
  readonly body: { readonly textContent: string | null };
  getElementById(id: string): object | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
};

interface Operation {
  summary: string;
  tags: string[];
  internal: boolean;
}

async function operationsIn(path: string): Promise<Operation[]> {
  const openapi = yaml.load(await readFile(path, 'utf8')) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  return Object.values(openapi.paths).flatMap((item) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([, operation]) => ({
        summary: String(operation.summary),
        tags: (operation.tags as string[] | undefined) ?? [],
        internal: operation['x-internal'] === true,
      })),
  );
}

/** Waits until the page has stopped scrolling (its scroll position holds for 200 ms). */
async function settleScroll(page: Page): Promise<void> {
  let last = -1;
  for (let checks = 0; checks < 50; checks += 1) {
    const y = await page.evaluate(() => window.scrollY);
    if (y === last) return;
    last = y;
    await page.waitForTimeout(200);
  }
}

/** Scrolls down the page a screen at a time, then back to the top. */
async function scrollThrough(page: Page): Promise<void> {
  const screen = page.viewportSize()?.height ?? 800;
  for (let y = 0; y < (await page.evaluate(() => document.documentElement.scrollHeight)); y += screen) {
    await page.evaluate((top) => window.scrollTo(0, top), y);
    await page.waitForTimeout(50);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await settleScroll(page);
}

async function menuOperationLabels(page: Page): Promise<string[]> {
  return page.locator(MENU_OPERATION_LABELS).evaluateAll((labels) => labels.map((label) => (label as PageElement).getAttribute('data-text') ?? ''));
}

/** Loads /docs and waits until Redoc has taken the page over. */
async function openDocs(page: Page): Promise<void> {
  const response = await page.goto(`${new URL(harness.baseUrl).origin}/docs`, { waitUntil: 'load' });
  expect(response?.status(), 'GET /docs').to.equal(200);
  expect(await page.title()).to.equal(TITLE);
  // The page arrives prerendered; wait until React has taken it over (hydrateRoot marks its
  // container), or a click would follow the prerendered link instead of Redoc's router.
  await page.waitForFunction(() => Object.keys(document.getElementById('redoc') ?? {}).some((key) => key.startsWith('__reactContainer$')), undefined, {
    timeout: 30_000,
  });
}

describe('/docs in a browser (headless Chromium)', () => {
  let profile: string | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  const pageErrors: string[] = [];
  /** Every request the page made to a host other than Dispatch's (all refused). */
  const foreign: string[] = [];

  before(async function () {
    this.timeout(60_000);
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: install Debian's package with \`apt-get install chromium\` (tests never download a browser of their own).`,
      );
    }
    profile = await mkdtemp(join(tmpdir(), 'dispatch-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1440, height: 900 },
    });
    // The page must work offline: nothing outside the service is fetched.
    const origin = new URL(harness.baseUrl).origin;
    await context.route(
      (url) => (url.protocol === 'http:' || url.protocol === 'https:') && url.origin !== origin,
      (route) => {
        foreign.push(route.request().url());
        return route.abort('internetdisconnected');
      },
    );
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async function () {
    this.timeout(30_000);
    await context?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('lists every public operation and no admin operation, and saves a screenshot', async function () {
    // Generous bounds: a headless Chromium on a busy two-core machine renders slowly, not wrongly.
    this.timeout(120_000);
    const publicOperations = await operationsIn(join(PUBLIC_DIR, 'openapi.yaml'));
    const adminOperations = (await operationsIn(SOURCE_PATH)).filter((operation) => operation.internal);
    const tags = [...new Set(publicOperations.flatMap((operation) => operation.tags))];
    expect(publicOperations.length).to.be.greaterThan(0);
    expect(adminOperations.length).to.be.greaterThan(0);

    await openDocs(page);

    const menu = page.locator(MENU);
    const listed = new Set<string>();
    const texts: string[] = [await page.locator('body').innerText()];
    for (const tag of tags) {
      const expected = publicOperations.filter((operation) => operation.tags.includes(tag)).map((operation) => operation.summary);
      // A click while the sidebar is still re-rendering can be lost on a loaded machine: click
      // again until the tag's operations are shown, a few times at most.
      for (let attempt = 1; ; attempt++) {
        await menu.getByRole('link', { name: tag, exact: true }).first().click();
        try {
          await page.waitForFunction(
            ({ selector, summaries }) => {
              const shown = new Set(Array.from(document.querySelectorAll(selector), (label) => label.getAttribute('data-text')));
              return summaries.every((summary) => shown.has(summary));
            },
            { selector: MENU_OPERATION_LABELS, summaries: expected },
            { timeout: 10_000 },
          );
          break;
        } catch {
          if (attempt === 3) {
            expect(await menuOperationLabels(page), `the sidebar under "${tag}" (page ${page.url()})`).to.include.members(expected);
            break;
          }
        }
      }
      for (const label of await menuOperationLabels(page)) listed.add(label);
      texts.push(await page.locator('body').innerText());
    }

    expect([...listed].sort(), 'the operations the sidebar lists').to.deep.equal(publicOperations.map((operation) => operation.summary).sort());
    // Issue 10 by name, so that the check cannot pass on a document that lost them.
    expect(tags).to.include.members(['Inbound messages', 'Opt-outs']);
    expect([...listed], 'the sidebar').to.include.members([
      'List inbound messages',
      'Get an inbound message',
      'List opt-outs',
      'Opt numbers out',
      'Remove an opt-out',
      'Get the keyword settings',
      'Change the keyword settings',
    ]);
    const menuTags = await menu.locator('a[href]').evaluateAll((links) => links.map((link) => (link as PageElement).innerText.trim()));
    expect(menuTags, 'the sidebar').to.not.include('Admin');
    const text = texts.join('\n');
    for (const type of ['message.received', 'recipient.opted_out', 'recipient.opted_in'])
      expect(text, `the page names the event type ${type}`).to.include(type);
    // Redoc renders a section's text when it is shown: wait for the Events section's text rather
    // than reading the page once.
    await menu.getByRole('link', { name: 'Events', exact: true }).first().click();
    const says = await page
      .waitForFunction((words) => document.body.textContent?.includes(words) ?? false, 'Event types grow within v1', { timeout: 15_000 })
      .then(
        () => true,
        () => false,
      );
    expect(says, 'the page says how event types grow').to.equal(true);
    const shownAdmin = adminOperations.map((operation) => operation.summary).filter((summary) => text.includes(summary));
    expect(shownAdmin, 'admin operations shown on the page').to.deep.equal([]);
    expect(await page.locator('a[href*="admin" i]').count(), 'links to admin operations').to.equal(0);
    // Redoc routes on the hash (/docs#/messages): no link may lead to a path the service lacks.
    const links = await page.locator('a[href]').evaluateAll((anchors) => anchors.map((anchor) => (anchor as PageElement).href));
    const offPage = links.filter((link) => new URL(link).origin === new URL(harness.baseUrl).origin && new URL(link).pathname !== '/docs');
    expect(offPage, 'links from /docs to other paths of the service').to.deep.equal([]);

    // The screenshot: the whole page, the first tag open (its operations in the sidebar and in
    // the page). Redoc renders an operation once it nears the viewport, so scroll through first.
    await menu.getByRole('link', { name: tags[0], exact: true }).first().click();
    await page.waitForFunction((selector) => document.querySelectorAll(selector).length > 0, MENU_OPERATION_LABELS);
    await settleScroll(page); // Redoc scrolls to the tag it opened
    await scrollThrough(page);
    // Its sections are `content-visibility: auto`, which a full-page capture leaves blank.
    await page.addStyleTag({ content: '* { content-visibility: visible !important; }' });
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    expect(pageErrors, 'uncaught errors in the page').to.deep.equal([]);
  });

  it("shows each operation's code samples on this origin, and loaded nothing from another host (no CDN)", async function () {
    this.timeout(60_000);
    const origin = new URL(harness.baseUrl).origin;
    // The send operation's curl sample (scripts/code-samples.ts), with the served origin in it, as
    // Redoc renders it in the operation's panel (the page's inlined definition does not count).
    const sample = `curl -X POST '${origin}/api/v1/messages/send'`;
    await openDocs(page);
    await page.locator(MENU).getByRole('link', { name: 'Messages', exact: true }).first().click();
    const shown = await page
      .waitForFunction((text) => (document.getElementById('redoc') as { innerText?: string } | null)?.innerText?.includes(text) ?? false, sample, {
        timeout: 30_000,
      })
      .then(
        () => true,
        () => false,
      );
    expect(shown, `the page shows ${sample}`).to.equal(true);
    const typescript = `const response = await fetch("${origin}/api/v1/messages/send"`;
    // The TypeScript sample is the other language of the same panel's language menu: chosen, it shows.
    const samples = page.locator('.panel-request-samples').first();
    await samples.getByRole('button', { name: 'curl', exact: true }).click();
    // The menu opens outside the panel, as a pop-up of the page.
    await page.getByRole('menuitem', { name: 'TypeScript (fetch)' }).click();
    const shownTypeScript = await page
      .waitForFunction((text) => (document.getElementById('redoc') as { innerText?: string } | null)?.innerText?.includes(text) ?? false, typescript, {
        timeout: 30_000,
      })
      .then(
        () => true,
        () => false,
      );
    expect(shownTypeScript, `the page shows ${typescript}`).to.equal(true);
    expect(foreign, 'requests from /docs to other hosts').to.deep.equal([]);
  });
});
