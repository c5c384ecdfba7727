/** Server resolution, settings, status and palette arguments, with the mocked `vscode` module. */
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeEach, describe, it } from "node:test";
import * as mock from "./mock/vscode";
import {
    NOT_FOUND_MESSAGE, RESTRICTED_MESSAGE, candidatesForInterpreter, expandPath, insideFolders, isResolved, resolveServer,
} from "../src/resolve";
import { SERVER_KEYS, clientSettings, needsRestart, serverSettings } from "../src/settings";
import { benchMarkdown, completeArguments, pickSchedule, schedulesFromLenses, showResult } from "../src/commands";
import { activeInterpreter } from "../src/python";
import { StatusItem } from "../src/status";
import { PREVIEW_COMMAND, ResultDocuments, SCHEME } from "../src/results";
import { TRACE_CHANNEL, TraceChannel } from "../src/trace";
import { clientOptions } from "../src/extension";
import { LanguageClient, Trace } from "vscode-languageclient/node";

function tree(): { root: string; exe: (rel: string) => string } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "parakern-ext-"));
    return {
        root,
        exe(rel: string) {
            const file = path.join(root, rel);
            fs.mkdirSync(path.dirname(file), { recursive: true });
            fs.writeFileSync(file, "#!/bin/sh\n", { mode: 0o755 });
            return file;
        },
    };
}

