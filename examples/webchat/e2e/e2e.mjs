// Browser end-to-end test of the webchat page against running servers.
//
//   WEBCHAT_URL=http://127.0.0.1:8080 node e2e.mjs
//
// Drives Debian's Chromium (/usr/bin/chromium, never a downloaded browser)
// with playwright-core, at a desktop size (1280×800) and a phone size
// (390×844). On every screen it checks that nothing overflows sideways
// (and on the phone that the chat column keeps at least 300 px), that the
// Content-Security-Policy the server sends refused nothing, and runs
// axe-core, failing on a serious or critical violation. SCREENSHOTS
// (default ./screenshots) is where each state is saved, as
// <size>-<nn>-<state>.png. Exits non-zero if any step failed.
//
// WEBCHAT_URL serves the built-in demo (run it with -pace 0: the steps
// wait for what they expect, so pacing only slows them down).
// WEBCHAT_ATTACH_URL: a server running attachments.json (its one turn
// expects the image dot.png), for attachments; without it that step is
// skipped. WEBCHAT_FAIL_URLS: two servers running toolstates.json, one for each
// size (its turns are used up by one pass), for the tool-state panel, Stop
// and a failed run. WEBCHAT_PACED_URLS: two servers running the built-in
// demo at its own pace (one for each size, so each starts with no chats),
// for the chat list, reload, resume, stop on the server and delete.
// Without them those steps are skipped.
import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const base = process.env.WEBCHAT_URL;
if (!base) {
  console.error("e2e: set WEBCHAT_URL to the server's address");
  process.exit(2);
}
const shots = process.env.SCREENSHOTS || new URL("./screenshots", import.meta.url).pathname;
mkdirSync(shots, { recursive: true });
const timeout = Number(process.env.E2E_TIMEOUT_MS || 15000);
const failBases = (process.env.WEBCHAT_FAIL_URLS || "").split(",").filter(Boolean);
// E2E_ONLY, when set, runs only the steps whose name contains it (while
// working on one; the Go test never sets it).
const only = process.env.E2E_ONLY;
const pacedBases = (process.env.WEBCHAT_PACED_URLS || "").split(",").filter(Boolean);
const attachBase = process.env.WEBCHAT_ATTACH_URL;
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const sizes = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
};

const userDataDir = mkdtempSync(join(tmpdir(), "webchat-e2e-chromium-"));
// A fresh --user-data-dir: playwright passes userDataDir to Chromium as that flag.
const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: sizes.desktop,
  colorScheme: "light",
});

await browser.grantPermissions(["clipboard-read", "clipboard-write"]);
// Every page records what its Content-Security-Policy refused: check()
// fails on any (the page must work under the policy the server sends).
await browser.addInitScript(() => {
  window.__cspViolations = [];
  document.addEventListener("securitypolicyviolation", (e) => {
    window.__cspViolations.push(`${e.violatedDirective} refused ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
  });
});

const log = (...a) => console.log("e2e:", ...a);
let failed = false;
const axeTotals = { scans: 0, serious: 0, critical: 0, moderate: 0, minor: 0 };

// check runs the per-screen checks: no sideways overflow, the chat column
// wide enough on a phone, and no serious or critical axe violation.
async function check(page, what) {
  const m = await page.evaluate(() => {
    const shown = (el) => {
      const r = el.getBoundingClientRect();
      const st = getComputedStyle(el);
      return r.width > 0 && st.visibility !== "hidden" && st.display !== "none" && r.right > 0 && r.left < window.innerWidth;
    };
    // Targets a finger must hit: every button.
    const small = [...document.querySelectorAll("button")]
      .filter((b) => shown(b) && b.closest(".threads, .panel")?.classList.contains("open") !== false)
      .map((b) => ({ name: b.getAttribute("aria-label") || b.textContent.trim(), ...b.getBoundingClientRect().toJSON() }))
      .filter((r) => r.width < 43.5 || r.height < 43.5)
      .map((r) => `${r.name} ${Math.round(r.width)}×${Math.round(r.height)}`);
    const input = document.querySelector(".composer textarea");
    return {
      scroll: document.documentElement.scrollWidth,
      vw: window.innerWidth,
      chat: document.querySelector(".chat")?.getBoundingClientRect().width ?? 0,
      composer: document.querySelector(".composer")?.getBoundingClientRect().width ?? null,
      header: document.querySelector(".topbar")?.getBoundingClientRect().height ?? 0,
      inputFont: input ? parseFloat(getComputedStyle(input).fontSize) : null,
      small,
    };
  });
  const csp = await page.evaluate(() => window.__cspViolations ?? []);
  if (csp.length) throw new Error(`${what}: the Content-Security-Policy refused: ${csp.join("; ")}`);
  if (m.scroll > m.vw) throw new Error(`${what}: the page is ${m.scroll} px wide in a ${m.vw} px viewport (it scrolls sideways)`);
  if (page.size === "phone" && m.chat < 300) throw new Error(`${what}: the chat column is ${m.chat} px wide on the phone, want at least 300`);
  // The chat gets the room: a message box of at least 700 px on the
  // desktop, one header line (at most 56 px) at both sizes.
  if (page.size === "desktop" && m.composer !== null && m.composer < 700) throw new Error(`${what}: the message box is ${m.composer} px wide at 1280 px, want at least 700`);
  if (m.header > 56) throw new Error(`${what}: the header is ${m.header} px tall, want one line (at most 56 px)`);
  // On the phone: a 16 px message box (mobile Safari zooms into smaller
  // text) and targets of at least 44 px.
  if (page.size === "phone" && m.inputFont !== null && m.inputFont < 16) throw new Error(`${what}: the message box's text is ${m.inputFont} px, want 16`);
  if (page.size === "phone" && m.small.length) throw new Error(`${what}: targets smaller than 44 px: ${m.small.join(", ")}`);
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(axeSource); // not a <script>: the page's CSP refuses inline scripts
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
  });
  axeTotals.scans++;
  for (const v of violations) axeTotals[v.impact] = (axeTotals[v.impact] ?? 0) + 1;
  const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of violations.filter((v) => !bad.includes(v))) log(`axe (${v.impact}) on ${what}: ${v.id}: ${v.help} at ${v.targets.join(", ")}`);
  if (bad.length) {
    throw new Error(`${what}: axe found ${bad.map((v) => `${v.impact} ${v.id} (${v.help}) at ${v.targets.join(", ")}`).join("; ")}`);
  }
}

// shot checks the screen, then saves it as <size>-<name>.png.
async function shot(page, name, what) {
  await check(page, `${page.size} ${name}`);
  const file = `${page.size}-${name}.png`;
  await page.screenshot({ path: join(shots, file) });
  log(`screenshot ${file}: ${what}`);
}

// checkPageHeaders checks the security headers of the page's HTML.
function checkPageHeaders(h, what) {
  const csp = h["content-security-policy"] ?? "";
  for (const want of ["script-src 'self'", "frame-ancestors 'none'", "default-src 'self'"]) {
    if (!csp.includes(want)) throw new Error(`${what}: Content-Security-Policy ${JSON.stringify(csp)} lacks ${want}`);
  }
  if (h["x-content-type-options"] !== "nosniff") throw new Error(`${what}: X-Content-Type-Options is ${JSON.stringify(h["x-content-type-options"])}`);
}

async function newPage(size, url = base) {
  const page = await browser.newPage();
  page.size = size;
  await page.setViewportSize(sizes[size]);
  page.setDefaultTimeout(timeout);
  page.chatBodies = [];
  page.resumes = []; // the statuses of GET /api/chat/{id}/stream
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/api/chat") page.chatBodies.push(r.postDataJSON());
  });
  page.assets = []; // the responses for the page's scripts and style sheets
  page.on("response", (r) => {
    const path = new URL(r.url()).pathname;
    if (/^\/api\/chat\/[^/]+\/stream$/.test(path)) page.resumes.push(r.status());
    if (/\.(js|css)$/.test(path)) page.assets.push(r);
  });
  page.on("pageerror", (e) => log("page error:", e.message));
  page.on("console", (m) => {
    if (m.type() === "error") log("console error:", m.text());
  });
  const res = await page.goto(url + "/");
  checkPageHeaders(res.headers(), `${size} ${url}/`);
  page.htmlResponse = res;
  return page;
}

const composer = (page) => page.locator(".composer textarea");

// send types text into the composer and presses Enter (Enter sends).
async function send(page, text) {
  await composer(page).fill(text);
  await composer(page).press("Enter");
}

const lastAssistant = (page) => page.locator(".msg.assistant").last();
const lastUser = (page) => page.locator(".msg.user").last();
const idle = (page) => page.locator(".composer .send").waitFor();

