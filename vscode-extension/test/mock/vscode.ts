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
    shown: [] as { language: string; content: string }[],
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
}

const disposable = { dispose() { /* nothing */ } };

export class ThemeColor {
    constructor(public id: string) {}
}

export enum StatusBarAlignment { Left = 1, Right = 2 }
export enum ViewColumn { Beside = -2 }

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

export const workspace = {
    workspaceFolders: undefined as { uri: { fsPath: string } }[] | undefined,
    isTrusted: true,
    onDidChangeConfiguration(listener: (e: { affectsConfiguration(k: string): boolean }) => void) {
        state.configListeners.push(listener);
        return disposable;
    },
    onDidGrantWorkspaceTrust(listener: () => void) {
        state.trustListeners.push(listener);
        return disposable;
    },
    async openTextDocument(init: { language: string; content: string }) { return { ...init }; },
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
    async showTextDocument(doc: { language: string; content: string }) { state.shown.push(doc); return doc; },
    createOutputChannel(name: string) {
        const line = (level: string) => (m: string) => { state.output.push(`${level} ${m}`); };
        return { name, info: line("info"), error: line("error"), warn: line("warn"), trace: line("trace"),
                 debug: line("debug"), appendLine: line("info"), append: line("info"), show() {}, dispose() {} };
    },
};

export const extensions = {
    getExtension(id: string) { return state.extensions[id]; },
};

export const commands = {
    executeCommand: async (...args: unknown[]) => { state.executed.push(args); return undefined as unknown; },
    registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
        if (state.commands.has(id)) throw new Error(`command '${id}' already exists`);
        state.commands.set(id, fn);
        return disposable;
    },
};

export class Uri {
    constructor(public fsPath: string) {}
    toString() { return `file://${this.fsPath}`; }
}
