/** The parts of the `vscode` API the extension's modules use, with state the tests set. */
export const state = {
    config: {} as Record<string, unknown>,                // the user's settings
    workspaceConfig: {} as Record<string, unknown>,       // the workspace's (.vscode/settings.json)
    trustListeners: [] as (() => void)[],
    messages: [] as { level: string; text: string }[],
    extensions: {} as Record<string, unknown>,
    statusItems: [] as StatusBarItemMock[],
    commands: new Map<string, (...args: unknown[]) => unknown>(),
    executed: [] as unknown[][],
    output: [] as string[],
    configListeners: [] as ((e: { affectsConfiguration(k: string): boolean }) => void)[],
    shown: [] as unknown[],
    untitled: [] as { language: string; content: string }[],
    providers: new Map<string, { provideTextDocumentContent(uri: Uri): string; onDidChange?: (l: (u: Uri) => void) => unknown }>(),
    channels: [] as { name: string; log: boolean; lines: string[] }[],
    failing: new Set<string>(),
};

export function reset(config: Record<string, unknown> = {}): void {
    state.config = config;
    state.workspaceConfig = {};
    state.trustListeners = [];
    workspace.isTrusted = true;
    workspace.workspaceFolders = undefined;
    state.messages = [];
    state.extensions = {};
    state.statusItems = [];
    state.commands = new Map();
    state.executed = [];
    state.output = [];
    state.configListeners = [];
    state.shown = [];
    state.untitled = [];
    state.providers = new Map();
    state.channels = [];
    state.failing = new Set();
}

const disposable = { dispose() { /* nothing */ } };

export class ThemeColor {
    constructor(public id: string) {}
}

export enum StatusBarAlignment { Left = 1, Right = 2 }
export enum ViewColumn { Beside = -2 }
export enum LogLevel { Off = 0, Trace = 1, Debug = 2, Info = 3, Warning = 4, Error = 5 }

export class EventEmitter<T> {
    private listeners: ((value: T) => void)[] = [];
    event = (listener: (value: T) => void) => {
        this.listeners.push(listener);
        return { dispose: () => { this.listeners = this.listeners.filter((l) => l !== listener); } };
    };
    fire(value: T): void { for (const l of [...this.listeners]) l(value); }
    dispose(): void { this.listeners = []; }
}

export class StatusBarItemMock {
    text = "";
    tooltip: string | undefined;
    command: string | undefined;
    name: string | undefined;
    backgroundColor: ThemeColor | undefined;
    visible = false;
    constructor(public id: string) {}
    show(): void { this.visible = true; }
    hide(): void { this.visible = false; }
    dispose(): void { this.visible = false; }
}

export const version = "1.100.3";

/** An event nothing fires (what vscode-languageclient subscribes to when it is constructed). */
const quiet = () => disposable;

export const workspace = {
    workspaceFolders: undefined as { uri: { fsPath: string } }[] | undefined,
    isTrusted: true,
    textDocuments: [] as unknown[],
    onDidOpenTextDocument: quiet, onDidChangeTextDocument: quiet, onDidCloseTextDocument: quiet,
    onDidSaveTextDocument: quiet, onWillSaveTextDocument: quiet, onDidChangeWorkspaceFolders: quiet,
    onDidChangeConfiguration(listener: (e: { affectsConfiguration(k: string): boolean }) => void) {
        state.configListeners.push(listener);
        return disposable;
    },
    onDidGrantWorkspaceTrust(listener: () => void) {
        state.trustListeners.push(listener);
        return disposable;
    },
    async openTextDocument(init: { language: string; content: string } | Uri) {
        if (init instanceof Uri) {
            const provider = state.providers.get(init.scheme);
            return { uri: init, content: provider?.provideTextDocumentContent(init) };
        }
        state.untitled.push(init);
        return { ...init };
    },
    registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) {
        state.providers.set(scheme, provider);
        return { dispose() { state.providers.delete(scheme); } };
    },
    getConfiguration(section?: string) {
        const prefix = section ? `${section}.` : "";
        return {
            get<T>(key: string, fallback?: T): T | undefined {
                const full = prefix + key;
                if (full in state.workspaceConfig) return state.workspaceConfig[full] as T;
                return (full in state.config ? state.config[full] : fallback) as T | undefined;
            },
            inspect<T>(key: string) {
                const full = prefix + key;
                return { key: full, globalValue: state.config[full] as T | undefined,
                         workspaceValue: state.workspaceConfig[full] as T | undefined };
            },
            has(key: string) { return prefix + key in state.config; },
        };
    },
};

export const window = {
    createStatusBarItem(id: string) {
        const item = new StatusBarItemMock(id);
        state.statusItems.push(item);
        return item;
    },
    showErrorMessage(text: string) { state.messages.push({ level: "error", text }); return Promise.resolve(undefined); },
    showWarningMessage(text: string) { state.messages.push({ level: "warning", text }); return Promise.resolve(undefined); },
    activeTextEditor: undefined as unknown,
    async showTextDocument(doc: unknown) { state.shown.push(doc); return doc; },
    createOutputChannel(name: string, options?: { log: true }) {
        const channel = { name, log: Boolean(options?.log), lines: [] as string[] };
        state.channels.push(channel);
        const line = (level: string) => (m: string) => { channel.lines.push(m); state.output.push(`${level} ${m}`); };
        return { name, info: line("info"), error: line("error"), warn: line("warn"), trace: line("trace"),
                 debug: line("debug"), appendLine: line("info"), append: line("info"), replace() {}, clear() {},
                 show() {}, hide() {}, dispose() {}, logLevel: LogLevel.Info, onDidChangeLogLevel: new EventEmitter<LogLevel>().event };
    },
};

export const extensions = {
    getExtension(id: string) { return state.extensions[id]; },
};

export const commands = {
    executeCommand: async (...args: unknown[]) => {
        state.executed.push(args);
        if (state.failing.has(String(args[0]))) throw new Error(`command '${String(args[0])}' not found`);
        return undefined as unknown;
    },
    registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
        if (state.commands.has(id)) throw new Error(`command '${id}' already exists`);
        state.commands.set(id, fn);
        return disposable;
    },
};

export class Uri {
    constructor(public fsPath: string, public scheme = "file", public path = fsPath, public query = "") {}
    static from(parts: { scheme: string; path: string; query?: string }): Uri {
        return new Uri(parts.path, parts.scheme, parts.path, parts.query ?? "");
    }
    toString() {
        return this.scheme === "file" ? `file://${this.fsPath}`
            : `${this.scheme}:${encodeURI(this.path)}${this.query ? `?${encodeURIComponent(this.query)}` : ""}`;
    }
}