// expectText waits until the locator's text contains want, shown (or, with
// state "attached", in the page: a tool call's card inside a folded group).
async function expectText(locator, want, what, state = "visible") {
  try {
    await locator.filter({ hasText: want }).first().waitFor({ state });
  } catch (e) {
    const got = await locator.allInnerTexts().catch(() => []);
    throw new Error(`${what}: want text containing ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
  }
}

// overflows reports whether an element's content is wider than its box.
const overflows = (locator) => locator.evaluate((el) => el.scrollWidth > el.clientWidth + 1);

// checkAssetDelivery checks how the page's scripts and style sheets came
// (issue 26 item 1; measure.mjs measures what it saves): compressed
// (brotli or gzip, precompressed at build time) and cacheable for a year
// as immutable (their names carry a hash of their content), while the
// HTML is revalidated (no-cache with an ETag), so a reload fetches no
// script again.
async function checkAssetDelivery(page, html) {
  const h = html.headers();
  if (!/no-cache/.test(h["cache-control"] ?? "") || !h["etag"]) throw new Error(`the HTML: Cache-Control ${JSON.stringify(h["cache-control"])}, ETag ${JSON.stringify(h["etag"])}; want no-cache and an ETag`);
  const assets = page.assets.filter((r) => new URL(r.url()).origin === new URL(html.url()).origin);
  if (!assets.some((r) => r.url().endsWith(".js"))) throw new Error("the page loaded no script of its own");
  for (const r of assets) {
    const a = await r.allHeaders();
    const name = new URL(r.url()).pathname;
    // The build compresses every file of at least 1 KiB.
    if (!["br", "gzip"].includes(a["content-encoding"]) && (await r.body()).length >= 1024) throw new Error(`${name} came with Content-Encoding ${JSON.stringify(a["content-encoding"])}, want br or gzip`);
    if (!/max-age=31536000/.test(a["cache-control"] ?? "") || !/immutable/.test(a["cache-control"] ?? "")) throw new Error(`${name}: Cache-Control ${JSON.stringify(a["cache-control"])}, want a year and immutable`);
  }
}

async function welcomeAndMarkdown(page) {
  await checkAssetDelivery(page, page.htmlResponse);
  await expectText(page.getByTestId("banner"), "Simulator", "simulator banner");
  await page.getByTestId("welcome").waitFor();
  await shot(page, "00-welcome", "the welcome screen: simulator banner, two suggestions, the composer");

  // A suggestion sends its prompt; the demo answers in Markdown.
  await page.locator(".suggestion").filter({ hasText: "Markdown" }).click();
  await expectText(page.locator(".msg.assistant"), "Links open in a new tab", "Markdown answer");
  await idle(page);
  const answer = lastAssistant(page);
  // The Markdown renderer is a chunk of its own, fetched after the first
  // screen: until it is in, the answer shows as plain text.
  await answer.locator("strong").filter({ hasText: "GitHub-flavoured Markdown" }).first().waitFor()
    .catch(async () => { throw new Error(`**bold** is not a <strong>: ${await answer.innerHTML()}`); });
  if (!(await answer.locator("table td code").filter({ hasText: "get_weather" }).count())) throw new Error("the GFM table is not rendered");
  // Typography: a heading larger than the text, a quote set apart, code of
  // at least 13 px, task-list checkboxes with names, footnote links that
  // stay on the page, and (on the phone) a wide table that says it scrolls.
  const t = await answer.evaluate((el) => {
    const px = (sel) => parseFloat(getComputedStyle(el.querySelector(sel)).fontSize);
    const quote = el.querySelector("blockquote");
    return {
      h2: px("h2"), p: px("p"), code: px("pre code"),
      quote: quote ? parseFloat(getComputedStyle(quote).borderLeftWidth) : 0,
      boxes: [...el.querySelectorAll('input[type="checkbox"]')].map((b) => b.getAttribute("aria-label")),
      footnotes: [...el.querySelectorAll('a[href^="#"]')].map((a) => a.getAttribute("target")),
    };
  });
  if (!(t.h2 > t.p * 1.1)) throw new Error(`the heading (${t.h2} px) is not larger than the text (${t.p} px)`);
  if (t.code < 13) throw new Error(`code is ${t.code} px, want at least 13`);
  if (t.quote < 2) throw new Error("the quote has no rule beside it");
  if (JSON.stringify(t.boxes) !== '["Done","Not done"]') throw new Error(`task-list checkboxes named ${JSON.stringify(t.boxes)}`);
  if (t.footnotes.length < 2 || t.footnotes.some((target) => target !== null)) throw new Error(`footnote links: targets ${JSON.stringify(t.footnotes)}, want two or more that stay on the page`);
  if (page.size === "phone") await answer.locator(".table-hint").filter({ hasText: "Scroll sideways" }).first().waitFor();
  // $…$ and $$…$$ are math: MathML (KaTeX), inline and on a line of its
  // own, with no dollar signs left (the CSP check in shot() sees that
  // rendering it needed no inline style).
  await answer.locator("math").first().waitFor({ state: "attached" })
    .catch(async () => { throw new Error(`no MathML in the answer: ${(await answer.innerText()).slice(0, 200)}`); });
  const math = await answer.evaluate((el) => ({
    inline: [...el.querySelectorAll("math:not([display=block]) annotation")].map((a) => a.textContent),
    block: [...el.querySelectorAll("math[display=block] annotation")].map((a) => a.textContent),
    dollars: el.textContent.includes("$"),
    height: el.querySelector("math[display=block]")?.getBoundingClientRect().height ?? 0,
  }));
  if (!math.inline.some((t) => t.includes("e^{i\\pi}")) || !math.block.some((t) => t.includes("\\frac{n(n+1)}{2}")) || math.dollars || math.height < 20) {
    throw new Error(`math is not rendered as MathML: ${JSON.stringify(math)}`);
  }
  const tokens = await answer.locator("pre code .token.keyword").allInnerTexts();
  if (!tokens.includes("for") || !tokens.includes("range")) throw new Error(`the Go block is not highlighted: keywords ${JSON.stringify(tokens)}`);
  const pre = answer.locator("pre").first();
  if (!(await overflows(pre))) throw new Error("the long code line does not scroll inside its block");
  const link = answer.locator('a[href="https://ai-sdk.dev/docs/ai-sdk-ui"]');
  if ((await link.getAttribute("target")) !== "_blank" || (await link.getAttribute("rel")) !== "noopener noreferrer") {
    throw new Error(`link attributes: ${await link.evaluate((a) => a.outerHTML)}`);
  }
  if (!(await answer.locator(".reasoning strong").count())) throw new Error("the reasoning is not rendered as Markdown");
  await shot(page, "01-markdown", "an answer in Markdown: heading, bold, list, table, highlighted Go block, a safe link");

  await page.emulateMedia({ colorScheme: "dark" });
  await shot(page, "02-markdown-dark", "the same answer in dark mode (the system's colour scheme)");
  await page.emulateMedia({ colorScheme: "light" });

  // Scrolled up, the scroll-to-bottom button appears and brings the end back.
  const viewport = page.getByTestId("viewport");
  await viewport.evaluate((el) => el.scrollTo(0, 0));
  const down = page.locator(".scroll-bottom");
  await page.waitForFunction(() => !document.querySelector(".scroll-bottom")?.disabled);
  await shot(page, "03-scrolled-up", "scrolled up: the scroll-to-bottom button above the composer");
  await down.click();
  await page.waitForFunction(() => document.querySelector(".scroll-bottom")?.disabled);

  // Shift+Enter is a new line; Enter sends. A long unbroken word wraps
  // inside its bubble.
  const word = "Supercalifragilistic".repeat(12);
  await composer(page).fill("Format this for me:");
  await composer(page).press("Shift+Enter");
  await composer(page).pressSequentially(word.slice(0, 10));
  const typed = await composer(page).inputValue();
  if (!typed.includes("\n") || page.chatBodies.length !== 1) throw new Error(`Shift+Enter sent or did not add a line: ${JSON.stringify(typed)}, ${page.chatBodies.length} requests`);
  await composer(page).fill(`Format this for me:\n${word}`);
  await composer(page).press("Enter");
  await expectText(page.locator(".msg.user"), word, "the long word sent");
  await idle(page);
  const bubble = lastUser(page).locator(".bubble");
  if (await overflows(bubble)) throw new Error("the long word overflows its bubble");
  const box = await bubble.boundingBox();
  if (box.x < 0 || box.x + box.width > sizes[page.size].width) throw new Error(`the bubble is outside the viewport: ${JSON.stringify(box)}`);
  await lastUser(page).scrollIntoViewIfNeeded();
  await shot(page, "04-long-word", "a 240-letter word wrapped inside the user's bubble");

  // With an on-screen keyboard the page gets shorter (the meta viewport
  // asks for that): the composer must stay in view, above it.
  if (page.size === "phone") {
    await page.setViewportSize({ width: 390, height: 480 });
    await composer(page).focus();
    const c = await composer(page).boundingBox();
    if (!c || c.y < 0 || c.y + c.height > 480) throw new Error(`with the keyboard open the composer is at ${JSON.stringify(c)}, outside the 480 px left`);
    await check(page, "phone with the keyboard open");
    await page.setViewportSize(sizes.phone);
  }

  // Edit the last user message and send it again: a new branch.
  await lastUser(page).hover();
  await lastUser(page).getByRole("button", { name: "Edit message" }).click();
  const edit = page.getByRole("textbox", { name: "Edit your message" });
  await edit.waitFor();
  await edit.fill("Show me the Markdown answer again, please.");
  await shot(page, "05-editing", "editing a sent message in place (Cancel / Send)");
  const before = page.chatBodies.length;
  await page.locator(".edit-composer").getByRole("button", { name: "Send" }).click();
  await expectText(page.locator(".msg.user"), "Show me the Markdown answer again", "the edited message");
  await idle(page);
  await expectText(lastAssistant(page), "Links open in a new tab", "the answer to the edited message");
  const editBody = page.chatBodies[before];
  const editText = editBody?.messages?.at(-1)?.parts?.find((p) => p.type === "text")?.text;
  if (editBody?.trigger !== "submit-message" || editText !== "Show me the Markdown answer again, please.") {
    throw new Error(`the edit sent ${JSON.stringify({ trigger: editBody?.trigger, last: editText })}`);
  }
  if (await page.locator(".msg.user").filter({ hasText: word }).count()) throw new Error("the edited-away message is still shown");
  await expectText(lastUser(page).locator(".branch-count"), "2 / 2", "the user message's branch picker");
  await lastUser(page).evaluate((el) => el.scrollIntoView({ block: "start" }));
  await shot(page, "06-edited", "the edited message (version 2 / 2) and its new answer");

  // Regenerate the last answer.
  const beforeRegen = page.chatBodies.length;
  await lastAssistant(page).getByRole("button", { name: "Regenerate answer" }).click();
  await expectText(lastAssistant(page).locator(".branch-count"), "2 / 2", "the regenerated answer's branch picker");
  await idle(page);
  await expectText(lastAssistant(page), "Links open in a new tab", "the regenerated answer");
  if (page.chatBodies[beforeRegen]?.trigger !== "regenerate-message") {
    throw new Error(`regenerate sent trigger ${JSON.stringify(page.chatBodies[beforeRegen]?.trigger)}`);
  }
  await shot(page, "07-regenerated", "a regenerated answer (version 2 / 2) with copy and regenerate actions");

  // Copy puts the answer's Markdown, or a code block's code, on the clipboard.
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  await lastAssistant(page).getByRole("button", { name: "Copy answer" }).click();
  await page.waitForFunction(() => navigator.clipboard.readText().then((t) => t.includes("## What answers can look like")));
  await lastAssistant(page).getByRole("button", { name: "Copy code" }).click();
  await page.waitForFunction(() => navigator.clipboard.readText().then((t) => t.startsWith("agent := &agentloop.Agent")))
    .catch(async () => { throw new Error(`Copy code put ${JSON.stringify(await clipboard())} on the clipboard`); });

  // Reloaded, the versions are still there (the server keeps them with
  // the chat): the edited message and the regenerated answer are 2 / 2,
  // and the edited message's first version, with its answer, is one
  // click away.
  await page.reload();
  await expectText(lastAssistant(page), "Links open in a new tab", "the regenerated answer after reload");
  await expectText(lastAssistant(page).locator(".branch-count"), "2 / 2", "the regenerated answer's branch picker after reload");
  await expectText(lastUser(page).locator(".branch-count"), "2 / 2", "the edited message's branch picker after reload");
  await lastAssistant(page).locator(".branch-picker").scrollIntoViewIfNeeded();
  await shot(page, "07a-branches-reloaded", "reloaded after an edit and a regeneration: both still 2 / 2");
  await lastUser(page).hover();
  await lastUser(page).getByRole("button", { name: "Previous version" }).click();
  await expectText(page.locator(".msg.user"), word.slice(0, 40), "the edited message's first version after reload");
  await expectText(lastUser(page).locator(".branch-count"), "1 / 2", "the first version's picker");
  if (await page.locator(".msg.user").filter({ hasText: "Show me the Markdown answer again" }).count()) throw new Error("the second version still shows beside the first");
}

async function formAndApproval(page, { approve, newName, tag, shots: take }) {
  await send(page, "What is the weather in Paris, and what is 2 + 3?");
  // Streamed text from the first step, and the backend tools' UIs.
  await expectText(page.locator(".msg.assistant"), "Let me look up the weather in Paris", "streamed text");
  await expectText(page.locator(".tool"), "get_weather Paris", "get_weather tool UI", "attached");
  await expectText(page.locator(".tool"), "= 5", "add tool UI result", "attached");

  // The browser-side form tool, prefilled with the model's arguments.
  const form = page.getByTestId("create-record-form");
  await form.waitFor();
  const name = form.locator('input[name="name"]');
  const email = form.locator('input[name="email"]');
  await name.waitFor();
  const gotName = await name.inputValue();
  const gotEmail = await email.inputValue();
  if (gotName !== "Ada Lovelace" || gotEmail !== "ada@example.com") {
    throw new Error(`form prefilled with ${JSON.stringify([gotName, gotEmail])}, want the model's arguments ["Ada Lovelace","ada@example.com"]`);
  }
  // The server has no create_record: the page sends its definition in the body's tools.
  const def = page.chatBodies[0]?.tools?.create_record;
  const props = Object.keys(def?.parameters?.properties ?? {}).sort().join(",");
  if (!def?.description || props !== "email,name") {
    throw new Error(`the chat request's tools do not define create_record with name and email: ${JSON.stringify(page.chatBodies[0]?.tools)}`);
  }
  // The form's group is open and cannot be folded while it waits.
  const formGroup = page.getByTestId("tool-group").filter({ has: form });
  if ((await formGroup.getAttribute("data-state")) !== "waiting" || !(await formGroup.evaluate((d) => d.open))) {
    throw new Error(`the form's tool group is ${await formGroup.getAttribute("data-state")}, open ${await formGroup.evaluate((d) => d.open)}; want waiting and open`);
  }
  await name.fill(newName);
  if (take) await shot(page, "08-form", `get_weather and add done; the create_record form, prefilled by the model, with the name edited to ${newName}`);
  await form.getByRole("button", { name: "Create" }).click();

  // The run continues on the server: next comes the approval prompt.
  const approval = page.getByTestId("approval");
  await approval.waitFor();
  await expectText(page.getByTestId("create-record-result"), newName, "form result shown", "attached");
  if (take) await shot(page, "09-approval", `the form's result (${newName}) and the approval prompt for delete_record {"id":42}`);
  await approval.getByRole("button", { name: approve ? "Approve" : "Deny" }).click();

  // The final answer names the submitted value and the approval decision.
  const final = approve ? "Record 42 is deleted." : "You denied deleting record 42";
  await expectText(page.locator(".msg.assistant"), "That is the whole demo.", "final answer");
  const answer = await lastAssistant(page).innerText();
  if (!answer.includes(newName)) throw new Error(`final answer does not name the submitted value ${newName}: ${answer}`);
  if (!answer.includes(final)) throw new Error(`final answer does not say ${JSON.stringify(final)}: ${answer}`);
  if (await page.getByTestId("approval").count()) throw new Error("approval buttons still shown after answering");
  if (!approve) {
    const line = await page.getByTestId("tool-delete_record").locator(".tool-status").textContent();
    if (!/^Denied/.test(line) || /error/i.test(line)) throw new Error(`a denied call should say so once: ${JSON.stringify(line)}`);
  }
  await idle(page);
  // Done, the calls fold into one row each run of calls: human labels and
  // one status; a click opens the cards.
  const groups = page.getByTestId("tool-group");
  const first = groups.first();
  await expectText(first.locator("summary"), "Weather in Paris", "the folded row's label");
  const row = await first.locator("summary").innerText();
  if (/get_weather|_/.test(row) || !/done/.test(row)) throw new Error(`the folded row reads ${JSON.stringify(row)}: want human labels and "done"`);
  if (await first.evaluate((d) => d.open)) throw new Error("a finished group of tool calls is not folded");
  if (await first.locator(".tool").first().isVisible()) throw new Error("a folded group shows its cards");
  await first.locator("summary").click();
  await first.locator(".tool").filter({ hasText: "get_weather Paris" }).waitFor();
  await shot(page, `10-final-${tag}`, `the final answer (a Markdown list) after ${approve ? "approving" : "denying"} delete_record, naming ${newName}`);
}

// subagent: a research request goes to the demo's researcher sub-agent.
// Its work shows as a group titled with its name under the call; its
// save_note call waits for the user's approval, given in the page like any
// other; then the group reads done, folds, and opens on a click.
async function subagent(page) {
  await send(page, "Research the weather in Oslo");
  const group = page.locator('[data-testid="subagent"][data-agent="researcher"]');
  await group.waitFor();
  const approval = page.getByTestId("approval");
  await approval.waitFor();
  if ((await group.getAttribute("data-state")) !== "paused" || !(await group.evaluate((d) => d.open))) {
    throw new Error(`the researcher's group is ${await group.getAttribute("data-state")}, open ${await group.evaluate((d) => d.open)}; want paused and open while it waits`);
  }
  await expectText(group.locator("summary"), "researcher", "the group's title names the agent");
  await expectText(group.getByTestId("subagent-call"), "Weather in Oslo", "the researcher's own tool call in its group");
  await expectText(group, "I will check the forecast for Oslo.", "the researcher's streamed text");
  await expectText(approval, "save_note", "the researcher's call awaits approval");
  await expectText(page.getByTestId("tool-researcher").locator(".tool-status"), "waiting for you", "the researcher call, paused with its sub-agent", "attached");
  await shot(page, "18-subagent-approval", "the researcher sub-agent's work in its group, its save_note call waiting for approval");
  await approval.getByRole("button", { name: "Approve" }).click();

  await expectText(page.locator(".msg.assistant"), "That is the whole demo.", "final answer after the sub-agent");
  const answer = await lastAssistant(page).innerText();
  if (!/Researcher:.*Oslo will be/.test(answer) || !answer.includes("The finding is in the notes.")) {
    throw new Error(`the answer does not carry the researcher's report: ${answer}`);
  }
  await idle(page);
  if (await page.getByTestId("approval").count()) throw new Error("approval buttons still shown after approving the sub-agent's call");
  if (await page.getByTestId("agent-name").count()) throw new Error("an answer without handoffs names an agent (a sub-agent is not a handoff)");
  if ((await group.getAttribute("data-state")) !== "done") throw new Error(`the researcher's group is ${await group.getAttribute("data-state")} after its answer, want done`);
  if (await group.evaluate((d) => d.open)) throw new Error("a finished sub-agent's group is not folded");
  await group.locator("summary").click();
  await expectText(group.getByTestId("subagent-call"), "Save note", "the approved call in the opened group");
  const saved = group.locator('[data-testid="subagent-call"][data-tool="save_note"]');
  if (!/done/.test(await saved.innerText())) throw new Error(`the approved save_note reads ${JSON.stringify(await saved.innerText())}, want done`);
  await shot(page, "19-subagent-done", "the researcher's group opened after the answer: its calls done, its report");
}

// agentName: an answer of a run with handoffs names the agent that speaks
// (the server's message metadata {"agent": name}; a canned stream, as the
// demo has no handoffs). The subagent step checks that answers without
// handoffs name none.
async function agentName(page) {
  const chunks = [
    { type: "start", messageId: "canned-handoff" },
    { type: "start-step" },
    { type: "message-metadata", messageMetadata: { agent: "billing" } },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "Billing here: your refund is on its way." },
    { type: "text-end", id: "t1" },
    { type: "finish-step" },
    { type: "finish", finishReason: "stop" },
  ];
  await page.route("**/api/chat", (route) =>
    route.fulfill({
      status: 200,
      headers: { "content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1" },
      body: chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n",
    }),
  );
  await send(page, "Where is my refund?");
  await expectText(lastAssistant(page), "your refund is on its way", "the handed-over answer");
  await expectText(lastAssistant(page).getByTestId("agent-name"), "billing", "the speaking agent's name");
  await shot(page, "20-agent-name", "an answer after a handoff names the agent that speaks (billing)");
}

