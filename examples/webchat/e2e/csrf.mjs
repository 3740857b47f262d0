// Cross-origin attack on the chat API from a real browser: Debian's
// Chromium opens a page of another origin (ATTACKER_URL, another loopback
// port) whose script posts a forged approval to the chat server
// (WEBCHAT_URL) the ways a page can: fetch in no-cors mode with a text/plain
// body (no preflight), the same claiming application/json (the browser
// drops the header in no-cors mode), a CORS fetch with a JSON body (which
// needs a preflight), and a form posted as text/plain.
//
//   WEBCHAT_URL=… ATTACKER_URL=… node csrf.mjs
//
// It prints what the page could observe, one line per attempt, and "done".
// The Go test (../csrf_test.go) serves both origins and checks on the
// server side that no attempt ran anything.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const target = process.env.WEBCHAT_URL;
const attacker = process.env.ATTACKER_URL;
if (!target || !attacker) {
  console.error("csrf: set WEBCHAT_URL and ATTACKER_URL");
  process.exit(2);
}

const userDataDir = mkdtempSync(join(tmpdir(), "webchat-csrf-chromium-"));
const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.on("console", msg => console.log("page:", msg.text()));
  await page.goto(`${attacker}/?target=${encodeURIComponent(target)}`);
  await page.waitForFunction(() => window.attackDone === true, null, { timeout: 20000 });
  for (const line of await page.evaluate(() => window.attackLog)) console.log(line);
  console.log("done");
} finally {
  await browser.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
