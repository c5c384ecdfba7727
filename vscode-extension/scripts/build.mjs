// esbuild: the extension (dist/extension.js, `vscode` external) and, with --tests,
// the tests (out/test/*.test.js) where `vscode` is the mock in test/mock/vscode-entry.js (test/mock/vscode.ts + stand-ins).
import * as esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

const common = { bundle: true, platform: "node", target: "node20", format: "cjs", logLevel: "warning", absWorkingDir: root };

if (!tests) {
    rmSync(path.join(root, "dist"), { recursive: true, force: true });
    await esbuild.build({
        ...common,
        entryPoints: ["src/extension.ts"],
        outfile: "dist/extension.js",
        external: ["vscode"],
        minify: production,
        sourcemap: !production,
    });
} else {
    rmSync(path.join(root, "out"), { recursive: true, force: true });
    const entries = readdirSync(path.join(root, "test")).filter((f) => f.endsWith(".test.ts")).map((f) => `test/${f}`);
    await esbuild.build({
        ...common,
        entryPoints: entries,
        outdir: "out/test",
        sourcemap: "inline",
        alias: { vscode: "./test/mock/vscode-entry.js" },
    });
}
