import { Browser, chromium } from 'playwright-core';

/** Headless Debian Chromium as the browser tests drive it, `localhost` resolved to 127.0.0.1. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--host-resolver-rules=MAP localhost 127.0.0.1'],
  });
}
