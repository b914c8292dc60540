//! Drives the MCP Inspector's web UI in headless Chromium (through `playwright-core`)
//! the way a person would: connects the UI's one configured server (`zidane mcp`),
//! opens the Tools tab, starts a background `shell`, waits on it with `wait_task`, kills
//! it with `shell_kill`, and prints what the UI showed for each call as one JSON
//! document on stdout. The Rust test in inspector.rs starts the Inspector, runs this and
//! asserts on the JSON.
//!
//! Usage: node inspector_web.mjs <hosts-prefix> <ui-url> <user-data-dir> <command>
//!   hosts-prefix   the npm prefix that holds `playwright-core`
//!   ui-url         the Inspector's URL, auth token included
//!   user-data-dir  a fresh, empty directory for Chromium's profile
//!   command        the command the background `shell` runs
//! Environment: CHROMIUM (default /usr/bin/chromium); INSPECTOR_WEB_SCREENSHOT, a PNG
//! path: a screenshot of the page after each call, the call's name before `.png`.
//!
//! On a failure it still prints the JSON, with `error` saying which step failed and
//! what the page showed then, and exits 1.

import { createRequire } from 'node:module';
import path from 'node:path';

const [hosts, url, userDataDir, command] = process.argv.slice(2);
if (!command) {
  console.error('usage: node inspector_web.mjs <hosts-prefix> <ui-url> <user-data-dir> <command>');
  process.exit(2);
}
const require = createRequire(path.join(hosts, 'node_modules', 'noop.js'));
const { chromium } = require('playwright-core');

// Every wait on the page is bounded: a UI that never shows a result fails the step.
const STEP_TIMEOUT_MS = 30_000;

const shown = { tools: [], calls: {} };
let step = 'launch';

const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1400, height: 1400 },
  // As root in a container: no sandbox; and nothing that reaches out to the network.
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});

/** A screenshot of the page after `name`, when INSPECTOR_WEB_SCREENSHOT asks for them. */
async function screenshot(page, name) {
  const base = process.env.INSPECTOR_WEB_SCREENSHOT;
  if (base) {
    await page.screenshot({ path: base.replace(/\.png$/, '') + `-${name}.png`, fullPage: true });
  }
}

/**
 * Selects `tool` in the Tools tab, lets `fill` set its arguments, executes it and
 * returns what the result panel showed: its heading, the text of each content block,
 * the structured output (parsed, or raw when it is not JSON) and the whole panel's text.
 */
async function call(page, tool, fill) {
  step = tool;
  // A previous result panel stays up until closed; closing it first makes the next
  // heading that appears this call's.
  const close = page.getByRole('button', { name: /^Close (results|error)$/ });
  if (await close.count()) {
    await close.first().click();
    await close.first().waitFor({ state: 'detached' });
  }
  await page
    .getByRole('button')
    .filter({ has: page.getByText(tool, { exact: true }) })
    .click();
  await fill();
  await page.getByRole('button', { name: 'Execute Tool' }).click();
  const heading = page.getByRole('heading', { name: /^(Results|Tool Call Failed)$/ });
  await heading.waitFor();
  const panel = page.locator('[data-with-border="true"]').filter({ has: heading }).last();
  let structured = null;
  if ((await heading.innerText()) === 'Results') {
    // Every zidane tool declares an output schema, so a result shows its structured
    // output too, in a read-only Ace editor that renders after the panel's heading. Ace
    // draws only the rows in view: its document is the whole text.
    const editor = panel.getByTestId('structured-output').locator('.ace_editor').first();
    await editor.locator('.ace_line').first().waitFor();
    const raw = await editor.evaluate((element) =>
      element.env?.editor
        ? element.env.editor.getValue()
        : [...element.querySelectorAll('.ace_line')].map((line) => line.textContent).join('\n'),
    );
    try {
      structured = JSON.parse(raw);
    } catch {
      structured = raw;
    }
  }
  const result = {
    heading: await heading.innerText(),
    content: await panel.locator('pre').allInnerTexts(),
    structured,
    panel: await panel.innerText(),
  };
  shown.calls[tool] = result;
  await screenshot(page, tool);
  return result;
}

let page;
try {
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  step = 'open';
  await page.goto(url);

  step = 'connect';
  // The switch's own track covers its input: a forced check is the click on the track.
  await page.getByRole('switch', { name: /zidane/ }).check({ force: true });
  await page.getByText('Connected', { exact: true }).waitFor();

  step = 'tools/list';
  await page.getByRole('banner').getByText('Tools', { exact: true }).click();
  await page.getByRole('heading', { name: /^Tools \(\d+\)$/ }).waitFor();
  shown.toolsHeading = await page.getByRole('heading', { name: /^Tools \(\d+\)$/ }).innerText();
  // Each tool's button holds its title, then its name.
  const buttons = page.getByRole('main').getByRole('button').filter({ has: page.locator('p') });
  for (const button of await buttons.all()) {
    const lines = await button.locator('p').allInnerTexts();
    if (lines.length >= 2) shown.tools.push(lines[1]);
  }

  const started = await call(page, 'shell', async () => {
    await page.getByRole('textbox', { name: 'command', exact: true }).fill(command);
    await page.getByRole('checkbox', { name: 'run_in_background' }).check({ force: true });
  });
  const taskId = started.structured?.task_id;
  if (typeof taskId !== 'string') {
    throw new Error('the shell result panel showed no task_id');
  }
  shown.taskId = taskId;

  await call(page, 'wait_task', async () => {
    await page.getByRole('textbox', { name: 'task_id', exact: true }).fill(taskId);
    await page.getByRole('textbox', { name: 'timeout_ms', exact: true }).fill('500');
  });

  await call(page, 'shell_kill', async () => {
    await page.getByRole('textbox', { name: 'task_id', exact: true }).fill(taskId);
  });
  step = 'done';
} catch (error) {
  shown.error = `${step}: ${error.message}`;
  if (page) {
    shown.page = await page.locator('body').innerText().catch(() => null);
    await screenshot(page, 'error').catch(() => {});
  }
} finally {
  await context.close();
}

console.log(JSON.stringify(shown, null, 2));
process.exit(shown.error ? 1 : 0);
