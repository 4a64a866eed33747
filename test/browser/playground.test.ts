/**
 * The playground page in a real browser (Debian's chromium through playwright-core, one browser
 * for the file): typing into the editors renders as `render` does, diagnostics land on their line
 * as `validate` places them, the result goes back the other way, the address carries the state,
 * the page works from the keyboard and in a narrow window, and under `dev` the running stack's
 * table updates live and opens each object in the editors. Each test keeps a screenshot in
 * test/artifacts/playground/ for a person to look at.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePlayground } from '../../lib/cli/commands/playground.ts';
import { startDevPlayground } from '../../lib/cli/dev-playground.ts';
import { main } from '../../lib/cli/main.ts';
import { createObjects } from '../../lib/local/demo.ts';
import { type Stack, startStack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { type PlaygroundServer, startPlaygroundServer } from '../../lib/playground/index.ts';
import { bufferIO } from '../cli/buffer-io.ts';
import { exampleState } from '../playground/example-state.ts';
import { launchChromium } from './chromium.ts';

const root = new URL('../../', import.meta.url);
const ARTIFACTS = new URL('test/artifacts/playground/', root);
const example = exampleState();

/**
 * The little of the DOM that the functions below run in the page use. The project compiles
 * against Node's types only; these declarations stay in this module.
 */
interface PageElement {
  id: string;
  value: string;
  tagName: string;
  selectionStart: number;
  labels?: { length: number } | null;
  setSelectionRange(from: number, to: number): void;
  getBoundingClientRect(): { top: number; bottom: number };
}
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  documentElement: { scrollWidth: number };
  activeElement: PageElement | null;
  getElementById(id: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
};
declare const window: { innerWidth: number };
declare const location: { hash: string };

let browser: Awaited<ReturnType<typeof launchChromium>>;
let server: PlaygroundServer;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  [browser, server] = await Promise.all([
    launchChromium(),
    startPlaygroundServer({ port: 0, initial: async () => example, evaluate: evaluatePlayground }),
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Opens the page and waits for its first answer. */
async function open(url: string, viewport = { width: 1280, height: 860 }): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setViewportSize(viewport);
  await page.goto(url);
  await settled(page);
  return page;
}

/** Waits until the page shows the answer to its editors' current state. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.body.dataset['busy'] === 'false');
}

/** Puts the caret at `offset` in an editor and types `text` key by key. */
async function typeAt(page: Page, id: string, offset: number, text: string, select = 0) {
  await page.locator(`#${id}`).focus();
  await page
    .locator(`#${id}`)
    .evaluate((el: PageElement, [from, to]) => el.setSelectionRange(from, to), [
      offset,
      offset + select,
    ] as const);
  await page.keyboard.type(text);
  await settled(page);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname, fullPage: true });
}

/** The highlighted (changed) lines of the result. */
const marked = (page: Page) => page.locator('#result mark').allTextContents();

