/**
 * Where `parakern serve` comes from, in this order:
 *
 *  1. the `parakern.path` setting (an explicit path is used or reported, never skipped);
 *  2. the selected Python interpreter's environment: the `parakern.interpreter` setting,
 *     else the Python extension's active interpreter (`ms-python.python`,
 *     `environments.getActiveEnvironmentPath()`); `parakern` is looked for next to the
 *     interpreter (`<dir of python>/parakern`, `Scripts\parakern.exe` on Windows);
 *  3. `PATH`.
 *
 * In Restricted Mode (an untrusted workspace), only steps 1 and 2 with the user's own settings
 * (`parakern.path`, `parakern.interpreter`: absolute, outside the workspace folders): never the
 * Python extension's interpreter (it may be a workspace's `.venv`), never `PATH`; with neither
 * set, the server does not start.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const NOT_FOUND_MESSAGE =
    "parakern not found: pip install -e /path/to/parakern in your Python environment, or set parakern.path";

export const RESTRICTED_MESSAGE =
    "parakern does not start in Restricted Mode unless parakern.path or parakern.interpreter is set in your user " +
    "settings: trust this workspace, or set one of them";

export type Source = "parakern.path" | "parakern.interpreter" | "python extension" | "PATH";

export interface Resolved {
    command: string;
    source: Source;
    /** Every place looked at, in order, for the output channel. */
    tried: string[];
}

export interface Unresolved {
    error: string;
    tried: string[];
}

export interface ResolveInput {
    /** The parakern.path setting ("" or undefined: unset). */
    path?: string;
    /** The parakern.interpreter setting. */
    interpreter?: string;
    /** The Python extension's active interpreter (a python executable or an environment folder). */
    pythonExtensionInterpreter?: () => Promise<string | undefined>;
    /** Workspace folder for ${workspaceFolder} and relative paths. */
    workspaceFolder?: string;
    /** false in Restricted Mode: the user's own absolute paths only, outside these folders. */
    trusted?: boolean;
    /** Every workspace folder (Restricted Mode refuses a program inside one of them). */
    workspaceFolders?: string[];
    env?: NodeJS.ProcessEnv;
    platform?: NodeJS.Platform;
    isExecutable?: (file: string) => boolean;
}

export function defaultIsExecutable(file: string): boolean {
    try {
        const st = fs.statSync(file);
        if (!st.isFile()) return false;
        if (process.platform === "win32") return true;
        fs.accessSync(file, fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/** `~`, `${workspaceFolder}`, `${userHome}` and `${env:NAME}` expanded; relative paths against the workspace folder. */
export function expandPath(value: string, workspaceFolder?: string, env: NodeJS.ProcessEnv = process.env): string {
    let out = value.trim();
    out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder ?? "");
    out = out.replace(/\$\{userHome\}/g, os.homedir());
    out = out.replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => env[name] ?? "");
    if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) out = path.join(os.homedir(), out.slice(1));
    if (!path.isAbsolute(out) && workspaceFolder && /[\\/]/.test(out)) out = path.join(workspaceFolder, out);
    return out;
}

