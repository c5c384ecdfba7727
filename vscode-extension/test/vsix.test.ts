/** The packaged .vsix: its manifest (extension/package.json inside the zip) lists the commands and settings. */
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { it } from "node:test";

const EXT = path.resolve(__dirname, "../..");

/** Files of a zip archive, read through its central directory. */
export function unzip(buffer: Buffer): Map<string, Buffer> {
    let eocd = buffer.length - 22;
    while (eocd >= 0 && buffer.readUInt32LE(eocd) !== 0x06054b50) eocd--;
    assert.ok(eocd >= 0, "not a zip archive");
    const count = buffer.readUInt16LE(eocd + 10);
    let at = buffer.readUInt32LE(eocd + 16);
    const files = new Map<string, Buffer>();
    for (let i = 0; i < count; i++) {
        assert.equal(buffer.readUInt32LE(at), 0x02014b50);
        const method = buffer.readUInt16LE(at + 10);
        const compressed = buffer.readUInt32LE(at + 20);
        const nameLength = buffer.readUInt16LE(at + 28);
        const extraLength = buffer.readUInt16LE(at + 30);
        const commentLength = buffer.readUInt16LE(at + 32);
        const local = buffer.readUInt32LE(at + 42);
        const name = buffer.toString("utf8", at + 46, at + 46 + nameLength);
        const start = local + 30 + buffer.readUInt16LE(local + 26) + buffer.readUInt16LE(local + 28);
        const data = buffer.subarray(start, start + compressed);
        files.set(name, method === 8 ? zlib.inflateRawSync(new Uint8Array(data)) : data);
        at += 46 + nameLength + extraLength + commentLength;
    }
    return files;
}

it("parakern-<version>.vsix holds the bundle and a manifest with the commands and settings", () => {
    const source = JSON.parse(fs.readFileSync(path.join(EXT, "package.json"), "utf8"));
    const vsix = path.join(EXT, `parakern-${source.version}.vsix`);
    assert.ok(fs.existsSync(vsix), `${vsix} was not produced`);
    const files = unzip(fs.readFileSync(vsix));
    assert.ok(files.has("extension/dist/extension.js"), [...files.keys()].join(", "));
    assert.ok(files.has("extension.vsixmanifest"));
    assert.ok(![...files.keys()].some((f) => f.startsWith("extension/node_modules/") || f.startsWith("extension/src/")),
        "only the bundle is shipped");
    const bundle = files.get("extension/dist/extension.js")!.toString("utf8");
    assert.ok(!/require\("vscode-languageclient/.test(bundle), "vscode-languageclient is bundled");

    const manifest = JSON.parse(files.get("extension/package.json")!.toString("utf8"));
    assert.equal(manifest.name, "parakern");
    assert.equal(manifest.main, "./dist/extension.js");
    assert.deepEqual(manifest.activationEvents.sort(), ["onLanguage:c", "onLanguage:cpp", "onLanguage:cuda-cpp"]);
    const commands = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual(commands, ["parakern.bench", "parakern.insertDispatcher", "parakern.restartServer",
                                "parakern.showCaseTree", "parakern.showOutput"]);
    const settings = Object.keys(manifest.contributes.configuration.properties).sort();
    assert.deepEqual(settings, ["parakern.bench", "parakern.caseDiagnostics", "parakern.caseTrees",
        "parakern.gpuProfiles", "parakern.interpreter", "parakern.occupancy", "parakern.path",
        "parakern.strategies", "parakern.target", "parakern.timeLimitSeconds", "parakern.trace.server"]);
    assert.equal(manifest.dependencies["vscode-languageclient"], "11.0.0");
});
