/** The Python extension's active interpreter, when ms-python.python is installed. */
import * as vscode from "vscode";

interface PythonApi {
    environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string } | undefined;
        onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
    };
}

export const PYTHON_EXTENSION_ID = "ms-python.python";

async function api(): Promise<PythonApi | undefined> {
    const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
    if (!ext) return undefined;
    return ext.isActive ? ext.exports : await ext.activate();
}

/** Path of the active interpreter (an executable or an environment folder); undefined without the extension. */
export async function activeInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
    const environments = (await api())?.environments;
    return environments?.getActiveEnvironmentPath(resource)?.path || undefined;
}

/** Subscribe to interpreter changes (no-op without the extension). */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
    try {
        const event = (await api())?.environments?.onDidChangeActiveEnvironmentPath;
        return event ? event(listener) : undefined;
    } catch {
        return undefined;
    }
}
