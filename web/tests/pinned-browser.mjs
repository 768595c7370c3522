// Debian's chromium (playwright-core), trusting exactly one self-signed
// certificate (its public key, --ignore-certificate-errors-spki-list) in a
// fresh profile; every page error and console error is collected.
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

// Launch it for `cert` (PEM). `errors` receives what the page reports;
// `ignore(message)` says which console errors are expected. The caller
// closes `context` and removes `profileDir`.
export async function pinnedBrowser({ cert, prefix, viewport, acceptDownloads = false, errors, ignore = () => false }) {
  const spki = new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' });
  const pin = createHash('sha256').update(spki).digest('base64');
  const profileDir = mkdtempSync(join(tmpdir(), prefix));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath,
    headless: true,
    acceptDownloads,
    viewport,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--ignore-certificate-errors-spki-list=${pin}`,
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !ignore(m)) errors.push(`console: ${m.text()} (${m.location().url})`);
  });
  return { context, page, profileDir };
}