describe('the playground page', () => {
  it('renders as you type, with the changed lines highlighted and the report per patch', async () => {
    const page = await open(server.url);
    expect(await page.locator('#result-status').textContent()).toMatch(/^write \(created\)/);
    expect(await marked(page)).toContain('    app: my-prefix-db');
    expect(await page.locator('#outcomes li').count()).toBe(4);

    const config = await page.locator('#config').inputValue();
    const at = config.indexOf(`'"production"'`) + 2;
    await typeAt(page, 'config', at, 'staging', 'production'.length);
    expect(await marked(page)).toContain('    example.com/environment: staging');
    expect(await page.locator('#outcomes').textContent()).toContain('undefined -> "staging"');
    // The page's report is render --explain's, line for line.
    const state = { ...example, config: await page.locator('#config').inputValue() };
    expect(await page.locator('#explain').textContent()).toBe(
      (await evaluatePlayground(state)).explain,
    );
    await shot(page, 'render-as-you-type');
    // The README's picture (docs/playground.png is a copy): the first screen only, to stay small.
    await page.locator('#config').evaluate((el) => {
      el.scrollTop = 0;
    });
    await page.screenshot({
      path: new URL('readme.png', ARTIFACTS).pathname,
      clip: { x: 0, y: 0, width: 1280, height: 620 },
    });
    await page.close();
  });

  it('shows validate’s diagnostics at their line, in the gutter and the list, and goes to them', async () => {
    const page = await open(server.url);
    const config = await page.locator('#config').inputValue();
    const at = config.indexOf(`+ value'`) + '+ value'.length;
    await typeAt(page, 'config', at, ' +');
    const typed = await page.locator('#config').inputValue();
    const io = bufferIO({ 'config.yaml': typed });
    expect(await main(['validate', '-c', 'config.yaml'], io)).toBe(1);
    const [first] = io.err.split('\n');
    expect(await page.locator('#config-problems li.error').first().textContent()).toBe(first);
    const line = Number(/^config\.yaml:(\d+):/.exec(first ?? '')?.[1]);
    expect(await page.locator(`#config-gutter div:nth-child(${line})`).getAttribute('class')).toBe(
      'error',
    );
    expect(await page.locator('#config').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#result-status').textContent()).toMatch(/^Not rendered: 1 error/);
    expect(await page.locator('#result').textContent()).toBe('');

    await page.locator('#config-problems li.error button').first().click();
    const caretLine = await page
      .locator('#config')
      .evaluate((el: PageElement) =>
        el === document.activeElement
          ? el.value.slice(0, el.selectionStart).split('\n').length
          : -1,
      );
    expect(caretLine).toBe(line);
    await shot(page, 'diagnostics');
    await page.close();
  });

  it('fails a runaway expression with render’s own message', async () => {
    const page = await open(server.url);
    const config = await page.locator('#config').inputValue();
    const from = config.indexOf(`'"production"'`);
    const loop = `'(() => { while (true) {} })()'`;
    await typeAt(page, 'config', from, loop, `'"production"'`.length);
    const typed = await page.locator('#config').inputValue();
    const io = bufferIO({ 'c.yaml': typed });
    await main(['render', '-c', 'c.yaml', '-o', 'examples/objects/db-endpoints.yaml'], io);
    const errors = io.err.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors.join('\n')).toContain('timed out');
    expect(await page.locator('#failures li').allTextContents()).toEqual(errors);
    expect(await page.locator('#result-status').textContent()).toMatch(/^failed \(patch-failed\)/);
    await shot(page, 'runaway-expression');
    await page.close();
  });

  it('sends the result back the other way, and keeps the state in a link that opens it again', async () => {
    const page = await open(server.url);
    await page.locator('#reverse').click();
    await settled(page);
    expect(await page.locator('input[value="fromHost"]').isChecked()).toBe(true);
    const back = await page.locator('#result').textContent();
    expect(back).toContain('app: db');
    expect(back).not.toContain('my-prefix-');
    // A label changed on the host flows back through its reverseExpression.
    const host = await page.locator('#object').inputValue();
    await typeAt(page, 'object', host.indexOf('my-prefix-db') + 'my-prefix-db'.length, '2');
    expect(await marked(page)).toContain('    app: db2');
    expect(await page.locator('#outcomes').textContent()).toContain(
      'applied (fromHost) sync.toHost.endpoints.patches[0] at metadata.labels.app: applied expression [native]: "my-prefix-db2" -> "db2"',
    );
    const back2 = await page.locator('#result').textContent();
    await page.waitForFunction(() => location.hash.startsWith('#s='));
    const link = page.url();
    await shot(page, 'reverse');

    const again = await open(link);
    expect(await again.locator('input[value="fromHost"]').isChecked()).toBe(true);
    expect(await again.locator('#config').inputValue()).toBe(
      await page.locator('#config').inputValue(),
    );
    expect(await again.locator('#object').inputValue()).toBe(
      await page.locator('#object').inputValue(),
    );
    expect(await again.locator('#result').textContent()).toBe(back2);
    await again.close();
    await page.close();
  });

  it('works from the keyboard with labelled fields, and reads in a narrow window', async () => {
    const page = await open(server.url, { width: 400, height: 900 });
    // Every field has a label a screen reader announces; the answer is announced politely.
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('textarea, input')]
        .filter((el) => el.labels?.length === 0)
        .map((el) => el.id || el.value),
    );
    expect(unlabelled).toEqual([]);
    expect(await page.locator('#result-status').getAttribute('aria-live')).toBe('polite');

    // Tab goes through the controls in reading order, never trapped in an editor.
    const order: string[] = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() => {
        const el = document.activeElement;
        return el?.id || el?.value || el?.tagName || '';
      });
      order.push(id);
      if (id === 'result') break;
    }
    const expected = ['toHost', 'reverse', 'share', 'config', 'object', 'companion', 'name'];
    const positions = [...expected, 'namespace', 'markerDomain', 'result'].map((id) =>
      order.indexOf(id),
    );
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));

    // Narrow: the panes stack, and nothing makes the page scroll sideways.
    const layout = await page.evaluate(() => {
      const box = (id: string) => document.getElementById(id)?.getBoundingClientRect();
      return {
        sideways: document.documentElement.scrollWidth > window.innerWidth,
        configBottom: box('config')?.bottom ?? 0,
        objectTop: box('object')?.top ?? 0,
        resultTop: box('result')?.top ?? 0,
      };
    });
    expect(layout.sideways).toBe(false);
    expect(layout.objectTop).toBeGreaterThan(layout.configBottom);
    expect(layout.resultTop).toBeGreaterThan(layout.objectTop);
    await shot(page, 'narrow-keyboard');
    await page.close();
  });
});

