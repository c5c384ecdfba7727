/** The server's settings, read from the "parakern" configuration section. */
import * as vscode from "vscode";

/** Keys the server knows (docs/editor.md's settings table); the others (path, interpreter, trace) stay in the client. */
export const SERVER_KEYS = [
    "target", "gpuProfiles", "strategies", "occupancy", "caseDiagnostics", "caseTrees",
    "timeLimitSeconds", "bench",
] as const;

/** Settings that choose the server process: changing one restarts it. */
export const RESTART_KEYS = ["parakern.path", "parakern.interpreter"] as const;

export type ServerSettings = Partial<Record<(typeof SERVER_KEYS)[number], unknown>>;

/** The server part of the configuration, as initializationOptions (undefined values left out). */
export function serverSettings(scope?: vscode.ConfigurationScope): ServerSettings {
    const config = vscode.workspace.getConfiguration("parakern", scope);
    const out: ServerSettings = {};
    for (const key of SERVER_KEYS) {
        const value = config.get(key);
        if (value !== undefined) out[key] = value;
    }
    return out;
}

export interface ClientSettings {
    path: string;
    interpreter: string;
}

/** The settings that name the program to run. `trusted` false (Restricted Mode): the user's own
 * values only (they are `machine` scoped, which no workspace can set; read so whatever VS Code does). */
export function clientSettings(scope?: vscode.ConfigurationScope, trusted = true): ClientSettings {
    const config = vscode.workspace.getConfiguration("parakern", scope);
    const value = (key: string) => (trusted ? config.get<string>(key) : config.inspect<string>(key)?.globalValue) ?? "";
    return { path: value("path"), interpreter: value("interpreter") };
}

export function needsRestart(event: vscode.ConfigurationChangeEvent): boolean {
    return RESTART_KEYS.some((key) => event.affectsConfiguration(key));
}