function exeNames(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string[] {
    if (platform !== "win32") return ["parakern"];
    const exts = (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean).map((e) => e.toLowerCase());
    return ["parakern", ...exts.map((e) => `parakern${e}`)];
}

/** Candidate `parakern` files for an interpreter: next to it, or inside it when it is an environment folder. */
export function candidatesForInterpreter(interpreter: string, platform: NodeJS.Platform = process.platform,
                                         env: NodeJS.ProcessEnv = process.env): string[] {
    const p = platform === "win32" ? path.win32 : path.posix;
    const names = exeNames(platform, env);
    const dirs: string[] = [];
    let isDir = false;
    try { isDir = fs.statSync(interpreter).isDirectory(); } catch { /* not there: treat as a file */ }
    if (isDir) {
        dirs.push(p.join(interpreter, "bin"), p.join(interpreter, "Scripts"), interpreter);
    } else {
        const dir = p.dirname(interpreter);
        dirs.push(dir);
        if (platform === "win32") dirs.push(p.join(dir, "Scripts"));
    }
    return dirs.flatMap((d) => names.map((n) => p.join(d, n)));
}

export function candidatesOnPath(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
    const p = platform === "win32" ? path.win32 : path.posix;
    const value = env.PATH ?? env.Path ?? "";
    const sep = platform === "win32" ? ";" : ":";
    const names = exeNames(platform, env);
    return value.split(sep).filter(Boolean).flatMap((d) => names.map((n) => p.join(d, n)));
}

/** Whether `file` is one of `folders` or lies inside one (symbolic links followed where they exist). */
export function insideFolders(file: string, folders: string[]): boolean {
    const real = (p: string) => {
        try { return fs.realpathSync(p); } catch { return path.resolve(p); }
    };
    const target = real(file);
    return folders.some((folder) => {
        const relative = path.relative(real(folder), target);
        return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
    });
}

/** Why Restricted Mode refuses a program-naming setting ("" when it does not). */
function restrictedProblem(setting: Source, value: string, expanded: string, folders: string[]): string {
    if (value.includes("${workspaceFolder}") || !path.isAbsolute(expanded) || insideFolders(expanded, folders)) {
        return `Restricted Mode: ${setting} (${value}) must be an absolute path outside the workspace ` +
            "(trust this workspace to run a program from it)";
    }
    return "";
}

export async function resolveServer(input: ResolveInput): Promise<Resolved | Unresolved> {
    const env = input.env ?? process.env;
    const platform = input.platform ?? process.platform;
    const isExe = input.isExecutable ?? defaultIsExecutable;
    const tried: string[] = [];
    const restricted = input.trusted === false;
    const folders = input.workspaceFolders ?? (input.workspaceFolder ? [input.workspaceFolder] : []);
    // In Restricted Mode nothing is read against the workspace folder: no ${workspaceFolder}, no relative path.
    const base = restricted ? undefined : input.workspaceFolder;

    // 1. parakern.path
    if (input.path && input.path.trim()) {
        const file = expandPath(input.path, base, env);
        tried.push(`parakern.path: ${file}`);
        const problem = restricted ? restrictedProblem("parakern.path", input.path.trim(), file, folders) : "";
        if (problem) return { error: problem, tried };
        if (isExe(file)) return { command: file, source: "parakern.path", tried };
        return {
            error: `parakern.path is set to ${file}, which is not an executable file: fix or clear the setting`,
            tried,
        };
    }

    // 2. the interpreter's environment
    const interpreters: [Source, () => Promise<string | undefined>][] = [];
    if (input.interpreter && input.interpreter.trim()) {
        const interpreter = expandPath(input.interpreter, base, env);
        const problem = restricted ?
            restrictedProblem("parakern.interpreter", input.interpreter.trim(), interpreter, folders) : "";
        if (problem) {
            tried.push(`parakern.interpreter: ${interpreter}`);
            return { error: problem, tried };
        }
        interpreters.push(["parakern.interpreter", async () => interpreter]);
    } else if (input.pythonExtensionInterpreter && !restricted) {
        interpreters.push(["python extension", input.pythonExtensionInterpreter]);
    }
    for (const [source, get] of interpreters) {
        let interpreter: string | undefined;
        try {
            interpreter = await get();
        } catch (err) {
            tried.push(`${source}: ${String(err)}`);
            continue;
        }
        if (!interpreter) {
            tried.push(`${source}: no interpreter`);
            continue;
        }
        for (const file of candidatesForInterpreter(interpreter, platform, env)) {
            tried.push(`${source} (${interpreter}): ${file}`);
            if (restricted && insideFolders(file, folders)) continue;   // a link into the workspace
            if (isExe(file)) return { command: file, source, tried };
        }
    }
    if (restricted) return { error: RESTRICTED_MESSAGE, tried };

    // 3. PATH
    for (const file of candidatesOnPath(env, platform)) {
        tried.push(`PATH: ${file}`);
        if (isExe(file)) return { command: file, source: "PATH", tried };
    }
    return { error: NOT_FOUND_MESSAGE, tried };
}

export function isResolved(r: Resolved | Unresolved): r is Resolved {
    return (r as Resolved).command !== undefined;
}