// formCancel: Cancel on the form returns a "cancelled by the user" result
// and the run goes on.
async function formCancel(page) {
  await send(page, "Weather in Oslo?");
  const form = page.getByTestId("create-record-form");
  await form.waitFor();
  await form.getByRole("button", { name: "Cancel" }).click();
  const approval = page.getByTestId("approval");
  await approval.waitFor();
  await approval.getByRole("button", { name: "Deny" }).click();
  await expectText(page.locator(".msg.assistant"), "That is the whole demo.", "final answer");
  const answer = await lastAssistant(page).innerText();
  if (!answer.includes("cancelled by the user")) throw new Error(`final answer does not report the cancelled form: ${answer}`);
  await idle(page);
  await shot(page, "10-final-cancel", "the final answer after the user cancelled the form (\"cancelled by the user\") and denied the deletion");
}

async function toolStates(page) {
  const panel = page.getByTestId("tool-states");
  const phone = page.size === "phone";
  // The panel is a drawer behind a header button, at both sizes: the chat
  // keeps the room.
  const openPanel = async () => {
    await page.getByRole("button", { name: "Tool states" }).click();
    await page.waitForFunction(() => {
      const r = document.querySelector('[data-testid="tool-states"]').getBoundingClientRect();
      return r.right <= window.innerWidth + 0.5 && r.left >= 0;
    });
    const focused = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    if (focused !== "Close tool states") throw new Error(`the open drawer does not have the focus (it is on ${JSON.stringify(focused)})`);
  };
  const closePanel = async () => {
    // Escape inside the drawer closes it and gives the focus back.
    await panel.getByRole("button", { name: "Close tool states" }).focus();
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => getComputedStyle(document.querySelector('[data-testid="tool-states"]')).visibility === "hidden");
    const focused = await page.evaluate(() => document.activeElement?.textContent);
    if (!focused?.includes("Tool states")) throw new Error(`after closing the drawer the focus is on ${JSON.stringify(focused)}, not its button`);
  };
  if (await panel.isVisible()) throw new Error("the tool-state drawer is open before it is asked for");

  // Against a server running toolstates.json: three failing get_weather
  // calls make the tool failed in the panel; Reset makes it available again.
  await send(page, "Please fail the weather tool three times.");
  await expectText(page.locator(".msg.assistant"), "The weather tool failed three times.", "answer after the failures");
  // A failed call says so in one line, without "error" twice.
  const failedLine = await page.locator(".tool.error .tool-status").first().textContent();
  if (failedLine !== "Failed: city is empty; pass a city name") throw new Error(`failed tool line: ${JSON.stringify(failedLine)}`);
  await openPanel();
  try {
    await panel.locator('tr[data-tool="get_weather"][data-status="failed"]').waitFor();
  } catch (e) {
    throw new Error(`tool-state panel does not show get_weather failed: ${JSON.stringify(await panel.innerText())}`);
  }
  await shot(page, "11-tool-failed", "the tool-state drawer open over the chat: get_weather failed after three failures");
  await expectFocusTrapped(page, panel, "the tool-state drawer");
  await panel.getByRole("button", { name: "Reset" }).click();
  await panel.locator('tr[data-tool="get_weather"][data-status="available"]').waitFor()
    .catch(async () => {
      throw new Error(`after Reset, get_weather is not available: ${JSON.stringify(await panel.innerText().catch(() => ""))}`);
    });
  if (!phone) await shot(page, "12-tool-reset", "the tool-state drawer after Reset: get_weather available again");
  await closePanel();

  // The next turn streams some text and a get_weather call, then hangs
  // before the call can run: its tool UI shows the running state until
  // Stop (the button on the desktop, Escape on the phone) cancels the run
  // (the Go test checks that the server saw it).
  await send(page, "Now something slow.");
  await expectText(page.locator(".msg.assistant"), "Working on a long answer", "text before the hang");
  const slow = page.locator(".tool").filter({ hasText: "get_weather Berlin" });
  await expectText(slow, "looking up the forecast", "get_weather's running state", "attached");
  const stop = page.locator(".composer .stop");
  await stop.waitFor();
  // Enter while a reply runs sends nothing, adds no line, and says why.
  const posts = page.chatBodies.length;
  await composer(page).fill("one more thing");
  await composer(page).press("Enter");
  await expectText(page.getByTestId("composer-hint"), "A reply is running", "the hint after Enter during a reply");
  if ((await composer(page).inputValue()) !== "one more thing" || page.chatBodies.length !== posts) {
    throw new Error(`Enter during a reply changed the box to ${JSON.stringify(await composer(page).inputValue())} or sent (${page.chatBodies.length - posts} requests)`);
  }
  await shot(page, "13-running", "a run in progress (the model hangs) with get_weather Berlin running and the Stop button shown");
  if (phone) await page.keyboard.press("Escape");
  else await stop.click();
  await idle(page);
  await composer(page).fill("");
  await expectText(slow, "not finished", "get_weather's state after Stop", "attached");
  await expectText(lastAssistant(page).getByTestId("stopped"), "Stopped", "the stopped mark");
  await shot(page, "14-stopped", `after ${phone ? "Escape" : "Stop"}: the reply is marked stopped, get_weather Berlin not finished`);

  // The next turn fails in the model: a short sentence, not the Go error.
  await send(page, "And now fail.");
  const error = lastAssistant(page).getByTestId("error");
  // The page shows the server's text for the page (webchat's ErrorText),
  // not a generic sentence, and never the raw Go error chain.
  await expectText(error, "The simulated model failed: simulated model failure", "the failed run's message from the server");
  const shown = await error.innerText();
  if (/simtest|turn \d|agentloop/i.test(shown)) throw new Error(`the page shows the raw error: ${JSON.stringify(shown)}`);
  // The stopped call stays "not finished" once the next message cancels it for good.
  const stoppedLine = await slow.locator(".tool-status").textContent();
  if (stoppedLine !== "not finished") throw new Error(`the stopped call after the next message: ${JSON.stringify(stoppedLine)}`);
  await shot(page, "15-error", "a failed run: the server's sentence for the page (the detail is in the server log)");
}

