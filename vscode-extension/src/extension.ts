import * as vscode from "vscode";
import {
    LanguageClient, LanguageClientOptions, ServerOptions, State, TransportKind,
} from "vscode-languageclient/node";
import { completeArguments, LANGUAGES, SERVER_COMMANDS, showResult } from "./commands";
import { activeInterpreter, onInterpreterChange } from "./python";
import { RESTRICTED_MESSAGE, isResolved, resolveServer } from "./resolve";
import { clientSettings, needsRestart, serverSettings } from "./settings";
import { ResultDocuments } from "./results";
import { StatusItem } from "./status";
import { TraceChannel } from "./trace";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let trace: TraceChannel;
let documents: ResultDocuments;
let status: StatusItem;
let starting: Promise<void> | undefined;

function log(message: string): void {
    output.info(message);
}

function workspaceFolder(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** The client's options: the documents, the settings sent, the channels, the commands' middleware. */
export function clientOptions(log: vscode.LogOutputChannel, traces: vscode.LogOutputChannel,
                              results: ResultDocuments): LanguageClientOptions {
    return {
        documentSelector: LANGUAGES.flatMap((language) => [
            { scheme: "file", language }, { scheme: "untitled", language },
        ]),
        initializationOptions: serverSettings(),
        synchronize: { configurationSection: "parakern" },
        outputChannel: log,
        // its level follows parakern.trace.server (the log channel's stays the user's)
        traceOutputChannel: traces,
        middleware: {
            executeCommand: async (command, args, next) => {
                const full = await completeArguments(command, args);
                if (full === undefined) return undefined;
                const result = await next(command, full);
                await showResult(command, full, result, results);
                return result;
            },
        },
    };
}

async function start(): Promise<void> {
    status.set("starting");
    const trusted = vscode.workspace.isTrusted;
    const settings = clientSettings(undefined, trusted);
    if (!trusted) log("Restricted Mode: the server runs only from parakern.path or parakern.interpreter of your user settings");
    const resolved = await resolveServer({
        path: settings.path,
        interpreter: settings.interpreter,
        pythonExtensionInterpreter: () => activeInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri),
        workspaceFolder: workspaceFolder(),
        workspaceFolders: vscode.workspace.workspaceFolders?.map((folder) => folder.uri.fsPath),
        trusted,
    });
    for (const place of resolved.tried) log(`looked for the server: ${place}`);
    if (!isResolved(resolved) && resolved.error === RESTRICTED_MESSAGE) {
        log(resolved.error);
        status.set("stopped", "Restricted Mode");
        void vscode.window.showWarningMessage(resolved.error, "Manage Workspace Trust", "Open Settings").then((choice) => {
            if (choice === "Manage Workspace Trust") void vscode.commands.executeCommand("workbench.trust.manage");
            if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "parakern.");
        });
        return;
    }
    if (!isResolved(resolved)) {
        output.error(resolved.error);
        status.set("error", resolved.error);
        void vscode.window.showErrorMessage(resolved.error, "Open Settings", "Show Output").then((choice) => {
            if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "parakern.");
            if (choice === "Show Output") output.show(true);
        });
        return;
    }
    log(`starting ${resolved.command} serve (from ${resolved.source})`);
    const serverOptions: ServerOptions = {
        command: resolved.command,
        args: ["serve"],
        transport: TransportKind.stdio,
        options: { cwd: workspaceFolder() },
    };
    const c = new LanguageClient("parakern", "parakern", serverOptions, clientOptions(output, trace, documents));
    client = c;
    c.onDidChangeState((e) => {
        if (e.newState === State.Starting) status.set("starting");
        else if (e.newState === State.Running) status.set("running", `${resolved.command} (${resolved.source})`);
        else if (e.newState === State.Stopped && status.state !== "error") status.set("stopped");
    });
    try {
        await c.start();
        log(`server running: ${SERVER_COMMANDS.join(", ")} are provided by the server`);
    } catch (err) {
        const message = `parakern serve failed to start (${resolved.command}): ${err instanceof Error ? err.message : String(err)}`;
        log(message);
        status.set("error", message);
        void vscode.window.showErrorMessage(message, "Show Output").then((choice) => {
            if (choice) output.show(true);
        });
    }
}

async function stop(): Promise<void> {
    const c = client;
    client = undefined;
    if (c) {
        try {
            await c.stop(5000);
        } catch (err) {
            log(`stopping the server: ${String(err)}`);
        }
    }
    status.set("stopped");
}

async function restart(): Promise<void> {
    if (starting) await starting;
    log("restarting the server");
    starting = stop().then(start).finally(() => { starting = undefined; });
    await starting;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    output = vscode.window.createOutputChannel("parakern", { log: true });
    trace = new TraceChannel();
    documents = new ResultDocuments();
    status = new StatusItem();
    context.subscriptions.push(output, trace, documents, status);
    void vscode.commands.executeCommand("setContext", "parakern.languages", [...LANGUAGES]);
    context.subscriptions.push(
        vscode.commands.registerCommand("parakern.restartServer", restart),
        vscode.commands.registerCommand("parakern.showOutput", () => output.show(true)),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (needsRestart(event)) void restart();
        }),
        vscode.workspace.onDidGrantWorkspaceTrust(() => void restart()),   // the interpreter and PATH count now
    );
    const python = await onInterpreterChange(() => {
        if (!clientSettings().path && !clientSettings().interpreter) void restart();
    });
    if (python) context.subscriptions.push(python);
    starting = start().finally(() => { starting = undefined; });
    await starting;
}

export async function deactivate(): Promise<void> {
    await stop();
}