describe("server resolution", () => {
    beforeEach(() => mock.reset());

    it("uses parakern.path first, even when an interpreter and PATH have one", async () => {
        const t = tree();
        const explicit = t.exe("custom/parakern");
        const venv = t.exe("venv/bin/parakern");
        t.exe("venv/bin/python");
        const onPath = t.exe("pathdir/parakern");
        const r = await resolveServer({
            path: explicit, interpreter: path.join(t.root, "venv/bin/python"),
            env: { PATH: path.dirname(onPath) }, platform: "linux",
        });
        assert.ok(isResolved(r));
        assert.equal(r.command, explicit);
        assert.equal(r.source, "parakern.path");
        assert.notEqual(r.command, venv);
    });

    it("reports a parakern.path that is not executable instead of falling through", async () => {
        const t = tree();
        const onPath = t.exe("pathdir/parakern");
        const r = await resolveServer({ path: path.join(t.root, "missing"), env: { PATH: path.dirname(onPath) }, platform: "linux" });
        assert.ok(!isResolved(r));
        assert.match(r.error, /parakern\.path is set to .*missing/);
    });

    it("expands ${workspaceFolder}, ~ and relative paths", () => {
        assert.equal(expandPath("${workspaceFolder}/.venv/bin/parakern", "/ws"), "/ws/.venv/bin/parakern");
        assert.equal(expandPath(".venv/bin/parakern", "/ws"), "/ws/.venv/bin/parakern");
        assert.equal(expandPath("~/x/parakern"), path.join(os.homedir(), "x/parakern"));
        assert.equal(expandPath("${env:HOMEX}/p", undefined, { HOMEX: "/h" }), "/h/p");
    });

    it("then parakern.interpreter: <dir of python>/parakern", async () => {
        const t = tree();
        const python = t.exe("venv/bin/python");
        const beside = t.exe("venv/bin/parakern");
        const onPath = t.exe("pathdir/parakern");
        let asked = false;
        const r = await resolveServer({
            interpreter: python, env: { PATH: path.dirname(onPath) }, platform: "linux",
            pythonExtensionInterpreter: async () => { asked = true; return undefined; },
        });
        assert.ok(isResolved(r));
        assert.equal(r.command, beside);
        assert.equal(r.source, "parakern.interpreter");
        assert.equal(asked, false, "the Python extension is not asked when parakern.interpreter is set");
    });

    it("then the Python extension's active interpreter (through its API)", async () => {
        const t = tree();
        const python = t.exe("env/bin/python3");
        const beside = t.exe("env/bin/parakern");
        mock.state.extensions["ms-python.python"] = {
            isActive: true,
            exports: { environments: { getActiveEnvironmentPath: () => ({ id: "x", path: python }) } },
        };
        const r = await resolveServer({ env: { PATH: "" }, platform: "linux", pythonExtensionInterpreter: () => activeInterpreter() });
        assert.ok(isResolved(r));
        assert.equal(r.command, beside);
        assert.equal(r.source, "python extension");
    });

    it("activates the Python extension when it is not active yet", async () => {
        let activated = false;
        mock.state.extensions["ms-python.python"] = {
            isActive: false,
            activate: async () => { activated = true; return { environments: { getActiveEnvironmentPath: () => ({ id: "y", path: "/p/bin/python" }) } }; },
        };
        assert.equal(await activeInterpreter(), "/p/bin/python");
        assert.ok(activated);
    });

    it("without the Python extension, the interpreter step is skipped", async () => {
        assert.equal(await activeInterpreter(), undefined);
    });

    it("an environment folder from the Python extension is searched in bin/", () => {
        const t = tree();
        t.exe("env/bin/python");
        const c = candidatesForInterpreter(path.join(t.root, "env"), "linux", {});
        assert.equal(c[0], path.join(t.root, "env/bin/parakern"));
    });

    it("Windows: Scripts\\parakern.exe beside python.exe", () => {
        const c = candidatesForInterpreter("C:\\env\\python.exe", "win32", { PATHEXT: ".EXE;.CMD" });
        assert.ok(c.includes("C:\\env\\Scripts\\parakern.exe"));
        assert.ok(c.includes("C:\\env\\parakern.exe"));
    });

    it("falls back to PATH when the interpreter has no parakern", async () => {
        const t = tree();
        const python = t.exe("venv/bin/python");
        const onPath = t.exe("pathdir/parakern");
        const r = await resolveServer({ interpreter: python, env: { PATH: `/nonexistent:${path.dirname(onPath)}` }, platform: "linux" });
        assert.ok(isResolved(r));
        assert.equal(r.command, onPath);
        assert.equal(r.source, "PATH");
        assert.ok(r.tried.some((x) => x.includes(path.join(t.root, "venv/bin/parakern"))));
    });

    it("skips a PATH entry that is not executable", async () => {
        const t = tree();
        const plain = path.join(t.root, "a/parakern");
        fs.mkdirSync(path.dirname(plain), { recursive: true });
        fs.writeFileSync(plain, "", { mode: 0o644 });
        const good = t.exe("b/parakern");
        const r = await resolveServer({ env: { PATH: `${path.dirname(plain)}:${path.dirname(good)}` }, platform: "linux" });
        assert.ok(isResolved(r));
        assert.equal(r.command, good);
    });

    it("nothing found: the message says how to fix it", async () => {
        const r = await resolveServer({ env: { PATH: "/nonexistent" }, platform: "linux", pythonExtensionInterpreter: async () => { throw new Error("no api"); } });
        assert.ok(!isResolved(r));
        assert.equal(r.error, NOT_FOUND_MESSAGE);
        assert.match(r.error, /pip install -e .* or set parakern\.path/);
        assert.ok(r.tried.some((x) => x.startsWith("python extension: Error: no api")));
    });
});

