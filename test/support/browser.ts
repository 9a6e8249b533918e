/**
 * The dashboard's browser tests' Chromium (Debian's `chromium`, driven by `playwright-core`):
 * `useBrowser()` at a test file's top level launches one headless browser before its tests and
 * closes it after them; `newPage()` opens a page that records every console error and uncaught
 * exception, for the test's `assert.deepEqual(errors, [])`.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

/** The viewport most of the dashboard's tests draw in. */
export const WIDE = { viewport: { width: 1280, height: 900 } };

interface TestBrowser {
  /** The browser itself (for a page whose errors are not checked). */
  readonly browser: Browser;
  /** A new page; `errors` gathers its console errors (with their script's URL) and uncaught exceptions. */
  newPage(options?: Parameters<Browser["newPage"]>[0]): Promise<{ page: Page; errors: string[] }>;
}

/** Launches Chromium before the file's tests and closes it after; call it at the top level. */
export function useBrowser(): TestBrowser {
  let launched: Browser | undefined;
  before(async () => {
    assert.ok(CHROMIUM, "chromium is installed (scripts/setup.sh installs Debian's chromium)");
    launched = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  after(async () => {
    await launched?.close();
  });
  const browser = (): Browser => {
    if (!launched)
      throw new Error("useBrowser(): no browser yet; call it at the file's top level, use it in tests");
    return launched;
  };
  return {
    get browser() {
      return browser();
    },
    async newPage(options) {
      const page = await browser().newPage(options);
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(`${m.text()} (${m.location().url})`);
      });
      page.on("pageerror", (e) => errors.push(e.message));
      return { page, errors };
    },
  };
}
