/**
 * The server's commands are registered by vscode-languageclient itself (from the
 * server's executeCommandProvider); this middleware only completes their arguments
 * when they come from the command palette (no arguments: the active editor and the
 * meta_schedule at or above the cursor), and shows the case tree, the bench's tables (or, without
 * a GPU, the plan or tune chosen from the bench's message) the server returns.
 */
import * as vscode from "vscode";
import { ResultDocuments, ResultKind, resultUri } from "./results";

export const SERVER_COMMANDS = ["parakern.insertDispatcher", "parakern.bench", "parakern.showCaseTree"] as const;
export const LANGUAGES = ["c", "cpp", "cuda-cpp"] as const;

export interface ScheduleLens {
    line: number;
    id: string;
}

/** The schedule for a cursor line: the last one starting at or above it, else the first. */
export function pickSchedule(schedules: ScheduleLens[], cursorLine: number): ScheduleLens | undefined {
    const sorted = [...schedules].sort((a, b) => a.line - b.line);
    let best: ScheduleLens | undefined;
    for (const s of sorted) if (s.line <= cursorLine) best = s;
    return best ?? sorted[0];
}

/** Schedules from the server's lenses: those whose command carries [uri, id]. */
export function schedulesFromLenses(lenses: { range: { start: { line: number } }; command?: { command: string; arguments?: unknown[] } }[]): ScheduleLens[] {
    const seen = new Map<string, ScheduleLens>();
    for (const lens of lenses) {
        const args = lens.command?.arguments;
        if (lens.command?.command === "parakern.insertDispatcher" && args && typeof args[1] === "string") {
            seen.set(args[1], { line: lens.range.start.line, id: args[1] });
        }
    }
    return [...seen.values()];
}

export async function completeArguments(command: string, args: unknown[]): Promise<unknown[] | undefined> {
    if (args.length > 0) return args;
    const editor = vscode.window.activeTextEditor;
    if (!editor || !(LANGUAGES as readonly string[]).includes(editor.document.languageId)) {
        void vscode.window.showWarningMessage(`${command}: open a C, C++ or CUDA file with a meta_schedule first`);
        return undefined;
    }
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>(
        "vscode.executeCodeLensProvider", editor.document.uri);
    const schedules = schedulesFromLenses((lenses ?? []).map((l) => ({
        range: l.range, command: l.command ? { command: l.command.command, arguments: l.command.arguments } : undefined,
    })));
    const chosen = pickSchedule(schedules, editor.selection.active.line);
    if (!chosen) {
        void vscode.window.showWarningMessage(`${command}: no meta_schedule in this file`);
        return undefined;
    }
    const uri = editor.document.uri.toString();
    return command === "parakern.showCaseTree" ? [uri, chosen.id, "markdown"] : [uri, chosen.id];
}

interface BenchResult {
    status?: string;
    mode?: string;
    schedule?: string;
    device?: string;
    markdown?: string;
    summary?: string[];
    plan?: string;
}

const WITHOUT_GPU: Record<string, string> = {
    plan: "the case each point runs on each GPU profile (no GPU needed)",
    tune: "the time model's best values on each GPU profile (no GPU needed)",
};

/** The bench's report as markdown: the tables, the summary and the plan (which case ran where);
 *  or the plan or tune made instead where there is no GPU. */
export function benchMarkdown(result: BenchResult): string | undefined {
    if (result.status !== "done" || typeof result.markdown !== "string") return undefined;
    const schedule = `\`${result.schedule ?? "?"}\``;
    if (result.mode === "plan" || result.mode === "tune") {
        const title = result.mode === "plan" ? "Plan" : "Tune";
        return [`# ${title} of ${schedule}: ${WITHOUT_GPU[result.mode]}`, "", result.markdown].join("\n");
    }
    const parts = [`# Bench of ${schedule} on ${result.device ?? "the GPU"}`, "", result.markdown];
    if (result.plan) parts.push("", "## Plan", "", "```", result.plan, "```");
    return parts.join("\n");
}

/** What to do with a command's result: show the case tree, or the bench's tables, as a read-only
 *  rendered document, one per file, schedule and kind (shown again: updated in place). */
export async function showResult(command: string, args: unknown[], result: unknown, documents: ResultDocuments): Promise<void> {
    const [source, schedule] = args;
    if (typeof source !== "string" || typeof schedule !== "string") return;
    let content: string | undefined;
    let kind: ResultKind = "case tree";
    if (command === "parakern.showCaseTree" && typeof result === "string") content = result;
    if (command === "parakern.bench" && result && typeof result === "object") {
        const bench = result as BenchResult;
        content = benchMarkdown(bench);
        kind = bench.mode === "plan" || bench.mode === "tune" ? bench.mode : "bench";
    }
    if (content === undefined) return;
    await documents.show(resultUri(source, schedule, kind), content);
}