// statuses resolves to the statuses of the next n responses whose path
// matches re (it fails after the step timeout).
function statuses(page, re, n) {
  const got = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      page.off("response", on);
      reject(new Error(`want ${n} responses to ${re}, got ${JSON.stringify(got)}`));
    }, timeout);
    const on = (r) => {
      if (!re.test(new URL(r.url()).pathname)) return;
      got.push(r.status());
      if (got.length === n) {
        clearTimeout(timer);
        page.off("response", on);
        resolve(got);
      }
    };
    page.on("response", on);
  });
}

// expectFocusTrapped checks that Tab and Shift+Tab keep the focus inside
// an open drawer: Shift+Tab from its first control goes to its last, Tab
// from its last back to its first.
async function expectFocusTrapped(page, drawer, what) {
  const inside = () => drawer.evaluate((el) => el.contains(document.activeElement));
  await drawer.locator("button").first().focus();
  await page.keyboard.press("Shift+Tab");
  if (!(await inside())) throw new Error(`${what}: Shift+Tab from its first control left the drawer`);
  await page.keyboard.press("Tab");
  if (!(await inside())) throw new Error(`${what}: Tab from its last control left the drawer`);
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press("Tab");
    if (!(await inside())) throw new Error(`${what}: Tab ${i + 1} times left the drawer`);
  }
}

