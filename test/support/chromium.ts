import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's chromium (`.ci/run` installs it); elsewhere CHROMIUM_PATH may name another build. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => path && existsSync(path));

/** `test` where there is a Chromium; elsewhere `test.skip`, its title ending with NO_CHROMIUM. */
export const browserTest = CHROMIUM ? test : test.skip;
export const NO_CHROMIUM = ' (skipped: no Chromium at /usr/bin/chromium; install the chromium package or set CHROMIUM_PATH)';

export interface Chromium {
  browser: Browser;
  /** Closes the browser and removes its profile directory. */
  close(): Promise<void>;
}

/** A headless Chromium on a profile directory of its own, or null where there is no Chromium. */
export async function launchChromium(): Promise<Chromium | null> {
  if (!CHROMIUM) return null;
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  const removeProfile = () => rmSync(profile, { recursive: true, force: true });
  try {
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profile,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    return {
      browser,
      async close() {
        await browser.close();
        removeProfile();
      },
    };
  } catch (error) {
    removeProfile();
    throw error;
  }
}
