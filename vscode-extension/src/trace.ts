/**
 * `parakern.trace.server` without a second switch: vscode-languageclient 11 traces only while
 * its trace channel's log level is Trace, so with the shared log channel at its default level
 * (Info) "messages" logged nothing. This channel's level follows the setting instead, and its
 * lines go to a plain output channel, "parakern Trace", which shows every line it is given.
 */
import * as vscode from "vscode";

export const TRACE_CHANNEL = "parakern Trace";
export const TRACE_SETTING = "parakern.trace.server";

export function traceLevel(): vscode.LogLevel {
    const value = vscode.workspace.getConfiguration("parakern").get<string>("trace.server", "off");
    return value && value !== "off" ? vscode.LogLevel.Trace : vscode.LogLevel.Info;
}

export class TraceChannel implements vscode.LogOutputChannel {
    readonly name = TRACE_CHANNEL;
    private channel: vscode.OutputChannel | undefined;
    private readonly levelChanged = new vscode.EventEmitter<vscode.LogLevel>();
    readonly onDidChangeLogLevel = this.levelChanged.event;
    private readonly listener: vscode.Disposable;

    constructor() {
        this.listener = vscode.workspace.onDidChangeConfiguration((event) => {
            if (event.affectsConfiguration(TRACE_SETTING)) this.levelChanged.fire(this.logLevel);
        });
    }

    get logLevel(): vscode.LogLevel {
        return traceLevel();
    }

    /** Created on the first line: no empty channel in the list while tracing is off. */
    private get output(): vscode.OutputChannel {
        this.channel ??= vscode.window.createOutputChannel(TRACE_CHANNEL);
        return this.channel;
    }

    trace(message: string): void { this.output.appendLine(message); }
    debug(message: string): void { this.output.appendLine(message); }
    info(message: string): void { this.output.appendLine(message); }
    warn(message: string): void { this.output.appendLine(message); }
    error(error: string | Error): void { this.output.appendLine(String(error)); }
    append(value: string): void { this.output.append(value); }
    appendLine(value: string): void { this.output.appendLine(value); }
    replace(value: string): void { this.output.replace(value); }
    clear(): void { this.channel?.clear(); }
    show(columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
        this.output.show(typeof columnOrPreserveFocus === "boolean" ? columnOrPreserveFocus : preserveFocus);
    }
    hide(): void { this.channel?.hide(); }

    dispose(): void {
        this.listener.dispose();
        this.levelChanged.dispose();
        this.channel?.dispose();
    }
}