// chatInPage is the chat id in the page's address ("" for none).
const chatInPage = (page) => new URL(page.url()).searchParams.get("chat") ?? "";

// chatList opens the chat list (a drawer on the phone, which closes when
// a chat is chosen) and returns it.
async function chatList(page) {
  const list = page.getByTestId("thread-list");
  if (page.size === "phone" && !(await list.evaluate((el) => el.classList.contains("open")))) {
    await page.getByRole("button", { name: "Chats", exact: true }).click();
    await page.waitForFunction(() => {
      const r = document.querySelector('[data-testid="thread-list"]').getBoundingClientRect();
      return r.left >= 0 && r.right <= window.innerWidth + 0.5;
    });
    const focused = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    if (focused !== "Close the chat list") throw new Error(`the open chat list does not have the focus (it is on ${JSON.stringify(focused)})`);
  }
  return list;
}

// listedTitles returns the titles in the chat list, top first.
const listedTitles = (page) => page.getByTestId("thread-list").locator(".thread-open").allInnerTexts();

// expectTitles waits until the chat list shows exactly want, in order.
async function expectTitles(page, want, what) {
  try {
    await page.waitForFunction((want) =>
      JSON.stringify([...document.querySelectorAll('[data-testid="thread-list"] .thread-open')].map((b) => b.textContent)) === JSON.stringify(want), want);
  } catch {
    throw new Error(`${what}: the chat list shows ${JSON.stringify(await listedTitles(page))}, want ${JSON.stringify(want)}`);
  }
}

// switchTo opens the listed chat titled title.
async function switchTo(page, title) {
  const list = await chatList(page);
  await list.locator(".thread-open").filter({ hasText: title }).click();
  await page.locator('.thread-item.current .thread-open').filter({ hasText: title }).waitFor({ state: "attached" });
  if (page.size === "phone") await page.waitForFunction(() => getComputedStyle(document.querySelector('[data-testid="thread-list"]')).visibility === "hidden");
}

// running waits until a reply runs (the Stop button shows).
async function running(page, what) {
  try {
    await page.locator(".composer .stop").waitFor();
  } catch {
    throw new Error(`${what}: no reply is running (GET …/stream answered ${JSON.stringify(page.resumes)})`);
  }
}