describe('the running stack under dev', () => {
  let stack: Stack;
  let dev: PlaygroundServer;

  beforeAll(async () => {
    stack = await startStack({ echoFunctionLogs: false });
    dev = await startDevPlayground(stack, 0);
  }, 120_000);

  afterAll(async () => {
    await dev?.close();
    await stack?.close();
  });

  const shop = (name: string): KubeObject[] => [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name, namespace: 'default', labels: { app: name } },
      subsets: [
        { addresses: [{ ip: '10.0.0.7' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
      ],
    },
  ];

  it('lists every synced object live, and opens one in the editors', async () => {
    await createObjects(stack.virtual.client, shop('shop'));
    const page = await browser.context.newPage();
    await page.goto(dev.url);
    await page.locator('#live').waitFor({ state: 'visible' });
    const row = (key: string) => page.locator(`#live-table tr[data-key="${key}"]`);
    await row('endpoints/default/shop').locator('td.status-applied').waitFor();
    expect(await row('endpoints/default/shop').locator('td').nth(1).textContent()).toMatch(
      /^created: /,
    );
    expect(await row('endpoints/default/shop').locator('td').nth(2).textContent()).toMatch(
      /^\d+(\.\d)? m?s$/,
    );

    // A new object's row appears while the page stays open (server-sent events, no reload).
    await createObjects(stack.virtual.client, shop('cart'));
    await row('endpoints/default/cart').locator('td.status-applied').waitFor({ timeout: 60_000 });
    expect(await page.locator('#live-summary').textContent()).toMatch(/synced objects?, 0 failed/);

    await row('endpoints/default/cart').locator('a').click();
    await page.waitForFunction(() =>
      (document.getElementById('object')?.value ?? '').includes('name: cart'),
    );
    await settled(page);
    expect(await page.locator('#companion').inputValue()).toContain('kind: Service');
    expect(await page.locator('#result').textContent()).toContain(
      'name: cart-x-default-x-virtualcluster',
    );
    expect(await marked(page)).toContain('    app: my-prefix-cart');
    await shot(page, 'live-stack');
    await page.close();
  }, 120_000);
});
