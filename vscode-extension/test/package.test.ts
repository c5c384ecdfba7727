/** `npm run package` on a fresh copy of the extension (no dist/, no out/): it builds what it runs. */
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { it } from "node:test";

const EXT = path.resolve(__dirname, "../..");

it("npm run package works on a fresh copy, before any build or test", () => {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "parakern-package-"));
    try {
        for (const entry of ["package.json", "package-lock.json", "tsconfig.json", "README.md", ".vscodeignore", "src", "test", "scripts"]) {
            fs.cpSync(path.join(EXT, entry), path.join(copy, entry), { recursive: true });
        }
        fs.symlinkSync(path.join(EXT, "node_modules"), path.join(copy, "node_modules"), "dir");   // npm ci's, as it was
        const env = { ...process.env };
        delete env.NODE_TEST_CONTEXT;   // the .vsix test reports as a run of its own, not to this one
        const done = spawnSync("npm", ["run", "package"], { cwd: copy, env, encoding: "utf8", timeout: 240_000 });
        assert.equal(done.status, 0, `${done.stdout}\n${done.stderr}`);
        const version = JSON.parse(fs.readFileSync(path.join(EXT, "package.json"), "utf8")).version;
        assert.ok(fs.existsSync(path.join(copy, `parakern-${version}.vsix`)));
        assert.match(done.stdout, /# pass 1\n# fail 0/, "the .vsix test ran and passed");
    } finally {
        fs.rmSync(copy, { recursive: true, force: true });
    }
});