// chatsReloadResume, against a paced demo server with no chats: two
// chats in the list, switch between them, reload (each comes back with
// its messages and its tool calls' states, a pending form and a pending
// approval included), a reload mid-run that resumes the live stream, Stop
// after such a reload (which must stop the run on the server), and
// delete.
async function chatsReloadResume(page) {
  const markdown = "Show me what Markdown answers look like.";
  const weather = "What is the weather in Paris?";
  // Once a chat's first answer is in, the demo script names it (the
  // server's ChatServer.Title); until then its title is its first words.
  const titleA = "Formatted answers";
  const titleB = "Weather in Paris";
  await page.getByTestId("welcome").waitFor();
  await (await chatList(page)).getByText("No chats yet.").waitFor();
  if (page.size === "phone") {
    await expectFocusTrapped(page, page.getByTestId("thread-list"), "the chat list drawer");
    await page.keyboard.press("Escape");
  }

  // Chat A streams its answer; the page is reloaded mid-run and resumes
  // the stream from the server: the part streamed before the reload, then
  // the rest live, once.
  await send(page, markdown);
  await expectText(lastAssistant(page), "What answers can look like", "chat A's answer streaming");
  await running(page, "chat A's first answer");
  const chatA = chatInPage(page);
  if (!chatA) throw new Error("the address does not name the chat after its first message");
  // The tab's title follows the chat, and the list shows its reply running.
  await page.waitForFunction((t) => document.title.startsWith(t), markdown.slice(0, 20))
    .catch(async () => { throw new Error(`the tab's title is ${JSON.stringify(await page.title())}, want the chat's title`); });
  await page.locator(`[data-chat="${chatA}"] [data-testid="thread-running"]`).waitFor({ state: "attached" })
    .catch(() => { throw new Error("the chat list shows no running sign on the chat whose reply runs"); });
  await page.reload();
  await running(page, "chat A reloaded mid-run");
  if (chatInPage(page) !== chatA) throw new Error(`after reload the address names ${chatInPage(page)}, want ${chatA}`);
  if (!page.resumes.includes(200)) throw new Error(`the reloaded page did not resume the stream: GET …/stream answered ${JSON.stringify(page.resumes)}`);
  await expectText(lastUser(page), markdown, "chat A's message after the reload");
  await expectText(lastAssistant(page), "What answers can look like", "chat A's answer so far, replayed");
  await shot(page, "18-resumed", "reloaded mid-run: the answer so far, still streaming (Stop shown), resumed from the server");
  // The paced answer takes longer than one wait: wait for it to end.
  await page.locator(".composer .send").waitFor({ timeout: 4 * timeout });
  await expectText(lastAssistant(page), "Links open in a new tab", "the resumed answer's end");
  await idle(page);
  const answerA = await lastAssistant(page).innerText();
  if (answerA.split("What answers can look like").length !== 2 || (await page.locator(".msg").count()) !== 2) {
    throw new Error(`after resuming, chat A is not one question and one answer: ${await page.locator(".msg").count()} messages, ${JSON.stringify(answerA.slice(0, 300))}`);
  }

  // Chat B, a new chat, waits for the create_record form.
  await (await chatList(page)).getByTestId("new-chat").click();
  await page.getByTestId("welcome").waitFor();
  if (chatInPage(page) !== "") throw new Error(`a new chat's address names ${chatInPage(page)}`);
  await send(page, weather);
  // get_weather takes about 10 s at this pace before the form comes.
  await page.getByTestId("create-record-form").waitFor({ timeout: 4 * timeout });
  await idle(page);
  const chatB = chatInPage(page);
  if (!chatB || chatB === chatA) throw new Error(`chat B's address names ${JSON.stringify(chatB)} (chat A is ${chatA})`);
  await chatList(page);
  await expectTitles(page, [weather, titleA], "two chats, the newest first: B (paused for its form) by its first words, A by its generated title");
  const days = await page.locator('[data-testid="thread-list"] .thread-day').allInnerTexts();
  if (JSON.stringify(days.map((d) => d.toLowerCase())) !== '["today"]') throw new Error(`the list's day headings: ${JSON.stringify(days)}, want Today`);
  if (await page.locator('[data-chat] [data-testid="thread-running"]').count()) throw new Error("a running sign on a chat whose reply ended");
  // Search narrows the list to the titles that contain the words.
  const search = page.getByRole("searchbox", { name: "Search chats" });
  await search.fill("formatted");
  await expectTitles(page, [titleA], "the list searched for “formatted”");
  await search.fill("no such chat");
  await page.getByTestId("thread-list").getByText("No chat title contains").waitFor();
  await search.fill("");
  await expectTitles(page, [weather, titleA], "the list with the search cleared");
  // Export saves the chat on screen as Markdown.
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-chat").click()]);
  const exported = readFileSync(await download.path(), "utf8");
  if (!download.suggestedFilename().endsWith(".md") || !exported.includes("## You") || !exported.includes(weather) || !exported.includes("get_weather")) {
    throw new Error(`the export (${download.suggestedFilename()}) reads ${JSON.stringify(exported.slice(0, 300))}`);
  }
  await shot(page, "19-chat-list", page.size === "phone"
    ? "the chat list drawer: two chats, the current one (waiting for the form) marked"
    : "two chats in the list, the current one (waiting for the create_record form) marked");
  if (page.size === "phone") await page.keyboard.press("Escape");

  // Switch to A and back to B: each shows its own messages.
  await switchTo(page, titleA);
  await expectText(lastAssistant(page), "Links open in a new tab", "chat A after switching");
  if (chatInPage(page) !== chatA || (await page.getByTestId("create-record-form").count())) throw new Error("switching to chat A does not show chat A alone");
  await switchTo(page, weather);
  await page.getByTestId("create-record-form").waitFor();
  if (chatInPage(page) !== chatB) throw new Error(`after switching back the address names ${chatInPage(page)}, want ${chatB}`);
  await page.goBack();
  await expectText(lastAssistant(page), "Links open in a new tab", "chat A after Back");
  await page.goForward();
  await page.getByTestId("create-record-form").waitFor();

  // Reloaded, B still waits for its form (with the model's values), then
  // for the approval the form leads to.
  await page.reload();
  const form = page.getByTestId("create-record-form");
  await form.waitFor();
  await expectText(page.locator(".tool"), "get_weather Paris", "chat B's get_weather after reload", "attached");
  if ((await form.locator('input[name="name"]').inputValue()) !== "Ada Lovelace") throw new Error("the reloaded form lost the model's values");
  await form.locator('input[name="name"]').fill("Katherine Johnson");
  await form.getByRole("button", { name: "Create" }).click();
  await page.getByTestId("approval").waitFor();
  await idle(page);
  await page.reload();
  await page.getByTestId("approval").waitFor();
  await expectText(page.getByTestId("create-record-result"), "Katherine Johnson", "the form's result after reload", "attached");
  await shot(page, "20-reloaded-approval", "chat B reloaded: get_weather done, the submitted form, and the approval still waiting");
  await page.getByTestId("approval").getByRole("button", { name: "Approve" }).click();
  await expectText(lastAssistant(page), "That is the whole demo.", "chat B's final answer");
  await idle(page);
  if (!(await lastAssistant(page).innerText()).includes("Katherine Johnson")) throw new Error("chat B's final answer does not name the submitted value");

  // Chat A after a reload: intact. B, answered, has its generated title.
  await expectTitles(page, [titleB, titleA], "chat B named once its first answer is in");
  await switchTo(page, titleA);
  await page.reload();
  await expectText(lastAssistant(page), "Links open in a new tab", "chat A reloaded");
  if ((await page.locator(".msg").count()) !== 2) throw new Error(`chat A reloaded has ${await page.locator(".msg").count()} messages, want 2`);

  // A run that ends between the chat's view (streaming) and the resume
  // (204): the page loads the chat again, once, and shows it whole.
  await page.route(/\/api\/chats\/chat-[^/?]+$/, async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, json: { ...(await res.json()), streaming: true } });
  });
  const resumes = statuses(page, /^\/api\/chat\/[^/]+\/stream$/, 2);
  await page.reload();
  const got = await resumes;
  await page.unroute(/\/api\/chats\/chat-[^/?]+$/);
  if (JSON.stringify(got) !== "[204,204]") throw new Error(`a view that says streaming with no run to resume: GET …/stream answered ${JSON.stringify(got)}, want [204,204] (once, then once more after loading the chat again)`);
  await expectText(lastAssistant(page), "Links open in a new tab", "chat A after a resume that found no run");
  await idle(page);
  if ((await page.locator(".msg").count()) !== 2) throw new Error(`chat A after a resume that found no run has ${await page.locator(".msg").count()} messages, want 2`);

  // Reloaded while get_weather runs, then stopped: the run stops on the
  // server (202), the reply is marked stopped, also after another reload.
  await send(page, "And the weather in Rome?");
  await expectText(page.locator(".tool"), "looking up the forecast", "get_weather Rome running", "attached");
  await page.reload();
  await running(page, "chat A reloaded while get_weather Rome runs");
  const rome = page.locator(".tool").filter({ hasText: "get_weather Rome" });
  await expectText(rome, "looking up the forecast", "get_weather Rome still running after the reload", "attached");
  const stopResponse = page.waitForResponse((r) => /^\/api\/chat\/[^/]+\/stop$/.test(new URL(r.url()).pathname));
  await page.locator(".composer .stop").click();
  const stopStatus = (await stopResponse).status();
  if (stopStatus !== 202) throw new Error(`Stop did not stop the run on the server: POST …/stop answered ${stopStatus}, want 202`);
  await idle(page);
  await expectText(lastAssistant(page).getByTestId("stopped"), "Stopped", "the stopped mark");
  await page.reload();
  await expectText(lastAssistant(page).getByTestId("stopped"), "Stopped", "the stopped mark after reload");
  await expectText(rome, "not finished", "get_weather Rome after Stop and reload", "attached");
  await shot(page, "21-stopped-reloaded", "a reply stopped after a reload, reloaded again: marked stopped, get_weather Rome not finished");

  // A text reply (no tool call) stopped mid-stream keeps its mark after a
  // reload too.
  await send(page, markdown);
  await expectText(lastAssistant(page), "What answers can look like", "a text reply streaming");
  await running(page, "the text reply");
  await page.locator(".composer .stop").click();
  await idle(page);
  await expectText(lastAssistant(page).getByTestId("stopped"), "Stopped", "the stopped text reply's mark");
  // The mark comes from the server (the chat view's lastRun), not from
  // this browser: with its storage cleared, as in another browser, the
  // reloaded reply is still marked.
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await expectText(lastAssistant(page), "What answers can look like", "the stopped text reply after reload");
  await expectText(lastAssistant(page).getByTestId("stopped"), "Stopped", "the stopped text reply's mark after reload");
  await shot(page, "24-text-stopped-reloaded", "a text reply stopped mid-stream, reloaded: still marked stopped");

  // Delete chat A, the one on screen: it leaves the list, a new chat
  // shows, and its address no longer opens it.
  let list = await chatList(page);
  await list.getByRole("button", { name: `Delete chat: ${titleA}` }).click();
  await expectTitles(page, [titleB], "the list after deleting chat A");
  await page.getByTestId("welcome").waitFor();
  // Undo brings it back (the server never deleted it) and shows it again.
  await page.getByTestId("undo-delete").getByRole("button", { name: "Undo" }).click();
  await expectTitles(page, [titleA, titleB], "the list after Undo");
  await expectText(lastAssistant(page), "What answers can look like", "chat A shown again after Undo");
  if (chatInPage(page) !== chatA) throw new Error(`after Undo the address names ${chatInPage(page)}, want ${chatA}`);
  list = await chatList(page);
  await list.getByRole("button", { name: `Delete chat: ${titleA}` }).click();
  await expectTitles(page, [titleB], "the list after deleting chat A again");
  await page.getByTestId("welcome").waitFor();
  await page.getByTestId("undo-delete").waitFor();
  await shot(page, "22a-undo", "chat A deleted: the list holds chat B only, a new chat is on screen, and Undo is offered");
  await page.getByTestId("undo-delete").waitFor({ state: "detached", timeout: 12000 });
  if (chatInPage(page) !== "") throw new Error(`after deleting the chat on screen the address names ${chatInPage(page)}`);
  const gone = await page.evaluate((id) => fetch(`/api/chats/${id}`).then((r) => r.status), chatA);
  if (gone !== 404) throw new Error(`GET /api/chats/{deleted chat} answered ${gone}, want 404`);
  if (await page.getByTestId("tool-states").locator("table").count()) throw new Error("the tool-state panel still shows the deleted chat's tools");
  await shot(page, "22-deleted", "chat A deleted: the list holds chat B only, and a new chat is on screen");
  if (page.size === "phone") await page.keyboard.press("Escape");
  await page.goto(`${new URL(page.url()).origin}/?chat=${chatA}`);
  await expectText(page.getByTestId("notice"), "That chat no longer exists", "the deleted chat's address");
  await page.getByTestId("welcome").waitFor();
  await shot(page, "23-chat-gone", "the address of a deleted chat: a short notice, and a new chat");
}

