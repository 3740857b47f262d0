// Measures the page's load on emulated Slow 4G (Chrome DevTools' preset:
// 562.5 ms latency, 1.44 Mbit/s down, 675 kbit/s up) through the Chrome
// DevTools Protocol: bytes on the wire and the time until the composer
// takes input, for a cold load (empty cache) and a reload; and the chat
// column's width at 390 and 1280 px.
//
//   WEBCHAT_URL=http://127.0.0.1:8080 node measure.mjs
import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const base = process.env.WEBCHAT_URL;
if (!base) {
  console.error("measure: set WEBCHAT_URL to the server's address");
  process.exit(2);
}
const slow4G = { offline: false, latency: 562.5, downloadThroughput: (1.44e6 / 8), uploadThroughput: (675e3 / 8) };

const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "webchat-measure-")), {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
});

async function load(page, cdp, how) {
  let bytes = 0;
  const onFinished = (e) => { bytes += e.encodedDataLength; };
  cdp.on("Network.loadingFinished", onFinished);
  const start = Date.now();
  if (how === "reload") await page.reload({ waitUntil: "commit" });
  else await page.goto(base + "/", { waitUntil: "commit" });
  await page.locator(".composer textarea:not([disabled])").waitFor({ timeout: 60000 });
  const tti = Date.now() - start;
  await page.waitForLoadState("networkidle");
  cdp.off("Network.loadingFinished", onFinished);
  return { bytes, tti };
}

const page = await browser.newPage();
const cdp = await page.context().newCDPSession(page);
await cdp.send("Network.enable");
await cdp.send("Network.clearBrowserCache");
await cdp.send("Network.emulateNetworkConditions", slow4G);
await page.setViewportSize({ width: 390, height: 844 });
const cold = await load(page, cdp, "cold");
const reload = await load(page, cdp, "reload");
const width = async () => page.evaluate(() => {
  const w = (s) => Math.round(document.querySelector(s)?.getBoundingClientRect().width ?? 0);
  // column: the message column (the viewport's children share one max
  // width); composer: the message box; chat: the area beside the list.
  return { column: w(".viewport > *"), composer: w(".composer"), chat: w(".chat") };
});
const phone = await width();
await page.setViewportSize({ width: 1280, height: 800 });
const desktop = await width();
console.log(JSON.stringify({ cold, reload, phone, desktop }));
await browser.close();