describe("Restricted Mode (an untrusted workspace)", () => {
    beforeEach(() => mock.reset());

    it("never the Python extension's interpreter nor PATH: without the user's settings the server does not start", async () => {
        const t = tree();
        const python = t.exe("ws/.venv/bin/python");
        t.exe("ws/.venv/bin/parakern");
        const onPath = t.exe("pathdir/parakern");
        let asked = false;
        const r = await resolveServer({
            env: { PATH: path.dirname(onPath) }, platform: "linux", trusted: false,
            workspaceFolder: path.join(t.root, "ws"),
            pythonExtensionInterpreter: async () => { asked = true; return python; },
        });
        assert.ok(!isResolved(r));
        assert.equal(r.error, RESTRICTED_MESSAGE);
        assert.equal(asked, false);
        assert.deepEqual(r.tried, []);
    });

    it("the user's absolute parakern.path or parakern.interpreter outside the workspace is used", async () => {
        const t = tree();
        const explicit = t.exe("home/tools/parakern");
        const python = t.exe("home/venv/bin/python");
        const beside = t.exe("home/venv/bin/parakern");
        const ws = path.join(t.root, "ws");
        fs.mkdirSync(ws);
        const byPath = await resolveServer({ path: explicit, trusted: false, workspaceFolder: ws, platform: "linux" });
        assert.ok(isResolved(byPath) && byPath.command === explicit);
        const byInterpreter = await resolveServer({ interpreter: python, trusted: false, workspaceFolder: ws, platform: "linux" });
        assert.ok(isResolved(byInterpreter) && byInterpreter.command === beside && byInterpreter.source === "parakern.interpreter");
    });

    it("a program in the workspace, relative or through ${workspaceFolder} is refused, also through a link", async () => {
        const t = tree();
        const ws = path.join(t.root, "ws");
        const inside = t.exe("ws/.venv/bin/parakern");
        const python = t.exe("ws/.venv/bin/python");
        fs.symlinkSync(path.dirname(python), path.join(t.root, "linked"));    // outside by name, inside in fact
        for (const [key, value] of [
            ["path", inside], ["path", ".venv/bin/parakern"], ["path", "${workspaceFolder}/.venv/bin/parakern"],
            ["interpreter", python], ["interpreter", ".venv/bin/python"], ["path", path.join(t.root, "linked/parakern")],
        ]) {
            const r = await resolveServer({ [key]: value, trusted: false, workspaceFolder: ws, platform: "linux" });
            assert.ok(!isResolved(r), `${key}: ${value}`);
            assert.match(r.error, new RegExp(`^Restricted Mode: parakern\\.${key} \\(.*\\) must be an absolute path outside the workspace`));
        }
        // trusted, the same settings run the workspace's program
        const trusted = await resolveServer({ path: ".venv/bin/parakern", workspaceFolder: ws, platform: "linux" });
        assert.ok(isResolved(trusted) && trusted.command === inside);
    });

    it("a folder is inside itself; a sibling with a common prefix is not", () => {
        assert.ok(insideFolders("/a/ws", ["/a/ws"]));
        assert.ok(insideFolders("/a/ws/x/y", ["/b", "/a/ws"]));
        assert.ok(!insideFolders("/a/ws2/parakern", ["/a/ws"]));
        assert.ok(!insideFolders("/a/parakern", ["/a/ws"]));
    });

    it("only the user's settings are read: a workspace's parakern.path is ignored", () => {
        mock.reset({ "parakern.interpreter": "/home/u/venv/bin/python" });
        mock.state.workspaceConfig["parakern.path"] = "/ws/evil";
        mock.state.workspaceConfig["parakern.interpreter"] = "/ws/.venv/bin/python";
        assert.deepEqual(clientSettings(undefined, false), { path: "", interpreter: "/home/u/venv/bin/python" });
    });

    it("the settings that name a program are machine scoped and the manifest declares the untrusted behaviour", () => {
        const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8"));
        const props = manifest.contributes.configuration.properties;
        for (const key of ["parakern.path", "parakern.interpreter"]) assert.equal(props[key].scope, "machine", key);
        const others = Object.keys(props).filter((k) => props[k].scope !== "machine");
        for (const key of others) {   // no other setting names a program or a path to run
            assert.ok(!/path|interpreter|executable|command|program/i.test(`${key} ${props[key].description ?? ""} ${props[key].markdownDescription ?? ""}`), key);
        }
        const untrusted = manifest.capabilities.untrustedWorkspaces;
        assert.equal(untrusted.supported, "limited");
        assert.deepEqual(untrusted.restrictedConfigurations.sort(), ["parakern.interpreter", "parakern.path"]);
        assert.match(untrusted.description, /Restricted Mode/);
    });
});