// titleRenameFeedback: a new chat is named by the server once its first
// answer is in (the demo script's title, not the first words); a thumb
// on the answer is stored and shown again after a reload; the chat is
// renamed from the list, and the tab's title and a reload follow.
async function titleRenameFeedback(page) {
  await page.getByTestId("welcome").waitFor();
  await page.locator(".suggestion").filter({ hasText: "Markdown" }).click();
  await expectText(lastAssistant(page), "Links open in a new tab", "the Markdown answer");
  await idle(page);
  const id = chatInPage(page);
  const item = page.locator(`[data-chat="${id}"] .thread-open`);
  await expectText(item, "Formatted answers", "the chat's generated title in the list", "attached");
  await page.waitForFunction(() => document.title === "Formatted answers · agentloop webchat")
    .catch(async () => { throw new Error(`the tab's title is ${JSON.stringify(await page.title())}, want the generated title`); });

  // Thumbs: up, then down instead; each is saved (PUT …/feedback/{message}).
  const answer = lastAssistant(page);
  const up = answer.getByRole("button", { name: "Good answer" });
  const down = answer.getByRole("button", { name: "Bad answer" });
  const rated = () => page.waitForResponse((r) => /^\/api\/chats\/[^/]+\/feedback\/[^/]+$/.test(new URL(r.url()).pathname));
  let [res] = await Promise.all([rated(), up.click()]);
  if (res.status() !== 200 || (await up.getAttribute("aria-pressed")) !== "true") throw new Error(`thumb up: PUT answered ${res.status()}, pressed ${await up.getAttribute("aria-pressed")}`);
  [res] = await Promise.all([rated(), down.click()]);
  if (res.status() !== 200) throw new Error(`thumb down: PUT answered ${res.status()}`);
  await page.reload();
  await expectText(lastAssistant(page), "Links open in a new tab", "the answer after reload");
  const pressed = async () => [await up.getAttribute("aria-pressed"), await down.getAttribute("aria-pressed")];
  if (JSON.stringify(await pressed()) !== '["false","true"]') throw new Error(`after reload the thumbs are ${JSON.stringify(await pressed())} (up, down), want down`);
  await lastAssistant(page).locator(".feedback-buttons").scrollIntoViewIfNeeded();
  await shot(page, "25-feedback", "an answer rated thumbs down, after a reload: the rating came back from the server");
  // The server refuses a rating of a message that is no answer of the chat.
  const bad = await page.evaluate((id) => fetch(`/api/chats/${id}/feedback/no-such-message`, {
    method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rating: "up" }),
  }).then((r) => r.status), id);
  if (bad !== 404) throw new Error(`a rating of no answer: PUT answered ${bad}, want 404`);

  // Rename from the list: Escape keeps the title, Enter saves the new one.
  let list = await chatList(page);
  const row = list.locator(`[data-chat="${id}"]`); // other steps' chats have the same title
  await row.getByRole("button", { name: "Rename chat: Formatted answers" }).click();
  const input = row.getByRole("textbox", { name: "New title" });
  await input.fill("Something else");
  await input.press("Escape");
  await expectText(item, "Formatted answers", "the title after Escape", "attached");
  if ((await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))) !== "Rename chat: Formatted answers") {
    throw new Error("after Escape the focus is not back on the Rename button");
  }
  await row.getByRole("button", { name: "Rename chat: Formatted answers" }).click();
  await input.fill("My Markdown tour");
  await shot(page, "26-rename", "renaming a chat in the list: a one-line form in place of its title");
  await input.press("Enter");
  await expectText(item, "My Markdown tour", "the renamed chat in the list", "attached");
  await page.waitForFunction(() => document.title === "My Markdown tour · agentloop webchat")
    .catch(async () => { throw new Error(`the tab's title is ${JSON.stringify(await page.title())}, want the new title`); });
  if (page.size === "phone") await page.keyboard.press("Escape");
  await page.reload();
  await expectText(item, "My Markdown tour", "the renamed chat after reload", "attached");
  list = await chatList(page);
  await shot(page, "27-renamed", "the renamed chat in the list after a reload");
}

// chatListDays: chats last written today, yesterday and ten days ago
// (a canned GET /api/chats, as the servers' chats are all from today)
// are listed under Today, Yesterday and Earlier, newest first, by the
// browser's own calendar; a search keeps the headings of what it finds.
async function chatListDays(page) {
  const chats = await page.evaluate(() => {
    const now = new Date();
    const day = (back) => new Date(now.getFullYear(), now.getMonth(), now.getDate() - back, 12).toISOString();
    return [
      { id: "chat-days-1", title: "Lunch plans", updated: now.toISOString() },
      { id: "chat-days-2", title: "Train times to Lyon", updated: day(1) },
      { id: "chat-days-3", title: "Holiday packing list", updated: day(10) },
    ];
  });
  await page.route((url) => url.pathname === "/api/chats", (route) => route.fulfill({ json: { chats } }));
  await page.reload();
  const list = await chatList(page);
  const grouped = async () => list.locator(".thread-group").evaluateAll((groups) =>
    groups.map((g) => [g.querySelector(".thread-day").textContent, ...[...g.querySelectorAll(".thread-open")].map((b) => b.textContent)]));
  await expectTitles(page, chats.map((c) => c.title), "the canned chats");
  let got = await grouped();
  const want = [["Today", "Lunch plans"], ["Yesterday", "Train times to Lyon"], ["Earlier", "Holiday packing list"]];
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`the list's groups: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  await shot(page, "28-chat-days", "chats under Today, Yesterday and Earlier in the chat list");
  await list.getByRole("searchbox", { name: "Search chats" }).fill("train");
  await expectTitles(page, ["Train times to Lyon"], "the list searched for “train”");
  got = await grouped();
  if (JSON.stringify(got) !== JSON.stringify([want[1]])) throw new Error(`the searched list's groups: ${JSON.stringify(got)}, want ${JSON.stringify([want[1]])}`);
}

// headingSizes: an answer with three levels of heading (a canned
// stream: the demo's answer has only one) sets them largest first, each
// larger than the text.
async function headingSizes(page) {
  const chunks = [
    { type: "start", messageId: "canned-headings" },
    { type: "start-step" },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "# Trip\n\nA plan.\n\n## Day one\n\nThe museum.\n\n### Morning\n\nCoffee first." },
    { type: "text-end", id: "t1" },
    { type: "finish-step" },
    { type: "finish", finishReason: "stop" },
  ];
  await page.route("**/api/chat", (route) =>
    route.fulfill({
      status: 200,
      headers: { "content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1" },
      body: chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n",
    }),
  );
  await send(page, "Plan a trip");
  await lastAssistant(page).locator("h3").filter({ hasText: "Morning" }).waitFor();
  const px = await lastAssistant(page).evaluate((el) => ["h1", "h2", "h3", "p"].map((s) => parseFloat(getComputedStyle(el.querySelector(s)).fontSize)));
  if (!(px[0] > px[1] && px[1] > px[2] && px[2] > px[3])) throw new Error(`heading sizes h1, h2, h3, text: ${px.join(", ")} px; want largest first`);
  await check(page, `${page.size} headings`);
}

// cannedStream serves one canned response: a tool with preliminary
// output (interim progress) and a Markdown link with a javascript: URL.
async function cannedStream(page) {
  const chunks = [
    { type: "start", messageId: "canned-1" },
    { type: "start-step" },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "A [bad link](javascript:alert(1)) and a [good one](https://example.com/)." },
    { type: "text-end", id: "t1" },
    { type: "tool-input-available", toolCallId: "p1", toolName: "research", input: { topic: "otters" } },
    { type: "tool-output-available", toolCallId: "p1", output: { found: 3 }, preliminary: true },
    { type: "finish-step" },
    { type: "finish", finishReason: "stop" },
  ];
  await page.route("**/api/chat", (route) =>
    route.fulfill({
      status: 200,
      headers: { "content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1" },
      body: chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n",
    }),
  );
  await send(page, "canned");
  await expectText(lastAssistant(page), "good one", "the canned answer");
  await expectText(page.getByTestId("tool-partial"), '{"found":3}', "the preliminary output shown as partial", "attached");
  const state = await page.getByTestId("tool-research").getAttribute("data-state");
  if (state === "done") throw new Error("a call with only preliminary output shows as done");
  if (await lastAssistant(page).locator('a[href^="javascript:"]').count()) throw new Error("a javascript: link was rendered");
  if (!(await lastAssistant(page).locator(".link-dropped").filter({ hasText: "bad link" }).count())) throw new Error("the unsafe link's text is not shown as plain text");
  await shot(page, "16-preliminary", "a tool with preliminary output shown as partial output; a javascript: link shown as plain text");

  // A server that cannot be reached gets its own short sentence.
  await page.unroute("**/api/chat");
  await page.route("**/api/chat", (route) => route.abort("connectionrefused"));
  await send(page, "anyone there?");
  await expectText(lastAssistant(page).getByTestId("error"), "The server could not be reached", "the unreachable server's message");
  await shot(page, "17-unreachable", "a request that could not reach the server: its own short sentence");
}

