// The extension in a real VS Code (code-server), driven through its page by headless Chromium:
// what a user sees after opening a sample. run.sh installs and serves; this file only looks.
//
//   E2E_URL        the workbench, with ?folder= the workspace
//   E2E_WORKSPACE  the workspace folder (its FILE is edited and saved: a copy)
//   E2E_FILE       the sample's name in it (a file with one meta_schedule)
//   E2E_SCHEDULE   its schedule id
//   E2E_USER_DATA  code-server's --user-data-dir (its logs hold the trace channel)
//   E2E_SHOTS      where the screenshots go (docs/)
//   E2E_MODULES    node_modules holding playwright-core
//   CHROMIUM       the browser (Debian's chromium)
//   E2E_FAILURE    where screenshots of the page go when a part fails (E2E_FAILURE-PART.png)
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

const env = (name) => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
};
const { chromium } = createRequire(path.join(env("E2E_MODULES"), "x.js"))("playwright-core");
const FILE = env("E2E_FILE");
const SCHEDULE = env("E2E_SCHEDULE");
const SOURCE = path.join(env("E2E_WORKSPACE"), FILE);
const SHOTS = env("E2E_SHOTS");
const started = Date.now();
const checks = [];
let current;   // the page, for a screenshot when a step fails

function step(message) {
    console.log(`e2e: ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s  ${message}`);
}

function check(what, ok, detail = "") {
    checks.push({ what, ok });
    console.log(`${ok ? "ok" : "not ok"} ${checks.length} - ${what}${ok || !detail ? "" : `: ${detail}`}`);
    return ok;
}

async function poll(what, probe, ms = 60_000, every = 250) {
    const deadline = Date.now() + ms;
    for (;;) {
        const value = await probe();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
        await new Promise((r) => setTimeout(r, every));
    }
}

/** Notifications seen so far (toasts and the notification center), by their text; an error's icon is codicon-error. */
async function notifications(page) {
    return page.$$eval(".notification-list-item", (items) => items.map((item) => ({
        text: item.querySelector(".notification-list-item-message")?.textContent ?? "",
        error: Boolean(item.querySelector(".notification-list-item-icon.codicon-error")),
        buttons: [...item.querySelectorAll(".notification-list-item-buttons-container .monaco-button")]
            .map((b) => b.textContent?.trim() ?? ""),
        expanded: item.closest(".notification-toast-container, .monaco-list-row")?.querySelector(".expanded") !== null,
    })));
}

/** The visible text of every frame whose body contains `marker` (webviews: the markdown preview). */
async function frameText(page, marker) {
    for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
        try {
            const text = await frame.evaluate(() => document.body?.innerText ?? "");
            if (text.includes(marker)) return text;
        } catch { /* a frame gone meanwhile */ }
    }
    return undefined;
}

async function tabs(page) {
    return page.$$eval(".tabs-container .tab .label-name", (els) => els.map((e) => e.textContent ?? ""));
}

async function runCommand(page, title) {
    await page.keyboard.press("F1");
    await page.waitForSelector(".quick-input-widget input", { state: "visible" });
    await page.keyboard.type(`>${title}`);
    await page.waitForTimeout(400);
    await page.keyboard.press("Enter");
}

/** Where `word` is on screen in the editor (the first line showing it): {x, y, width, height}. */
async function wordBox(page, word) {
    const box = await page.evaluate((w) => {
        for (const line of document.querySelectorAll(".part.editor .monaco-editor .view-line")) {
            const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                const at = node.textContent.indexOf(w);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + w.length);
                const r = range.getBoundingClientRect();
                return { x: r.x, y: r.y, width: r.width, height: r.height };
            }
        }
        return undefined;
    }, word);
    if (!box) throw new Error(`${word} is not on screen`);
    return box;
}

const centre = (b) => [b.x + b.width / 2, b.y + b.height / 2];

/** Line and column (1-based) of the sample's meta_schedule keyword. */
function keywordPosition() {
    const lines = fs.readFileSync(SOURCE, "utf8").split("\n");
    const line = lines.findIndex((l) => /\bmeta_schedule\b/.test(l));
    return [line + 1, lines[line].indexOf("meta_schedule") + 1];
}

