/** activate() with the mocked `vscode`, when no server can be found. */
import { strict as assert } from "node:assert";
import { it } from "node:test";
import * as mock from "./mock/vscode";
import { activate, deactivate } from "../src/extension";
import { RESTRICTED_MESSAGE } from "../src/resolve";

it("activate: no server anywhere → status error, a notification with the fix, only the client's commands", async () => {
    const savedPath = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
        mock.reset({});
        const context = { subscriptions: [] as { dispose(): void }[] };
        await activate(context as never);
        assert.deepEqual([...mock.state.commands.keys()].sort(), ["parakern.restartServer", "parakern.showOutput"]);
        const errors = mock.state.messages.filter((m) => m.level === "error").map((m) => m.text);
        assert.deepEqual(errors, ["parakern not found: pip install -e /path/to/parakern in your Python environment, or set parakern.path"]);
        const item = mock.state.statusItems[0];
        assert.match(String(item.tooltip), /^parakern: error/);
        assert.match(item.text, /\$\(error\) parakern/);
        assert.ok(mock.state.output.some((l) => l.startsWith("info looked for the server: PATH: /nonexistent/parakern")));
        assert.ok(mock.state.executed.some((a) => a[0] === "setContext" && a[1] === "parakern.languages"));

        // parakern.path set to nothing executable: the message names the setting
        mock.state.config["parakern.path"] = "/nonexistent/parakern";
        mock.state.messages = [];
        for (const listener of mock.state.configListeners) listener({ affectsConfiguration: (k) => k === "parakern.path" || k === "parakern" });
        await new Promise((r) => setTimeout(r, 50));
        await mock.state.commands.get("parakern.restartServer")!();
        assert.ok(mock.state.messages.some((m) => m.level === "error" && /parakern\.path is set to \/nonexistent\/parakern/.test(m.text)));
        await deactivate();
        assert.match(String(item.tooltip), /^parakern: stopped/);
    } finally {
        process.env.PATH = savedPath;
    }
});

it("activate in Restricted Mode: a workspace's parakern.path is not run, nothing starts, a warning says why; trust restarts", async () => {
    const savedPath = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
        mock.reset({});
        mock.workspace.isTrusted = false;
        mock.workspace.workspaceFolders = [{ uri: { fsPath: "/ws" } }];
        mock.state.workspaceConfig["parakern.path"] = process.execPath;    // an executable the workspace names
        mock.state.extensions["ms-python.python"] = {
            isActive: true,
            exports: { environments: { getActiveEnvironmentPath: () => ({ id: "x", path: "/ws/.venv/bin/python" }) } },
        };
        const context = { subscriptions: [] as { dispose(): void }[] };
        await activate(context as never);
        assert.ok(!mock.state.output.some((l) => /starting .* serve/.test(l)), mock.state.output.join("\n"));
        assert.ok(!mock.state.output.some((l) => l.includes("looked for the server")), mock.state.output.join("\n"));
        const warnings = mock.state.messages.filter((m) => m.level === "warning").map((m) => m.text);
        assert.deepEqual(warnings, [RESTRICTED_MESSAGE]);
        assert.equal(mock.state.messages.filter((m) => m.level === "error").length, 0);
        const item = mock.state.statusItems[0];
        assert.match(String(item.tooltip), /^parakern: stopped — Restricted Mode/);

        // trust granted: the ordinary search (the workspace's own setting, which VS Code now honours)
        mock.workspace.isTrusted = true;
        delete mock.state.workspaceConfig["parakern.path"];
        mock.state.extensions = {};
        for (const listener of mock.state.trustListeners) listener();
        await new Promise((r) => setTimeout(r, 50));
        assert.ok(mock.state.output.some((l) => l.startsWith("info looked for the server: PATH: /nonexistent/parakern")));
        await deactivate();
    } finally {
        process.env.PATH = savedPath;
    }
});