// attachments: a file picked with the clip button, another pasted and one
// dropped show as chips; the pasted and dropped ones are removed before
// sending; a file over the 5 MB limit is refused with a sentence; the sent
// image shows in the user's message, reaches the model (the script's turn
// expects dot.png, image/png, or the run fails), comes back after a reload,
// and stays with the message when it is edited. axe finds no violation at
// all on these screens.
async function attachments(page) {
  const axeBefore = { ...axeTotals };
  const png = readFileSync(new URL("./dot.png", import.meta.url));
  const pick = async (files) => {
    const chooser = page.waitForEvent("filechooser");
    await page.getByRole("button", { name: "Attach files" }).click();
    await (await chooser).setFiles(files);
  };
  const chips = page.getByTestId("attachment-chip");
  await pick({ name: "dot.png", mimeType: "image/png", buffer: png });
  await chips.filter({ hasText: "dot.png" }).waitFor();
  await chips.filter({ hasText: "dot.png" }).locator("img.attach-thumb").waitFor();

  // Over the limit: refused with a sentence naming the file and the limit.
  await pick({ name: "huge.png", mimeType: "image/png", buffer: Buffer.alloc(5 * 1024 * 1024 + 1) });
  await expectText(page.getByTestId("attachment-error"), "huge.png is 5.0 MB; files up to 5.0 MB can be attached.", "the refused file's sentence");
  if (await chips.filter({ hasText: "huge.png" }).count()) throw new Error("a file over the limit got a chip");

  // Paste into the message box, drop on the composer.
  await composer(page).evaluate((el, b64) => {
    const dt = new DataTransfer();
    dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], "pasted.png", { type: "image/png" }));
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  }, png.toString("base64"));
  await chips.filter({ hasText: "pasted.png" }).waitFor();
  await page.locator(".attach-dropzone").evaluate((el) => {
    const dt = new DataTransfer();
    dt.items.add(new File(["some notes"], "notes.txt", { type: "text/plain" }));
    for (const type of ["dragenter", "dragover", "drop"]) el.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await chips.filter({ hasText: "notes.txt" }).waitFor();
  if (await page.getByTestId("attachment-error").count()) throw new Error("the refusal stayed after a file was added");
  await composer(page).fill("What is in this picture?");
  await shot(page, "25-attachments", "three files waiting as chips (picked, pasted, dropped) with previews and remove buttons");

  // Remove two before sending.
  for (const name of ["pasted.png", "notes.txt"]) {
    await page.getByRole("button", { name: `Remove ${name}` }).click();
    await chips.filter({ hasText: name }).waitFor({ state: "detached" });
  }
  if ((await chips.count()) !== 1) throw new Error(`${await chips.count()} chips left, want dot.png alone`);
  const before = page.chatBodies.length;
  await composer(page).press("Enter");
  await expectText(lastAssistant(page), "the script checked that the image reached the model", "the scripted answer to the image");
  await idle(page);
  const files = page.chatBodies[before]?.messages?.at(-1)?.parts?.filter((p) => p.type === "file") ?? [];
  if (files.length !== 1 || files[0].mediaType !== "image/png" || files[0].filename !== "dot.png" || files[0].url !== `data:image/png;base64,${png.toString("base64")}`) {
    throw new Error(`the request's file parts: ${JSON.stringify(files.map((f) => ({ ...f, url: f.url?.slice(0, 40) })))}`);
  }
  if (await chips.count()) throw new Error("chips stayed in the composer after sending");
  const sent = lastUser(page).locator('img[alt="dot.png"]');
  await sent.waitFor();
  if (!(await sent.evaluate((img) => img.complete && img.naturalWidth === 64))) throw new Error("the sent image does not show");
  await shot(page, "26-attachment-sent", "the sent image in the user's message and the scripted model's answer naming it");

  // The stored chat keeps the file: after a reload it is still there.
  await page.reload();
  await lastUser(page).locator('img[alt="dot.png"]').waitFor();
  await expectText(lastAssistant(page), "the script checked", "the answer after a reload");
  await check(page, `${page.size} attachment after a reload`);

  // Editing the message keeps its file (a chip in the edit composer): the
  // script's turn, which expects dot.png again, answers the new version.
  await lastUser(page).hover();
  await lastUser(page).getByRole("button", { name: "Edit message" }).click();
  const edit = page.getByRole("textbox", { name: "Edit your message" });
  await edit.waitFor();
  await page.locator(".edit-composer").getByTestId("attachment-chip").filter({ hasText: "dot.png" }).locator("img").waitFor();
  await edit.fill("And what is in this picture now?");
  await check(page, `${page.size} editing a message with a file`);
  const beforeEdit = page.chatBodies.length;
  await page.locator(".edit-composer").getByRole("button", { name: "Send" }).click();
  await expectText(lastUser(page).locator(".branch-count"), "2 / 2", "the edited message's branch picker");
  await idle(page);
  await expectText(lastAssistant(page), "the script checked that the image reached the model", "the answer to the edited message");
  const edited = page.chatBodies[beforeEdit]?.messages?.at(-1)?.parts?.filter((p) => p.type === "file") ?? [];
  if (edited.length !== 1 || edited[0].filename !== "dot.png") throw new Error(`the edit sent file parts ${JSON.stringify(edited.map((f) => f.filename))}, want dot.png`);
  await lastUser(page).locator('img[alt="dot.png"]').waitFor();

  const added = ["critical", "serious", "moderate", "minor"].filter((k) => (axeTotals[k] ?? 0) > (axeBefore[k] ?? 0));
  if (added.length) throw new Error(`axe found ${added.join(", ")} violations on the attachment screens (see the log)`);
}

async function step(name, size, fn, url = base) {
  if (only && !name.includes(only)) return;
  const started = Date.now();
  const page = await newPage(size, url);
  try {
    await fn(page);
    log(`PASS ${size} ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed = true;
    log(`FAIL ${size} ${name}:`, e.message);
    await page.screenshot({ path: join(shots, `fail-${size}-${name}.png`) }).catch(() => {});
  } finally {
    await page.close();
  }
}

const started = Date.now();
try {
  for (const size of ["desktop", "phone"]) {
    await step("welcome-markdown-edit-regenerate", size, welcomeAndMarkdown);
    await step("form-and-approve", size, (page) => formAndApproval(page, { approve: true, newName: "Grace Hopper", tag: "approve", shots: true }));
  }
  for (const size of ["desktop", "phone"]) {
    await step("subagent-approval", size, subagent);
    await step("handoff-agent-name", size, agentName);
  }
  for (const size of ["desktop", "phone"]) await step("title-rename-feedback", size, titleRenameFeedback);
  for (const size of ["desktop", "phone"]) {
    await step("chat-list-days", size, chatListDays);
    await step("markdown-headings", size, headingSizes);
  }
  await step("form-and-deny", "desktop", (page) => formAndApproval(page, { approve: false, newName: "Alan Turing", tag: "deny" }));
  await step("form-cancel", "desktop", formCancel);
  await step("preliminary-output-and-unsafe-link", "desktop", cannedStream);
  if (failBases.length >= 2) {
    await step("tool-states-stop-error", "desktop", toolStates, failBases[0]);
    await step("tool-states-stop-error", "phone", toolStates, failBases[1]);
  } else {
    log("SKIP tool-states-stop-error: WEBCHAT_FAIL_URLS does not name two servers");
  }
  if (attachBase) {
    await step("attachments", "desktop", attachments, attachBase);
    await step("attachments", "phone", attachments, attachBase);
  } else {
    log("SKIP attachments: WEBCHAT_ATTACH_URL is not set");
  }
  if (pacedBases.length >= 2) {
    await step("chats-reload-resume-delete", "desktop", chatsReloadResume, pacedBases[0]);
    await step("chats-reload-resume-delete", "phone", chatsReloadResume, pacedBases[1]);
  } else {
    log("SKIP chats-reload-resume-delete: WEBCHAT_PACED_URLS does not name two servers");
  }
} finally {
  await browser.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
log(`axe: ${axeTotals.scans} scans; violations by impact: critical ${axeTotals.critical}, serious ${axeTotals.serious}, moderate ${axeTotals.moderate}, minor ${axeTotals.minor}`);
log(`took ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (failed) {
  console.error("e2e: FAILED");
  process.exit(1);
}
log("all passed");