describe("settings", () => {
    beforeEach(() => mock.reset());

    it("initializationOptions carry the server's keys only", () => {
        mock.reset({
            "parakern.target": "sm_90", "parakern.gpuProfiles": ["h100"], "parakern.strategies": ["(3b)"],
            "parakern.occupancy": "a100", "parakern.caseDiagnostics": false, "parakern.caseTrees": true,
            "parakern.timeLimitSeconds": 5, "parakern.bench": { repeat: 3 },
            "parakern.path": "/x", "parakern.interpreter": "/y", "parakern.trace.server": "verbose",
        });
        assert.deepEqual(serverSettings(), {
            target: "sm_90", gpuProfiles: ["h100"], strategies: ["(3b)"], occupancy: "a100",
            caseDiagnostics: false, caseTrees: true, timeLimitSeconds: 5, bench: { repeat: 3 },
        });
        assert.deepEqual(clientSettings(), { path: "/x", interpreter: "/y" });
    });

    it("unset settings are left out; null is kept (strategies: all)", () => {
        mock.reset({ "parakern.strategies": null });
        assert.deepEqual(serverSettings(), { strategies: null });
        assert.deepEqual(clientSettings(), { path: "", interpreter: "" });
    });

    it("the server keys are those of the settings table of docs/editor.md and of package.json", () => {
        const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8"));
        const props = Object.keys(manifest.contributes.configuration.properties);
        for (const key of SERVER_KEYS) assert.ok(props.includes(`parakern.${key}`), key);
        for (const key of ["parakern.path", "parakern.interpreter", "parakern.trace.server"]) assert.ok(props.includes(key), key);
        const readme = fs.readFileSync(path.join(__dirname, "../../../docs/editor.md"), "utf8");
        for (const key of SERVER_KEYS) assert.ok(readme.includes(`| \`${key}\``), `docs/editor.md lists ${key}`);
    });

    it("path and interpreter changes restart the server; others do not", () => {
        const event = (keys: string[]) => ({ affectsConfiguration: (k: string) => keys.includes(k) });
        assert.ok(needsRestart(event(["parakern.path"]) as never));
        assert.ok(needsRestart(event(["parakern.interpreter"]) as never));
        assert.ok(!needsRestart(event(["parakern.target"]) as never));
    });
});

describe("status bar and palette", () => {
    beforeEach(() => mock.reset());

    it("shows starting / running / stopped / error", () => {
        const s = new StatusItem();
        const item = mock.state.statusItems[0];
        assert.ok(item.visible);
        assert.equal(item.command, "parakern.showOutput");
        assert.match(item.text, /parakern/);
        for (const state of ["starting", "running", "stopped", "error"] as const) {
            s.set(state, "detail");
            assert.match(String(item.tooltip), new RegExp(`parakern: ${state}`));
        }
        assert.ok(item.backgroundColor);
        s.set("running");
        assert.equal(item.backgroundColor, undefined);
        assert.match(item.text, /\$\(check\)/);
    });

    it("picks the schedule at or above the cursor", () => {
        const lenses = [
            { range: { start: { line: 3 } }, command: { command: "parakern.showCaseTree", arguments: ["u", "f#1", "markdown"] } },
            { range: { start: { line: 3 } }, command: { command: "parakern.insertDispatcher", arguments: ["u", "f#1"] } },
            { range: { start: { line: 20 } }, command: { command: "parakern.insertDispatcher", arguments: ["u", "g#1"] } },
        ];
        const schedules = schedulesFromLenses(lenses);
        assert.deepEqual(schedules.map((s) => s.id), ["f#1", "g#1"]);
        assert.equal(pickSchedule(schedules, 0)?.id, "f#1");
        assert.equal(pickSchedule(schedules, 10)?.id, "f#1");
        assert.equal(pickSchedule(schedules, 25)?.id, "g#1");
        assert.equal(pickSchedule([], 1), undefined);
    });
});