/** The cursor to line:column, as Go to Line does it. */
async function goTo(page, [line, column]) {
    await page.keyboard.press("Control+G");
    await page.waitForSelector(".quick-input-widget input", { state: "visible" });
    await page.keyboard.type(`${line}:${column}`);
    await page.waitForTimeout(300);
    await page.keyboard.press("Enter");
    await page.waitForTimeout(300);
}

/** The page when a part failed: E2E_FAILURE-NAME.png. */
async function failureShot(name) {
    if (current && process.env.E2E_FAILURE) {
        await current.screenshot({ path: `${process.env.E2E_FAILURE}-${name}.png` }).catch(() => {});
    }
}

/** One part of the test: an error in it (a timeout) is its failure, and the next part goes on. */
async function section(name, body) {
    try {
        await body();
    } catch (err) {
        check(`${name}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`, false);
        await failureShot(name.replace(/\W+/g, "-"));
        for (let i = 0; i < 3; i++) await current?.keyboard.press("Escape");
    }
}

async function main() {
    const browser = await chromium.launch({
        executablePath: env("CHROMIUM"),
        // off the network: no name resolves but the loopback, and no background traffic
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync",
               "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
               "--disable-domain-reliability", "--disable-features=Translate,OptimizationHints,MediaRouter",
               "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
    });
    const blocked = [];
    try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
        await context.route("**/*", (route) => {
            const url = new URL(route.request().url());
            if (url.hostname === "127.0.0.1" || !url.protocol.startsWith("http")) return route.continue();
            blocked.push(url.origin);
            return route.abort();
        });
        const page = await context.newPage();
        current = page;
        await page.goto(env("E2E_URL"));
        await page.waitForSelector(".monaco-workbench .part.editor", { timeout: 90_000 });
        step("workbench loaded");

        // the sample, opened as a user does (Quick Open)
        await page.waitForSelector(".explorer-folders-view", { timeout: 60_000 });
        await page.keyboard.press("Control+P");
        await page.waitForSelector(".quick-input-widget input", { state: "visible" });
        await page.keyboard.type(FILE);
        await page.locator(".quick-input-list .monaco-list-row", { hasText: FILE }).first().waitFor({ timeout: 30_000 });
        await page.keyboard.press("Enter");
        await page.waitForSelector(".part.editor .monaco-editor .view-line", { timeout: 30_000 });
        step(`${FILE} open`);

        // code lenses: the summary (resolved once the case tree is there), Insert dispatcher, Bench
        await section("code lenses", async () => {
        const lens = await poll("the resolved summary lens", async () => {
            const text = (await page.locator(".codelens-decoration").allInnerTexts()).join(" ");
            return / on h100/.test(text) ? text : undefined;
        }, 120_000);
        step(`lens: ${lens.replace(/\s+/g, " ")}`);
        check("code lens: the case that runs on each GPU, then the count",
              /runs case \d+ on [a-z0-9]+(, [a-z0-9]+)*(; case \d+ on [a-z0-9]+(, [a-z0-9]+)*)* · .* · \d+ cases?/.test(lens)
              && ["h100", "a100", "t4"].every((gpu) => new RegExp(`case \\d+ on [a-z0-9, ]*\\b${gpu}\\b`).test(lens)), lens);
        check("code lenses: Insert dispatcher and Bench", lens.includes("Insert dispatcher") && lens.includes("Bench"), lens);
        });

        // diagnostics: the case information in the Problems panel
        await section("diagnostics", async () => {
        await page.keyboard.press("Control+Shift+M");
        const problems = await poll("the case diagnostics in Problems", async () => {
            const text = (await page.locator(".markers-panel").allInnerTexts()).join("\n");
            return /case 1\/\d+: /.test(text) ? text : undefined;
        }, 30_000);
        check("diagnostics: the case information in Problems", /case 1\/\d+: .*≤/.test(problems), problems.slice(0, 300));
        await page.keyboard.press("Control+Shift+M");   // the panel closed again: room for the hover
        });

        // hover on meta_schedule: the cases as a table
        await section("hover", async () => {
        const keyword = await wordBox(page, "meta_schedule");
        await page.mouse.move(...centre(keyword));
        const hover = page.locator(".monaco-hover", { has: page.locator("table") }).first();
        await hover.waitFor({ state: "visible", timeout: 30_000 });
        const hoverText = await hover.innerText();
        check("hover: a table of the cases", /case/i.test(hoverText) && (await hover.locator("table tr").count()) > 1,
              hoverText.slice(0, 200));
        check("hover: ≤ and ∧ render", /[≤∧]/.test(hoverText));
        // the answer first: the case each configured GPU runs, in the first lines of parakern's hover
        // (VS Code shows the case diagnostics at the keyword above it)
        const ours = hoverText.split("\n").map((l) => l.trim()).filter(Boolean);
        const start = Math.max(0, ours.findIndex((l) => l.startsWith("parakern · ")));
        const lead = ours.slice(start, start + 5).join("\n");
        check("hover: its first lines name the case that runs on each GPU, its time, registers, shared memory",
              ["H100", "A100", "T4"].every((gpu) =>
                  new RegExp(`^${gpu}: case \\d+ · [\\d.]+ [µnm]?s · \\d+ regs · (no smem|smem \\d)`, "m").test(lead)),
              lead);
        await shoot(page, "vscode-hover.png", [keyword, await hover.boundingBox()]);
        await page.mouse.move(5, 400);
        await page.keyboard.press("Escape");
        step("hover checked");
        });

        // Show Case Tree (the summary lens), twice: one read-only rendered document, no Untitled editor
        await section("Show Case Tree", async () => {
        const before = (await tabs(page)).length;
        for (let i = 0; i < 2; i++) {
            await page.locator(".codelens-decoration a", { hasText: / on h100/ }).first().click();
            await poll("the case tree's editor", async () => (await tabs(page)).length > before, 30_000);
            await page.waitForTimeout(1500);
        }
        const all = await tabs(page);
        check("Show Case Tree: one editor, reused", all.length === before + 1, JSON.stringify(all));
        check("Show Case Tree: a preview of the case tree", all.some((t) => /^Preview .*case tree/.test(t)), JSON.stringify(all));
        const unsaved = await page.locator(".tabs-container .tab.dirty").count();
        check("Show Case Tree: nothing unsaved (no Untitled editor that asks to be saved)", unsaved === 0, `${unsaved} unsaved`);
        const tree = await poll("the rendered case tree", () => frameText(page, "Case tree of"), 30_000);
        check("Show Case Tree: rendered markdown (no raw table pipes)", !/^\|/m.test(tree) && /case 1/.test(tree),
              tree.slice(0, 200));
        step("case tree checked");
        });

        // the code action at the keyword: listed once; chosen, it inserts the kernels and the dispatcher
        await section("code action", async () => {
        await page.keyboard.press("Escape");
        await page.locator(".tabs-container .tab", { hasText: FILE }).first().click();
        await runCommand(page, "View: Close Editors in Other Groups");   // the source alone, full width
        await page.waitForTimeout(800);
        const dialog = page.locator(".monaco-dialog-box");   // an unsaved editor asks (the case tree did, as Untitled)
        while (await dialog.isVisible()) {
            await dialog.locator(".monaco-button", { hasText: "Don't Save" }).click();
            await page.waitForTimeout(500);
        }
        await page.locator(".tabs-container .tab", { hasText: FILE }).first().click();
        await goTo(page, keywordPosition());
        await page.keyboard.press("Control+.");
        const menu = page.locator(".action-widget").first();
        await menu.waitFor({ state: "visible", timeout: 30_000 });
        await poll("the action in the menu", async () => (await menu.innerText()).includes("Insert comprehensive dispatcher"), 30_000);
        const items = await menu.locator(".action").allInnerTexts();
        const ours = items.filter((t) => t.includes(`Insert comprehensive dispatcher (${SCHEDULE})`));
        check("code action: listed once", ours.length === 1, JSON.stringify(items));
        await shoot(page, "vscode-code-action.png", [await wordBox(page, "meta_schedule"), await menu.boundingBox()]);
        for (let i = 0; i < items.length; i++) {   // the keyboard, as the menu is driven (it covers the page)
            const focused = await menu.locator(".action.focused").first().getAttribute("aria-label");
            if (focused?.startsWith("Insert comprehensive dispatcher")) break;
            await page.keyboard.press("ArrowDown");
        }
        await page.keyboard.press("Enter");
        await page.waitForTimeout(500);
        await page.keyboard.press("Control+S");
        const saved = await poll("the insertion, saved", () => {
            const text = fs.readFileSync(SOURCE, "utf8");
            return text.includes(`// parakern:end ${SCHEDULE}`) ? text : undefined;
        }, 60_000);
        check("code action: the kernels and the dispatcher inserted",
              new RegExp(`^// parakern:begin ${SCHEDULE} from=`, "m").test(saved) && saved.includes("__global__"));
        step("code action checked");
        });

        // Bench without a GPU: what is missing, in plain words; the plan offered as a button, which shows it
        await section("bench", async () => {
        await page.locator(".codelens-decoration a", { hasText: /^Bench$/ }).first().click();
        const bench = await poll("the bench's message", async () =>
            (await notifications(page)).find((n) => n.text.startsWith("parakern bench:")), 120_000);
        step(`bench: ${bench.text}`);
        check("bench: says the GPU is missing", /no NVIDIA GPU here/.test(bench.text), bench.text);
        const toast = page.locator(".notification-toast", { hasText: "parakern bench:" }).first();
        const message = toast.locator(".notification-list-item-message").first();
        const cut = await message.evaluate((e) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1);
        check("bench: the whole message shows (not cut to one line)", !cut);
        await page.waitForTimeout(1000);   // the toast's slide-in animation
        await shoot(page, "vscode-bench.png", [await toast.boundingBox()]);
        check("bench: plain text, no backticks", !bench.text.includes("`"), bench.text);
        check("bench: the plan and tune as buttons", JSON.stringify(bench.buttons) === JSON.stringify(["Show the plan", "Tune"]),
              JSON.stringify(bench.buttons));
        await page.locator(".notification-list-item", { hasText: "parakern bench:" })
            .locator(".monaco-button", { hasText: "Show the plan" }).first().click();
        const plan = await poll("the plan's preview", () => frameText(page, "Plan of"), 120_000);
        check("bench: the plan shown, rendered", /case 1/.test(plan) && /h100/.test(plan), plan.slice(0, 200));
        const planned = await poll("the plan's message", async () =>
            (await notifications(page)).find((n) => n.text.startsWith("parakern plan of")), 30_000);
        step(`plan: ${planned.text}`);
        });

        // no error notification all along (the center keeps the toasts that hid themselves)
        await runCommand(page, "Notifications: Show Notifications");
        await page.waitForTimeout(800);
        const errors = (await notifications(page)).filter((n) => n.error);
        check("no error notification", errors.length === 0, JSON.stringify(errors));

        // parakern.trace.server: "messages" (settings.json) traced, the log level left as it was
        const logs = path.join(env("E2E_USER_DATA"), "logs");
        const traced = fs.readdirSync(logs, { recursive: true }).map(String).filter((f) => /parakern.*\.log$/.test(f))
            .map((f) => fs.readFileSync(path.join(logs, f), "utf8")).join("\n");
        check("trace: the messages in the parakern output (Trace channel)", /Sending request 'textDocument\/hover/.test(traced),
              `${traced.length} characters`);
        check("off the network: no request left the machine", blocked.length === 0, [...new Set(blocked)].join(", "));
    } catch (err) {
        await failureShot("page");
        throw err;
    } finally {
        await browser.close();
    }
}

/** A screenshot of the region around `boxes` (PNG, small: that region only). */
async function shoot(page, name, boxes) {
    const x0 = Math.max(0, Math.min(...boxes.map((b) => b.x)) - 80);
    const y0 = Math.max(0, Math.min(...boxes.map((b) => b.y)) - 60);
    const x1 = Math.min(1280, Math.max(...boxes.map((b) => b.x + b.width)) + 80);
    const y1 = Math.min(800, Math.max(...boxes.map((b) => b.y + b.height)) + 30);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, name), clip: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } });
}

function total() {
    const since = Number(process.env.E2E_STARTED);
    if (since) console.log(`e2e: ${Math.round(Date.now() / 1000 - since)} s in all, the install included`);
}

main().then(() => {
    total();
    const failed = checks.filter((c) => !c.ok).length;
    console.log(`${checks.length - failed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
}, (err) => {
    console.error(`e2e: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    total();
    const failed = checks.filter((c) => !c.ok).length + 1;
    console.log(`${checks.length - failed + 1} passed, ${failed} failed`);
    process.exit(1);
});
