/**
 * What a command returns to read (the case tree, the bench's tables, a plan or a tuning),
 * as read-only virtual documents (`parakern:` scheme, a TextDocumentContentProvider) shown
 * as rendered markdown beside the file: one document per source file, schedule and kind,
 * updated in place when shown again, never an unsaved Untitled editor that asks to be saved.
 */
import * as vscode from "vscode";

export const SCHEME = "parakern";
/** The markdown extension's command (built into VS Code); without it the markdown source is shown. */
export const PREVIEW_COMMAND = "markdown.showPreviewToSide";

export type ResultKind = "case tree" | "bench" | "plan" | "tune";

/** The document of one result: its name is the preview's title, the query keeps two files apart. */
export function resultUri(source: string, schedule: string, kind: ResultKind): vscode.Uri {
    return vscode.Uri.from({ scheme: SCHEME, path: `/${schedule} ${kind}.md`, query: source });
}

export class ResultDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly contents = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;
    private readonly registration: vscode.Disposable;

    constructor() {
        this.registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.contents.get(uri.toString()) ??
            "This parakern result is gone (the window was reloaded): run the command again.";
    }

    /** Sets the content of `uri` and shows it rendered beside the active editor (the same preview again). */
    async show(uri: vscode.Uri, content: string): Promise<void> {
        const known = this.contents.has(uri.toString());
        this.contents.set(uri.toString(), content);
        if (known) this.changed.fire(uri);
        try {
            await vscode.commands.executeCommand(PREVIEW_COMMAND, uri);
        } catch {
            const doc = await vscode.workspace.openTextDocument(uri);
            await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
        }
    }

    dispose(): void {
        this.registration.dispose();
        this.changed.dispose();
    }
}