describe("command results", () => {
    beforeEach(() => mock.reset());

    /** The content the parakern: provider gives for the document the preview command was run on, each time. */
    function previews(): { uri: string; path: string; content: string }[] {
        const provider = mock.state.providers.get(SCHEME)!;
        return mock.state.executed.filter((a) => a[0] === PREVIEW_COMMAND).map((a) => {
            const uri = a[1] as mock.Uri;
            return { uri: uri.toString(), path: uri.path, content: provider.provideTextDocumentContent(uri) };
        });
    }

    it("shows the bench's tables and plan as a rendered, read-only parakern: document", async () => {
        const documents = new ResultDocuments();
        const result = { status: "done", schedule: "matadd:0", device: "NVIDIA H100", plan: "matadd:0: 2 points",
                         markdown: "**case 1, N=64: speedup over serial C**\n\n| B0xB1 | speedup |", summary: [] };
        await showResult("parakern.bench", ["file:///w/matadd.c", "matadd:0"], result, documents);
        const [shown] = previews();
        assert.equal(shown.path, "/matadd:0 bench.md");
        assert.match(shown.content, /^# Bench of `matadd:0` on NVIDIA H100/);
        assert.match(shown.content, /\| B0xB1 \| speedup \|/);
        assert.match(shown.content, /## Plan\n\n```\nmatadd:0: 2 points\n```/);
        assert.deepEqual(mock.state.untitled, [], "no Untitled document");
    });

    it("Show Case Tree: one document per file and schedule, updated in place; never an Untitled editor", async () => {
        const documents = new ResultDocuments();
        const changed: string[] = [];
        documents.onDidChange((uri) => changed.push(uri.toString()));
        const tree = (n: number) => `# Case tree of \`f:0\`\n\nrun ${n}`;
        await showResult("parakern.showCaseTree", ["file:///w/a.c", "f:0", "markdown"], tree(1), documents);
        await showResult("parakern.showCaseTree", ["file:///w/a.c", "f:0", "markdown"], tree(2), documents);
        await showResult("parakern.showCaseTree", ["file:///w/a.c", "f:1", "markdown"], "# other", documents);
        await showResult("parakern.showCaseTree", ["file:///v/a.c", "f:0", "markdown"], "# other file", documents);
        const shown = previews();
        assert.equal(shown.length, 4);
        assert.equal(shown[0].uri, shown[1].uri, "the same document again");
        assert.equal(shown[1].content, tree(2), "with the new content");
        assert.deepEqual(changed, [shown[0].uri], "its preview told to refresh");
        assert.equal(new Set(shown.map((s) => s.uri)).size, 3);
        assert.ok(shown.every((s) => s.uri.startsWith("parakern:")));
        assert.equal(shown[0].path, "/f:0 case tree.md");
        assert.deepEqual(mock.state.untitled, [], "no Untitled document, so nothing asks to be saved");
        assert.deepEqual(mock.state.shown, [], "rendered by the markdown preview, not opened as text");
    });

    it("without the markdown preview, the read-only document itself is opened", async () => {
        const documents = new ResultDocuments();
        mock.state.failing.add(PREVIEW_COMMAND);
        await showResult("parakern.showCaseTree", ["file:///w/a.c", "f:0", "markdown"], "# tree", documents);
        const [doc] = mock.state.shown as { uri: mock.Uri; content: string }[];
        assert.equal(doc.uri.scheme, SCHEME);
        assert.equal(doc.content, "# tree");
        assert.deepEqual(mock.state.untitled, []);
    });

    it("a plan or tune made instead of the bench (no GPU) is shown as such", async () => {
        const documents = new ResultDocuments();
        const plan = { status: "done", mode: "plan", schedule: "matadd:0", markdown: "## h100 (NVIDIA H100)\n\n```\nN=1024 case 1\n```" };
        await showResult("parakern.bench", ["file:///w/matadd.c", "matadd:0"], plan, documents);
        await showResult("parakern.bench", ["file:///w/matadd.c", "matadd:0"], { ...plan, mode: "tune" }, documents);
        const [first, second] = previews();
        assert.equal(first.path, "/matadd:0 plan.md");
        assert.match(first.content, /^# Plan of `matadd:0`: the case each point runs on each GPU profile \(no GPU needed\)\n\n## h100/);
        assert.equal(second.path, "/matadd:0 tune.md");
        assert.match(second.content, /^# Tune of `matadd:0`: the time model's best values/);
    });

    it("shows nothing for a bench that did not run (the server's message says why)", async () => {
        const documents = new ResultDocuments();
        await showResult("parakern.bench", ["file:///x.c", "f:0"], { status: "missing", message: "no GPU" }, documents);
        await showResult("parakern.bench", ["file:///x.c", "f:0"], undefined, documents);
        assert.equal(benchMarkdown({ status: "cancelled" }), undefined);
        assert.deepEqual(previews(), []);
        assert.deepEqual(mock.state.shown, []);
    });

    it("keeps the arguments of a lens and asks for an editor from the palette", async () => {
        assert.deepEqual(await completeArguments("parakern.bench", ["file:///x.c", "f:0"]), ["file:///x.c", "f:0"]);
        assert.equal(await completeArguments("parakern.bench", []), undefined);
        assert.match(mock.state.messages[0].text, /parakern.bench: open a C, C\+\+ or CUDA file/);
    });
});

describe("extension code", () => {
    it("does not register the server's commands itself", () => {
        const src = ["extension.ts", "commands.ts"].map((f) => fs.readFileSync(path.join(__dirname, "../../src", f), "utf8")).join("\n");
        const registered = [...src.matchAll(/registerCommand\(\s*"([^"]+)"/g)].map((m) => m[1]);
        assert.deepEqual(registered.sort(), ["parakern.restartServer", "parakern.showOutput"]);
    });
});

describe("trace", () => {
    beforeEach(() => mock.reset());

    function changeSetting(value: string): void {
        mock.state.config["parakern.trace.server"] = value;
        for (const listener of mock.state.configListeners) listener({ affectsConfiguration: (k) => "parakern.trace.server".startsWith(k) });
    }

    it("parakern.trace.server: messages traces with the log channel at its default level (Info)", () => {
        mock.reset({ "parakern.trace.server": "messages" });
        const log = mock.window.createOutputChannel("parakern", { log: true });
        assert.equal(log.logLevel, mock.LogLevel.Info);
        const traces = new TraceChannel();
        const options = clientOptions(log as never, traces, new ResultDocuments());
        // the real vscode-languageclient decides from these options whether it traces
        const client = new LanguageClient("parakern", "parakern", { command: "parakern" }, options);
        const traced: unknown[] = [];
        const connection = { trace: async (value: unknown) => { traced.push(value); } };
        (client as unknown as { refreshTrace(c: unknown): void }).refreshTrace(connection);
        assert.deepEqual(traced, [Trace.Messages]);

        (client as unknown as { hookLogLevelChanged(c: unknown): void }).hookLogLevelChanged(connection);
        changeSetting("off");
        assert.deepEqual(traced, [Trace.Messages, Trace.Off]);
        changeSetting("verbose");
        assert.deepEqual(traced, [Trace.Messages, Trace.Off, Trace.Verbose]);
    });

    it("the trace goes to a plain channel, whatever its log level, created on the first line", () => {
        const traces = new TraceChannel();
        assert.equal(traces.logLevel, mock.LogLevel.Info);
        assert.deepEqual(mock.state.channels, []);
        const levels: number[] = [];
        traces.onDidChangeLogLevel((level) => levels.push(level));
        changeSetting("messages");
        assert.deepEqual(levels, [mock.LogLevel.Trace]);
        traces.trace("[Trace - 10:00:00] Sending request 'textDocument/hover - (7)'.");
        assert.deepEqual(mock.state.channels, [{ name: TRACE_CHANNEL, log: false,
            lines: ["[Trace - 10:00:00] Sending request 'textDocument/hover - (7)'."] }]);
        traces.dispose();
        changeSetting("off");
        assert.deepEqual(levels, [mock.LogLevel.Trace], "no event after dispose");
    });
});
