import * as vscode from "vscode";

export type ServerState = "starting" | "running" | "stopped" | "error";

const ICONS: Record<ServerState, string> = {
    starting: "$(sync~spin)", running: "$(check)", stopped: "$(circle-slash)", error: "$(error)",
};

/** Status bar item: the server's state; a click shows the output channel. */
export class StatusItem implements vscode.Disposable {
    readonly item: vscode.StatusBarItem;
    state: ServerState = "stopped";

    constructor() {
        this.item = vscode.window.createStatusBarItem("parakern.status", vscode.StatusBarAlignment.Right, 100);
        this.item.name = "parakern";
        this.item.command = "parakern.showOutput";
        this.set("stopped");
        this.item.show();
    }

    set(state: ServerState, detail?: string): void {
        this.state = state;
        this.item.text = `${ICONS[state]} parakern`;
        this.item.tooltip = `parakern: ${state}${detail ? ` — ${detail}` : ""} (click for the output)`;
        this.item.backgroundColor = state === "error"
            ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
    }

    dispose(): void {
        this.item.dispose();
    }
}
