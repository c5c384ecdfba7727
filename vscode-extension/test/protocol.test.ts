/**
 * The real `parakern serve` (PARAKERN_SERVER, default ../.venv/bin/parakern) through
 * vscode-languageserver-protocol/node, the library vscode-languageclient itself uses,
 * with the capabilities vscode-languageclient 11 announces for lenses and actions.
 */
import { strict as assert } from "node:assert";
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import {
    CodeAction, CodeActionRequest, CodeActionResolveRequest, CodeLens, CodeLensRequest, CodeLensResolveRequest,
    ConfigurationRequest, createProtocolConnection, Diagnostic, DiagnosticSeverity, DidChangeConfigurationNotification,
    DidOpenTextDocumentNotification, ExitNotification, InitializedNotification, InitializeRequest, ProtocolConnection,
    PublishDiagnosticsNotification, PublishDiagnosticsParams, ShutdownRequest, StreamMessageReader, StreamMessageWriter,
    WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol/node";

const EXT = path.resolve(__dirname, "../..");
const REPO = path.resolve(EXT, "..");
const SERVER = path.resolve(EXT, process.env.PARAKERN_SERVER ?? "../.venv/bin/parakern");
const MATADD = path.join(REPO, "samples/matadd.c");
const WRITE_PARAM = path.join(REPO, "samples/wrong/write_param.c");
const uri = (file: string) => pathToFileURL(file).toString();

describe("parakern serve through vscode-languageserver-protocol", { timeout: 100_000 }, () => {
    let proc: ChildProcess;
    let conn: ProtocolConnection;
    const diagnostics = new Map<string, Diagnostic[]>();
    let stderr = "";
    let configuration: Record<string, unknown> = {};

    function waitFor<T>(what: string, probe: () => T | undefined, ms = 90_000): Promise<T> {
        const deadline = Date.now() + ms;
        return new Promise((resolve, reject) => {
            const poll = setInterval(() => {
                const value = probe();
                if (value !== undefined) {
                    clearInterval(poll);
                    resolve(value);
                } else if (Date.now() > deadline) {
                    clearInterval(poll);
                    reject(new Error(`timed out waiting for ${what}; stderr: ${stderr}`));
                }
            }, 100);
        });
    }

    before(async () => {
        assert.ok(fs.existsSync(SERVER), `no server at ${SERVER} (set PARAKERN_SERVER)`);
        proc = spawn(SERVER, ["serve"], { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
        proc.stderr!.on("data", (d) => { stderr += String(d); });
        conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
        conn.onNotification(PublishDiagnosticsNotification.type, (p: PublishDiagnosticsParams) => {
            diagnostics.set(p.uri, p.diagnostics);
        });
        conn.onRequest(WorkDoneProgressCreateRequest.type, () => undefined);
        conn.onRequest("workspace/codeLens/refresh", () => null);
        conn.onRequest(ConfigurationRequest.type, (p) => p.items.map(() => configuration));
        conn.onNotification("window/showMessage", () => undefined);
        conn.onNotification("window/logMessage", () => undefined);
        conn.listen();
        const init = await conn.sendRequest(InitializeRequest.type, {
            processId: process.pid,
            rootUri: uri(REPO),
            workspaceFolders: [{ uri: uri(REPO), name: "parakern" }],
            // what the extension sends: settings.ts serverSettings()
            initializationOptions: { target: "sm_80", gpuProfiles: ["h100", "a100", "t4"], strategies: null,
                                     occupancy: null, caseDiagnostics: true, caseTrees: true, timeLimitSeconds: 60, bench: {} },
            capabilities: {
                general: { positionEncodings: ["utf-16"] },
                window: { workDoneProgress: true },
                workspace: {
                    applyEdit: true, configuration: true, codeLens: { refreshSupport: true },
                    workspaceEdit: { documentChanges: true }, didChangeConfiguration: { dynamicRegistration: true },
                    executeCommand: { dynamicRegistration: true },
                },
                textDocument: {
                    synchronization: { dynamicRegistration: true, didSave: true },
                    publishDiagnostics: { relatedInformation: true, versionSupport: true },
                    hover: { contentFormat: ["markdown", "plaintext"] },
                    codeLens: { dynamicRegistration: true, resolveSupport: { properties: ["command"] } },
                    codeAction: {
                        dynamicRegistration: true, isPreferredSupport: true, disabledSupport: true, dataSupport: true,
                        resolveSupport: { properties: ["edit"] },
                        codeActionLiteralSupport: { codeActionKind: { valueSet: ["", "quickfix", "refactor", "source"] } },
                    },
                },
            },
        });
        const commands = init.capabilities.executeCommandProvider?.commands ?? [];
        for (const c of ["parakern.insertDispatcher", "parakern.bench", "parakern.showCaseTree"]) {
            assert.ok(commands.includes(c), `server provides ${c} (the client registers it)`);
        }
        await conn.sendNotification(InitializedNotification.type, {});
        for (const file of [MATADD, WRITE_PARAM]) {
            await conn.sendNotification(DidOpenTextDocumentNotification.type, {
                textDocument: { uri: uri(file), languageId: "c", version: 1, text: fs.readFileSync(file, "utf8") },
            });
        }
    });

    after(async () => {
        try {
            await Promise.race([conn.sendRequest(ShutdownRequest.type), new Promise((r) => setTimeout(r, 5000))]);
            await conn.sendNotification(ExitNotification.type);
        } catch { /* already gone */ }
        const killer = setTimeout(() => proc.kill(), 3000);
        if (proc.exitCode === null && proc.signalCode === null) await new Promise((r) => proc.once("exit", r));
        clearTimeout(killer);
        conn.dispose();
        // worker processes may still hold the pipes: let go of them
        for (const stream of [proc.stdin, proc.stdout, proc.stderr]) stream?.destroy();
    });

    const text = (d: Diagnostic) => (typeof d.message === "string" ? d.message : d.message.value);
    const caseInfos = (u: string) => (diagnostics.get(u) ?? []).filter(
        (d) => d.severity === DiagnosticSeverity.Information && /^case /.test(text(d)));

    it("PK004 on samples/wrong/write_param.c at line 6, characters 16-17", async () => {
        const pk004 = await waitFor("PK004", () => (diagnostics.get(uri(WRITE_PARAM)) ?? []).find((d) => d.code === "PK004"));
        assert.equal(pk004.severity, DiagnosticSeverity.Error);
        assert.deepEqual(pk004.range, { start: { line: 6, character: 16 }, end: { line: 6, character: 17 } });
        assert.equal(pk004.source, "parakern");
    });

    // matadd has one case: its 12- and 16-register kernels take the same registers per block (R_B)
    it("the case information diagnostic on matadd's meta_schedule", async () => {
        const infos = await waitFor("case diagnostics", () => { const c = caseInfos(uri(MATADD)); return c.length >= 1 ? c : undefined; });
        assert.equal(infos.length, 1);
        assert.match(text(infos[0]), /^case 1\/1: /);
    });

    it("code lenses: the summary (resolved) 'runs case 1 on … · 1 case', Insert dispatcher, Bench", async () => {
        await waitFor("case diagnostics", () => (caseInfos(uri(MATADD)).length >= 1 ? true : undefined));
        // the cases come first, which GPU runs them just after: ask until the lens says so
        const deadline = Date.now() + 60_000;
        let resolved: CodeLens[] = [];
        let titles: string[] = [];
        do {
            const lenses = (await conn.sendRequest(CodeLensRequest.type, { textDocument: { uri: uri(MATADD) } })) ?? [];
            assert.equal(lenses.length, 3);
            resolved = [];
            for (const lens of lenses) {
                resolved.push(lens.command ? lens : await conn.sendRequest(CodeLensResolveRequest.type, lens));
            }
            titles = resolved.map((l) => l.command?.title ?? "");
            if (!/ on h100/.test(titles[0])) await new Promise((r) => setTimeout(r, 100));
        } while (!/ on h100/.test(titles[0]) && Date.now() < deadline);
        assert.match(titles[0], /^runs case 1 on h100, a100, t4 · \d+ regs · no smem · 1 case$/);
        assert.deepEqual(titles.slice(1), ["Insert dispatcher", "Bench"]);
        assert.equal(resolved[0].command?.command, "parakern.showCaseTree");
        assert.deepEqual(resolved.slice(1).map((l) => l.command?.command), ["parakern.insertDispatcher", "parakern.bench"]);
        assert.equal(resolved[1].command?.arguments?.[0], uri(MATADD));
        assert.equal(typeof resolved[1].command?.arguments?.[1], "string");
    });

    it("code action 'Insert comprehensive dispatcher', resolved to an edit", async () => {
        const keyword = await waitFor("case diagnostics", () => caseInfos(uri(MATADD))[0]);
        const actions = (await conn.sendRequest(CodeActionRequest.type, {
            textDocument: { uri: uri(MATADD) }, range: keyword.range,
            context: { diagnostics: [], triggerKind: 1 },
        })) ?? [];
        const action = actions.find((a): a is CodeAction => "title" in a && a.title.startsWith("Insert comprehensive dispatcher"));
        assert.ok(action, `actions: ${JSON.stringify(actions.map((a) => a.title))}`);
        const full = action.edit ? action : await conn.sendRequest(CodeActionResolveRequest.type, action);
        const edits = JSON.stringify(full.edit);
        assert.match(edits, /parakern:begin/);
        assert.match(edits, /parakern:end/);
    });

    it("the command the summary lens runs returns the case tree", async () => {
        const lenses = (await conn.sendRequest(CodeLensRequest.type, { textDocument: { uri: uri(MATADD) } })) ?? [];
        const id = lenses.find((l) => l.command?.command === "parakern.insertDispatcher")!.command!.arguments![1];
        const tree = await conn.sendRequest("workspace/executeCommand", {
            command: "parakern.showCaseTree", arguments: [uri(MATADD), id, "markdown"],
        });
        assert.equal(typeof tree, "string");
        assert.match(String(tree), /case/i);
    });

    it("didChangeConfiguration as vscode-languageclient sends it ({parakern: {...}}) is applied", async () => {
        configuration = { caseDiagnostics: false };
        await conn.sendNotification(DidChangeConfigurationNotification.type, {
            settings: { parakern: { caseDiagnostics: false, path: "", interpreter: "", trace: { server: "off" } } },
        });
        await waitFor("case diagnostics gone", () => (diagnostics.has(uri(MATADD)) && caseInfos(uri(MATADD)).length === 0 ? true : undefined), 30_000);
    });
});
