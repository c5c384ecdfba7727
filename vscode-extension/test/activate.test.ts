/** activate() with the mocked `vscode`, when no server can be found. */
import { strict as assert } from "node:assert";
import { it } from "node:test";
import * as mock from "./mock/vscode";
import { activate, deactivate } from "../src/extension";

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
