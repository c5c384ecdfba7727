"use strict";
var __create = Object.create;
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __getProtoOf = Object.getPrototypeOf;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
  // If the importer is in node compatibility mode or this is not an ESM
  // file that has been converted to a CommonJS file using a Babel-
  // compatible transform (i.e. "__esModule" has not been set), then set
  // "default" to the CommonJS "module.exports" for node compatibility.
  isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
  mod
));

// test/unit.test.ts
var import_node_assert = require("node:assert");
var fs2 = __toESM(require("node:fs"));
var os2 = __toESM(require("node:os"));
var path2 = __toESM(require("node:path"));
var import_node_test = require("node:test");

// test/mock/vscode.ts
var state = {
  config: {},
  messages: [],
  extensions: {},
  statusItems: []
};
function reset(config = {}) {
  state.config = config;
  state.messages = [];
  state.extensions = {};
  state.statusItems = [];
}
var ThemeColor = class {
  constructor(id) {
    this.id = id;
  }
  id;
};
var StatusBarItemMock = class {
  constructor(id) {
    this.id = id;
  }
  id;
  text = "";
  tooltip;
  command;
  name;
  backgroundColor;
  visible = false;
  show() {
    this.visible = true;
  }
  hide() {
    this.visible = false;
  }
  dispose() {
    this.visible = false;
  }
};
var workspace = {
  workspaceFolders: void 0,
  getConfiguration(section) {
    const prefix = section ? `${section}.` : "";
    return {
      get(key, fallback) {
        const full = prefix + key;
        return full in state.config ? state.config[full] : fallback;
      },
      has(key) {
        return prefix + key in state.config;
      }
    };
  }
};
var window = {
  createStatusBarItem(id) {
    const item = new StatusBarItemMock(id);
    state.statusItems.push(item);
    return item;
  },
  showErrorMessage(text) {
    state.messages.push({ level: "error", text });
    return Promise.resolve(void 0);
  },
  showWarningMessage(text) {
    state.messages.push({ level: "warning", text });
    return Promise.resolve(void 0);
  },
  activeTextEditor: void 0
};
var extensions = {
  getExtension(id) {
    return state.extensions[id];
  }
};

// src/resolve.ts
var fs = __toESM(require("node:fs"));
var os = __toESM(require("node:os"));
var path = __toESM(require("node:path"));
var NOT_FOUND_MESSAGE = "parakern not found: pip install -e /path/to/parakern in your Python environment, or set parakern.path";
function defaultIsExecutable(file) {
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
function expandPath(value, workspaceFolder, env = process.env) {
  let out = value.trim();
  out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder ?? "");
  out = out.replace(/\$\{userHome\}/g, os.homedir());
  out = out.replace(/\$\{env:([^}]+)\}/g, (_m, name) => env[name] ?? "");
  if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) out = path.join(os.homedir(), out.slice(1));
  if (!path.isAbsolute(out) && workspaceFolder && /[\\/]/.test(out)) out = path.join(workspaceFolder, out);
  return out;
}
function exeNames(platform, env) {
  if (platform !== "win32") return ["parakern"];
  const exts = (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean).map((e) => e.toLowerCase());
  return ["parakern", ...exts.map((e) => `parakern${e}`)];
}
function candidatesForInterpreter(interpreter, platform = process.platform, env = process.env) {
  const p = platform === "win32" ? path.win32 : path.posix;
  const names = exeNames(platform, env);
  const dirs = [];
  let isDir = false;
  try {
    isDir = fs.statSync(interpreter).isDirectory();
  } catch {
  }
  if (isDir) {
    dirs.push(p.join(interpreter, "bin"), p.join(interpreter, "Scripts"), interpreter);
  } else {
    const dir = p.dirname(interpreter);
    dirs.push(dir);
    if (platform === "win32") dirs.push(p.join(dir, "Scripts"));
  }
  return dirs.flatMap((d) => names.map((n) => p.join(d, n)));
}
function candidatesOnPath(env = process.env, platform = process.platform) {
  const p = platform === "win32" ? path.win32 : path.posix;
  const value = env.PATH ?? env.Path ?? "";
  const sep = platform === "win32" ? ";" : ":";
  const names = exeNames(platform, env);
  return value.split(sep).filter(Boolean).flatMap((d) => names.map((n) => p.join(d, n)));
}
async function resolveServer(input) {
  const env = input.env ?? process.env;
  const platform = input.platform ?? process.platform;
  const isExe = input.isExecutable ?? defaultIsExecutable;
  const tried = [];
  if (input.path && input.path.trim()) {
    const file = expandPath(input.path, input.workspaceFolder, env);
    tried.push(`parakern.path: ${file}`);
    if (isExe(file)) return { command: file, source: "parakern.path", tried };
    return {
      error: `parakern.path is set to ${file}, which is not an executable file: fix or clear the setting`,
      tried
    };
  }
  const interpreters = [];
  if (input.interpreter && input.interpreter.trim()) {
    interpreters.push(["parakern.interpreter", async () => expandPath(input.interpreter, input.workspaceFolder, env)]);
  } else if (input.pythonExtensionInterpreter) {
    interpreters.push(["python extension", input.pythonExtensionInterpreter]);
  }
  for (const [source, get] of interpreters) {
    let interpreter;
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
      if (isExe(file)) return { command: file, source, tried };
    }
  }
  for (const file of candidatesOnPath(env, platform)) {
    tried.push(`PATH: ${file}`);
    if (isExe(file)) return { command: file, source: "PATH", tried };
  }
  return { error: NOT_FOUND_MESSAGE, tried };
}
function isResolved(r) {
  return r.command !== void 0;
}

// src/settings.ts
var SERVER_KEYS = [
  "target",
  "gpuProfiles",
  "strategies",
  "occupancy",
  "caseDiagnostics",
  "caseTrees",
  "timeLimitSeconds",
  "bench"
];
var RESTART_KEYS = ["parakern.path", "parakern.interpreter"];
function serverSettings(scope) {
  const config = workspace.getConfiguration("parakern", scope);
  const out = {};
  for (const key of SERVER_KEYS) {
    const value = config.get(key);
    if (value !== void 0) out[key] = value;
  }
  return out;
}
function clientSettings(scope) {
  const config = workspace.getConfiguration("parakern", scope);
  return { path: config.get("path") ?? "", interpreter: config.get("interpreter") ?? "" };
}
function needsRestart(event) {
  return RESTART_KEYS.some((key) => event.affectsConfiguration(key));
}

// src/commands.ts
function pickSchedule(schedules, cursorLine) {
  const sorted = [...schedules].sort((a, b) => a.line - b.line);
  let best;
  for (const s of sorted) if (s.line <= cursorLine) best = s;
  return best ?? sorted[0];
}
function schedulesFromLenses(lenses) {
  const seen = /* @__PURE__ */ new Map();
  for (const lens of lenses) {
    const args = lens.command?.arguments;
    if (lens.command?.command === "parakern.insertDispatcher" && args && typeof args[1] === "string") {
      seen.set(args[1], { line: lens.range.start.line, id: args[1] });
    }
  }
  return [...seen.values()];
}

// src/python.ts
var PYTHON_EXTENSION_ID = "ms-python.python";
async function api() {
  const ext = extensions.getExtension(PYTHON_EXTENSION_ID);
  if (!ext) return void 0;
  return ext.isActive ? ext.exports : await ext.activate();
}
async function activeInterpreter(resource) {
  const environments = (await api())?.environments;
  return environments?.getActiveEnvironmentPath(resource)?.path || void 0;
}

// src/status.ts
var ICONS = {
  starting: "$(sync~spin)",
  running: "$(check)",
  stopped: "$(circle-slash)",
  error: "$(error)"
};
var StatusItem = class {
  item;
  state = "stopped";
  constructor() {
    this.item = window.createStatusBarItem("parakern.status", 2 /* Right */, 100);
    this.item.name = "parakern";
    this.item.command = "parakern.showOutput";
    this.set("stopped");
    this.item.show();
  }
  set(state2, detail) {
    this.state = state2;
    this.item.text = `${ICONS[state2]} parakern`;
    this.item.tooltip = `parakern: ${state2}${detail ? ` \u2014 ${detail}` : ""} (click for the output)`;
    this.item.backgroundColor = state2 === "error" ? new ThemeColor("statusBarItem.errorBackground") : void 0;
  }
  dispose() {
    this.item.dispose();
  }
};

// test/unit.test.ts
function tree() {
  const root = fs2.mkdtempSync(path2.join(os2.tmpdir(), "parakern-ext-"));
  return {
    root,
    exe(rel) {
      const file = path2.join(root, rel);
      fs2.mkdirSync(path2.dirname(file), { recursive: true });
      fs2.writeFileSync(file, "#!/bin/sh\n", { mode: 493 });
      return file;
    }
  };
}
(0, import_node_test.describe)("server resolution", () => {
  (0, import_node_test.beforeEach)(() => reset());
  (0, import_node_test.it)("uses parakern.path first, even when an interpreter and PATH have one", async () => {
    const t = tree();
    const explicit = t.exe("custom/parakern");
    const venv = t.exe("venv/bin/parakern");
    t.exe("venv/bin/python");
    const onPath = t.exe("pathdir/parakern");
    const r = await resolveServer({
      path: explicit,
      interpreter: path2.join(t.root, "venv/bin/python"),
      env: { PATH: path2.dirname(onPath) },
      platform: "linux"
    });
    import_node_assert.strict.ok(isResolved(r));
    import_node_assert.strict.equal(r.command, explicit);
    import_node_assert.strict.equal(r.source, "parakern.path");
    import_node_assert.strict.notEqual(r.command, venv);
  });
  (0, import_node_test.it)("reports a parakern.path that is not executable instead of falling through", async () => {
    const t = tree();
    const onPath = t.exe("pathdir/parakern");
    const r = await resolveServer({ path: path2.join(t.root, "missing"), env: { PATH: path2.dirname(onPath) }, platform: "linux" });
    import_node_assert.strict.ok(!isResolved(r));
    import_node_assert.strict.match(r.error, /parakern\.path is set to .*missing/);
  });
  (0, import_node_test.it)("expands ${workspaceFolder}, ~ and relative paths", () => {
    import_node_assert.strict.equal(expandPath("${workspaceFolder}/.venv/bin/parakern", "/ws"), "/ws/.venv/bin/parakern");
    import_node_assert.strict.equal(expandPath(".venv/bin/parakern", "/ws"), "/ws/.venv/bin/parakern");
    import_node_assert.strict.equal(expandPath("~/x/parakern"), path2.join(os2.homedir(), "x/parakern"));
    import_node_assert.strict.equal(expandPath("${env:HOMEX}/p", void 0, { HOMEX: "/h" }), "/h/p");
  });
  (0, import_node_test.it)("then parakern.interpreter: <dir of python>/parakern", async () => {
    const t = tree();
    const python = t.exe("venv/bin/python");
    const beside = t.exe("venv/bin/parakern");
    const onPath = t.exe("pathdir/parakern");
    let asked = false;
    const r = await resolveServer({
      interpreter: python,
      env: { PATH: path2.dirname(onPath) },
      platform: "linux",
      pythonExtensionInterpreter: async () => {
        asked = true;
        return void 0;
      }
    });
    import_node_assert.strict.ok(isResolved(r));
    import_node_assert.strict.equal(r.command, beside);
    import_node_assert.strict.equal(r.source, "parakern.interpreter");
    import_node_assert.strict.equal(asked, false, "the Python extension is not asked when parakern.interpreter is set");
  });
  (0, import_node_test.it)("then the Python extension's active interpreter (through its API)", async () => {
    const t = tree();
    const python = t.exe("env/bin/python3");
    const beside = t.exe("env/bin/parakern");
    state.extensions["ms-python.python"] = {
      isActive: true,
      exports: { environments: { getActiveEnvironmentPath: () => ({ id: "x", path: python }) } }
    };
    const r = await resolveServer({ env: { PATH: "" }, platform: "linux", pythonExtensionInterpreter: () => activeInterpreter() });
    import_node_assert.strict.ok(isResolved(r));
    import_node_assert.strict.equal(r.command, beside);
    import_node_assert.strict.equal(r.source, "python extension");
  });
  (0, import_node_test.it)("activates the Python extension when it is not active yet", async () => {
    let activated = false;
    state.extensions["ms-python.python"] = {
      isActive: false,
      activate: async () => {
        activated = true;
        return { environments: { getActiveEnvironmentPath: () => ({ id: "y", path: "/p/bin/python" }) } };
      }
    };
    import_node_assert.strict.equal(await activeInterpreter(), "/p/bin/python");
    import_node_assert.strict.ok(activated);
  });
  (0, import_node_test.it)("without the Python extension, the interpreter step is skipped", async () => {
    import_node_assert.strict.equal(await activeInterpreter(), void 0);
  });
  (0, import_node_test.it)("an environment folder from the Python extension is searched in bin/", () => {
    const t = tree();
    t.exe("env/bin/python");
    const c = candidatesForInterpreter(path2.join(t.root, "env"), "linux", {});
    import_node_assert.strict.equal(c[0], path2.join(t.root, "env/bin/parakern"));
  });
  (0, import_node_test.it)("Windows: Scripts\\parakern.exe beside python.exe", () => {
    const c = candidatesForInterpreter("C:\\env\\python.exe", "win32", { PATHEXT: ".EXE;.CMD" });
    import_node_assert.strict.ok(c.includes("C:\\env\\Scripts\\parakern.exe"));
    import_node_assert.strict.ok(c.includes("C:\\env\\parakern.exe"));
  });
  (0, import_node_test.it)("falls back to PATH when the interpreter has no parakern", async () => {
    const t = tree();
    const python = t.exe("venv/bin/python");
    const onPath = t.exe("pathdir/parakern");
    const r = await resolveServer({ interpreter: python, env: { PATH: `/nonexistent:${path2.dirname(onPath)}` }, platform: "linux" });
    import_node_assert.strict.ok(isResolved(r));
    import_node_assert.strict.equal(r.command, onPath);
    import_node_assert.strict.equal(r.source, "PATH");
    import_node_assert.strict.ok(r.tried.some((x) => x.includes(path2.join(t.root, "venv/bin/parakern"))));
  });
  (0, import_node_test.it)("skips a PATH entry that is not executable", async () => {
    const t = tree();
    const plain = path2.join(t.root, "a/parakern");
    fs2.mkdirSync(path2.dirname(plain), { recursive: true });
    fs2.writeFileSync(plain, "", { mode: 420 });
    const good = t.exe("b/parakern");
    const r = await resolveServer({ env: { PATH: `${path2.dirname(plain)}:${path2.dirname(good)}` }, platform: "linux" });
    import_node_assert.strict.ok(isResolved(r));
    import_node_assert.strict.equal(r.command, good);
  });
  (0, import_node_test.it)("nothing found: the message says how to fix it", async () => {
    const r = await resolveServer({ env: { PATH: "/nonexistent" }, platform: "linux", pythonExtensionInterpreter: async () => {
      throw new Error("no api");
    } });
    import_node_assert.strict.ok(!isResolved(r));
    import_node_assert.strict.equal(r.error, NOT_FOUND_MESSAGE);
    import_node_assert.strict.match(r.error, /pip install -e .* or set parakern\.path/);
    import_node_assert.strict.ok(r.tried.some((x) => x.startsWith("python extension: Error: no api")));
  });
});
(0, import_node_test.describe)("settings", () => {
  (0, import_node_test.beforeEach)(() => reset());
  (0, import_node_test.it)("initializationOptions carry the server's keys only", () => {
    reset({
      "parakern.target": "sm_90",
      "parakern.gpuProfiles": ["h100"],
      "parakern.strategies": ["(3b)"],
      "parakern.occupancy": "a100",
      "parakern.caseDiagnostics": false,
      "parakern.caseTrees": true,
      "parakern.timeLimitSeconds": 5,
      "parakern.bench": { repeat: 3 },
      "parakern.path": "/x",
      "parakern.interpreter": "/y",
      "parakern.trace.server": "verbose"
    });
    import_node_assert.strict.deepEqual(serverSettings(), {
      target: "sm_90",
      gpuProfiles: ["h100"],
      strategies: ["(3b)"],
      occupancy: "a100",
      caseDiagnostics: false,
      caseTrees: true,
      timeLimitSeconds: 5,
      bench: { repeat: 3 }
    });
    import_node_assert.strict.deepEqual(clientSettings(), { path: "/x", interpreter: "/y" });
  });
  (0, import_node_test.it)("unset settings are left out; null is kept (strategies: all)", () => {
    reset({ "parakern.strategies": null });
    import_node_assert.strict.deepEqual(serverSettings(), { strategies: null });
    import_node_assert.strict.deepEqual(clientSettings(), { path: "", interpreter: "" });
  });
  (0, import_node_test.it)("the server keys are those of the README table and of package.json", () => {
    const manifest = JSON.parse(fs2.readFileSync(path2.join(__dirname, "../../package.json"), "utf8"));
    const props = Object.keys(manifest.contributes.configuration.properties);
    for (const key of SERVER_KEYS) import_node_assert.strict.ok(props.includes(`parakern.${key}`), key);
    for (const key of ["parakern.path", "parakern.interpreter", "parakern.trace.server"]) import_node_assert.strict.ok(props.includes(key), key);
    const readme = fs2.readFileSync(path2.join(__dirname, "../../../README.md"), "utf8");
    for (const key of SERVER_KEYS) import_node_assert.strict.ok(readme.includes(`| \`${key}\``), `README lists ${key}`);
  });
  (0, import_node_test.it)("path and interpreter changes restart the server; others do not", () => {
    const event = (keys) => ({ affectsConfiguration: (k) => keys.includes(k) });
    import_node_assert.strict.ok(needsRestart(event(["parakern.path"])));
    import_node_assert.strict.ok(needsRestart(event(["parakern.interpreter"])));
    import_node_assert.strict.ok(!needsRestart(event(["parakern.target"])));
  });
});
(0, import_node_test.describe)("status bar and palette", () => {
  (0, import_node_test.beforeEach)(() => reset());
  (0, import_node_test.it)("shows starting / running / stopped / error", () => {
    const s = new StatusItem();
    const item = state.statusItems[0];
    import_node_assert.strict.ok(item.visible);
    import_node_assert.strict.equal(item.command, "parakern.showOutput");
    import_node_assert.strict.match(item.text, /parakern/);
    for (const state2 of ["starting", "running", "stopped", "error"]) {
      s.set(state2, "detail");
      import_node_assert.strict.match(String(item.tooltip), new RegExp(`parakern: ${state2}`));
    }
    import_node_assert.strict.ok(item.backgroundColor);
    s.set("running");
    import_node_assert.strict.equal(item.backgroundColor, void 0);
    import_node_assert.strict.match(item.text, /\$\(check\)/);
  });
  (0, import_node_test.it)("picks the schedule at or above the cursor", () => {
    const lenses = [
      { range: { start: { line: 3 } }, command: { command: "parakern.showCaseTree", arguments: ["u", "f#1", "markdown"] } },
      { range: { start: { line: 3 } }, command: { command: "parakern.insertDispatcher", arguments: ["u", "f#1"] } },
      { range: { start: { line: 20 } }, command: { command: "parakern.insertDispatcher", arguments: ["u", "g#1"] } }
    ];
    const schedules = schedulesFromLenses(lenses);
    import_node_assert.strict.deepEqual(schedules.map((s) => s.id), ["f#1", "g#1"]);
    import_node_assert.strict.equal(pickSchedule(schedules, 0)?.id, "f#1");
    import_node_assert.strict.equal(pickSchedule(schedules, 10)?.id, "f#1");
    import_node_assert.strict.equal(pickSchedule(schedules, 25)?.id, "g#1");
    import_node_assert.strict.equal(pickSchedule([], 1), void 0);
  });
});
(0, import_node_test.describe)("extension code", () => {
  (0, import_node_test.it)("does not register the server's commands itself", () => {
    const src = ["extension.ts", "commands.ts"].map((f) => fs2.readFileSync(path2.join(__dirname, "../../src", f), "utf8")).join("\n");
    const registered = [...src.matchAll(/registerCommand\(\s*"([^"]+)"/g)].map((m) => m[1]);
    import_node_assert.strict.deepEqual(registered.sort(), ["parakern.restartServer", "parakern.showOutput"]);
  });
});
//# sourceMappingURL=data:application/json;base64,ewogICJ2ZXJzaW9uIjogMywKICAic291cmNlcyI6IFsiLi4vLi4vdGVzdC91bml0LnRlc3QudHMiLCAiLi4vLi4vdGVzdC9tb2NrL3ZzY29kZS50cyIsICIuLi8uLi9zcmMvcmVzb2x2ZS50cyIsICIuLi8uLi9zcmMvc2V0dGluZ3MudHMiLCAiLi4vLi4vc3JjL2NvbW1hbmRzLnRzIiwgIi4uLy4uL3NyYy9weXRob24udHMiLCAiLi4vLi4vc3JjL3N0YXR1cy50cyJdLAogICJzb3VyY2VzQ29udGVudCI6IFsiLyoqIFNlcnZlciByZXNvbHV0aW9uLCBzZXR0aW5ncywgc3RhdHVzIGFuZCBwYWxldHRlIGFyZ3VtZW50cywgd2l0aCB0aGUgbW9ja2VkIGB2c2NvZGVgIG1vZHVsZS4gKi9cbmltcG9ydCB7IHN0cmljdCBhcyBhc3NlcnQgfSBmcm9tIFwibm9kZTphc3NlcnRcIjtcbmltcG9ydCAqIGFzIGZzIGZyb20gXCJub2RlOmZzXCI7XG5pbXBvcnQgKiBhcyBvcyBmcm9tIFwibm9kZTpvc1wiO1xuaW1wb3J0ICogYXMgcGF0aCBmcm9tIFwibm9kZTpwYXRoXCI7XG5pbXBvcnQgeyBiZWZvcmVFYWNoLCBkZXNjcmliZSwgaXQgfSBmcm9tIFwibm9kZTp0ZXN0XCI7XG5pbXBvcnQgKiBhcyBtb2NrIGZyb20gXCIuL21vY2svdnNjb2RlXCI7XG5pbXBvcnQgeyBOT1RfRk9VTkRfTUVTU0FHRSwgY2FuZGlkYXRlc0ZvckludGVycHJldGVyLCBleHBhbmRQYXRoLCBpc1Jlc29sdmVkLCByZXNvbHZlU2VydmVyIH0gZnJvbSBcIi4uL3NyYy9yZXNvbHZlXCI7XG5pbXBvcnQgeyBTRVJWRVJfS0VZUywgY2xpZW50U2V0dGluZ3MsIG5lZWRzUmVzdGFydCwgc2VydmVyU2V0dGluZ3MgfSBmcm9tIFwiLi4vc3JjL3NldHRpbmdzXCI7XG5pbXBvcnQgeyBwaWNrU2NoZWR1bGUsIHNjaGVkdWxlc0Zyb21MZW5zZXMgfSBmcm9tIFwiLi4vc3JjL2NvbW1hbmRzXCI7XG5pbXBvcnQgeyBhY3RpdmVJbnRlcnByZXRlciB9IGZyb20gXCIuLi9zcmMvcHl0aG9uXCI7XG5pbXBvcnQgeyBTdGF0dXNJdGVtIH0gZnJvbSBcIi4uL3NyYy9zdGF0dXNcIjtcblxuZnVuY3Rpb24gdHJlZSgpOiB7IHJvb3Q6IHN0cmluZzsgZXhlOiAocmVsOiBzdHJpbmcpID0+IHN0cmluZyB9IHtcbiAgICBjb25zdCByb290ID0gZnMubWtkdGVtcFN5bmMocGF0aC5qb2luKG9zLnRtcGRpcigpLCBcInBhcmFrZXJuLWV4dC1cIikpO1xuICAgIHJldHVybiB7XG4gICAgICAgIHJvb3QsXG4gICAgICAgIGV4ZShyZWw6IHN0cmluZykge1xuICAgICAgICAgICAgY29uc3QgZmlsZSA9IHBhdGguam9pbihyb290LCByZWwpO1xuICAgICAgICAgICAgZnMubWtkaXJTeW5jKHBhdGguZGlybmFtZShmaWxlKSwgeyByZWN1cnNpdmU6IHRydWUgfSk7XG4gICAgICAgICAgICBmcy53cml0ZUZpbGVTeW5jKGZpbGUsIFwiIyEvYmluL3NoXFxuXCIsIHsgbW9kZTogMG83NTUgfSk7XG4gICAgICAgICAgICByZXR1cm4gZmlsZTtcbiAgICAgICAgfSxcbiAgICB9O1xufVxuXG5kZXNjcmliZShcInNlcnZlciByZXNvbHV0aW9uXCIsICgpID0+IHtcbiAgICBiZWZvcmVFYWNoKCgpID0+IG1vY2sucmVzZXQoKSk7XG5cbiAgICBpdChcInVzZXMgcGFyYWtlcm4ucGF0aCBmaXJzdCwgZXZlbiB3aGVuIGFuIGludGVycHJldGVyIGFuZCBQQVRIIGhhdmUgb25lXCIsIGFzeW5jICgpID0+IHtcbiAgICAgICAgY29uc3QgdCA9IHRyZWUoKTtcbiAgICAgICAgY29uc3QgZXhwbGljaXQgPSB0LmV4ZShcImN1c3RvbS9wYXJha2VyblwiKTtcbiAgICAgICAgY29uc3QgdmVudiA9IHQuZXhlKFwidmVudi9iaW4vcGFyYWtlcm5cIik7XG4gICAgICAgIHQuZXhlKFwidmVudi9iaW4vcHl0aG9uXCIpO1xuICAgICAgICBjb25zdCBvblBhdGggPSB0LmV4ZShcInBhdGhkaXIvcGFyYWtlcm5cIik7XG4gICAgICAgIGNvbnN0IHIgPSBhd2FpdCByZXNvbHZlU2VydmVyKHtcbiAgICAgICAgICAgIHBhdGg6IGV4cGxpY2l0LCBpbnRlcnByZXRlcjogcGF0aC5qb2luKHQucm9vdCwgXCJ2ZW52L2Jpbi9weXRob25cIiksXG4gICAgICAgICAgICBlbnY6IHsgUEFUSDogcGF0aC5kaXJuYW1lKG9uUGF0aCkgfSwgcGxhdGZvcm06IFwibGludXhcIixcbiAgICAgICAgfSk7XG4gICAgICAgIGFzc2VydC5vayhpc1Jlc29sdmVkKHIpKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKHIuY29tbWFuZCwgZXhwbGljaXQpO1xuICAgICAgICBhc3NlcnQuZXF1YWwoci5zb3VyY2UsIFwicGFyYWtlcm4ucGF0aFwiKTtcbiAgICAgICAgYXNzZXJ0Lm5vdEVxdWFsKHIuY29tbWFuZCwgdmVudik7XG4gICAgfSk7XG5cbiAgICBpdChcInJlcG9ydHMgYSBwYXJha2Vybi5wYXRoIHRoYXQgaXMgbm90IGV4ZWN1dGFibGUgaW5zdGVhZCBvZiBmYWxsaW5nIHRocm91Z2hcIiwgYXN5bmMgKCkgPT4ge1xuICAgICAgICBjb25zdCB0ID0gdHJlZSgpO1xuICAgICAgICBjb25zdCBvblBhdGggPSB0LmV4ZShcInBhdGhkaXIvcGFyYWtlcm5cIik7XG4gICAgICAgIGNvbnN0IHIgPSBhd2FpdCByZXNvbHZlU2VydmVyKHsgcGF0aDogcGF0aC5qb2luKHQucm9vdCwgXCJtaXNzaW5nXCIpLCBlbnY6IHsgUEFUSDogcGF0aC5kaXJuYW1lKG9uUGF0aCkgfSwgcGxhdGZvcm06IFwibGludXhcIiB9KTtcbiAgICAgICAgYXNzZXJ0Lm9rKCFpc1Jlc29sdmVkKHIpKTtcbiAgICAgICAgYXNzZXJ0Lm1hdGNoKHIuZXJyb3IsIC9wYXJha2VyblxcLnBhdGggaXMgc2V0IHRvIC4qbWlzc2luZy8pO1xuICAgIH0pO1xuXG4gICAgaXQoXCJleHBhbmRzICR7d29ya3NwYWNlRm9sZGVyfSwgfiBhbmQgcmVsYXRpdmUgcGF0aHNcIiwgKCkgPT4ge1xuICAgICAgICBhc3NlcnQuZXF1YWwoZXhwYW5kUGF0aChcIiR7d29ya3NwYWNlRm9sZGVyfS8udmVudi9iaW4vcGFyYWtlcm5cIiwgXCIvd3NcIiksIFwiL3dzLy52ZW52L2Jpbi9wYXJha2VyblwiKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKGV4cGFuZFBhdGgoXCIudmVudi9iaW4vcGFyYWtlcm5cIiwgXCIvd3NcIiksIFwiL3dzLy52ZW52L2Jpbi9wYXJha2VyblwiKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKGV4cGFuZFBhdGgoXCJ+L3gvcGFyYWtlcm5cIiksIHBhdGguam9pbihvcy5ob21lZGlyKCksIFwieC9wYXJha2VyblwiKSk7XG4gICAgICAgIGFzc2VydC5lcXVhbChleHBhbmRQYXRoKFwiJHtlbnY6SE9NRVh9L3BcIiwgdW5kZWZpbmVkLCB7IEhPTUVYOiBcIi9oXCIgfSksIFwiL2gvcFwiKTtcbiAgICB9KTtcblxuICAgIGl0KFwidGhlbiBwYXJha2Vybi5pbnRlcnByZXRlcjogPGRpciBvZiBweXRob24+L3BhcmFrZXJuXCIsIGFzeW5jICgpID0+IHtcbiAgICAgICAgY29uc3QgdCA9IHRyZWUoKTtcbiAgICAgICAgY29uc3QgcHl0aG9uID0gdC5leGUoXCJ2ZW52L2Jpbi9weXRob25cIik7XG4gICAgICAgIGNvbnN0IGJlc2lkZSA9IHQuZXhlKFwidmVudi9iaW4vcGFyYWtlcm5cIik7XG4gICAgICAgIGNvbnN0IG9uUGF0aCA9IHQuZXhlKFwicGF0aGRpci9wYXJha2VyblwiKTtcbiAgICAgICAgbGV0IGFza2VkID0gZmFsc2U7XG4gICAgICAgIGNvbnN0IHIgPSBhd2FpdCByZXNvbHZlU2VydmVyKHtcbiAgICAgICAgICAgIGludGVycHJldGVyOiBweXRob24sIGVudjogeyBQQVRIOiBwYXRoLmRpcm5hbWUob25QYXRoKSB9LCBwbGF0Zm9ybTogXCJsaW51eFwiLFxuICAgICAgICAgICAgcHl0aG9uRXh0ZW5zaW9uSW50ZXJwcmV0ZXI6IGFzeW5jICgpID0+IHsgYXNrZWQgPSB0cnVlOyByZXR1cm4gdW5kZWZpbmVkOyB9LFxuICAgICAgICB9KTtcbiAgICAgICAgYXNzZXJ0Lm9rKGlzUmVzb2x2ZWQocikpO1xuICAgICAgICBhc3NlcnQuZXF1YWwoci5jb21tYW5kLCBiZXNpZGUpO1xuICAgICAgICBhc3NlcnQuZXF1YWwoci5zb3VyY2UsIFwicGFyYWtlcm4uaW50ZXJwcmV0ZXJcIik7XG4gICAgICAgIGFzc2VydC5lcXVhbChhc2tlZCwgZmFsc2UsIFwidGhlIFB5dGhvbiBleHRlbnNpb24gaXMgbm90IGFza2VkIHdoZW4gcGFyYWtlcm4uaW50ZXJwcmV0ZXIgaXMgc2V0XCIpO1xuICAgIH0pO1xuXG4gICAgaXQoXCJ0aGVuIHRoZSBQeXRob24gZXh0ZW5zaW9uJ3MgYWN0aXZlIGludGVycHJldGVyICh0aHJvdWdoIGl0cyBBUEkpXCIsIGFzeW5jICgpID0+IHtcbiAgICAgICAgY29uc3QgdCA9IHRyZWUoKTtcbiAgICAgICAgY29uc3QgcHl0aG9uID0gdC5leGUoXCJlbnYvYmluL3B5dGhvbjNcIik7XG4gICAgICAgIGNvbnN0IGJlc2lkZSA9IHQuZXhlKFwiZW52L2Jpbi9wYXJha2VyblwiKTtcbiAgICAgICAgbW9jay5zdGF0ZS5leHRlbnNpb25zW1wibXMtcHl0aG9uLnB5dGhvblwiXSA9IHtcbiAgICAgICAgICAgIGlzQWN0aXZlOiB0cnVlLFxuICAgICAgICAgICAgZXhwb3J0czogeyBlbnZpcm9ubWVudHM6IHsgZ2V0QWN0aXZlRW52aXJvbm1lbnRQYXRoOiAoKSA9PiAoeyBpZDogXCJ4XCIsIHBhdGg6IHB5dGhvbiB9KSB9IH0sXG4gICAgICAgIH07XG4gICAgICAgIGNvbnN0IHIgPSBhd2FpdCByZXNvbHZlU2VydmVyKHsgZW52OiB7IFBBVEg6IFwiXCIgfSwgcGxhdGZvcm06IFwibGludXhcIiwgcHl0aG9uRXh0ZW5zaW9uSW50ZXJwcmV0ZXI6ICgpID0+IGFjdGl2ZUludGVycHJldGVyKCkgfSk7XG4gICAgICAgIGFzc2VydC5vayhpc1Jlc29sdmVkKHIpKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKHIuY29tbWFuZCwgYmVzaWRlKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKHIuc291cmNlLCBcInB5dGhvbiBleHRlbnNpb25cIik7XG4gICAgfSk7XG5cbiAgICBpdChcImFjdGl2YXRlcyB0aGUgUHl0aG9uIGV4dGVuc2lvbiB3aGVuIGl0IGlzIG5vdCBhY3RpdmUgeWV0XCIsIGFzeW5jICgpID0+IHtcbiAgICAgICAgbGV0IGFjdGl2YXRlZCA9IGZhbHNlO1xuICAgICAgICBtb2NrLnN0YXRlLmV4dGVuc2lvbnNbXCJtcy1weXRob24ucHl0aG9uXCJdID0ge1xuICAgICAgICAgICAgaXNBY3RpdmU6IGZhbHNlLFxuICAgICAgICAgICAgYWN0aXZhdGU6IGFzeW5jICgpID0+IHsgYWN0aXZhdGVkID0gdHJ1ZTsgcmV0dXJuIHsgZW52aXJvbm1lbnRzOiB7IGdldEFjdGl2ZUVudmlyb25tZW50UGF0aDogKCkgPT4gKHsgaWQ6IFwieVwiLCBwYXRoOiBcIi9wL2Jpbi9weXRob25cIiB9KSB9IH07IH0sXG4gICAgICAgIH07XG4gICAgICAgIGFzc2VydC5lcXVhbChhd2FpdCBhY3RpdmVJbnRlcnByZXRlcigpLCBcIi9wL2Jpbi9weXRob25cIik7XG4gICAgICAgIGFzc2VydC5vayhhY3RpdmF0ZWQpO1xuICAgIH0pO1xuXG4gICAgaXQoXCJ3aXRob3V0IHRoZSBQeXRob24gZXh0ZW5zaW9uLCB0aGUgaW50ZXJwcmV0ZXIgc3RlcCBpcyBza2lwcGVkXCIsIGFzeW5jICgpID0+IHtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKGF3YWl0IGFjdGl2ZUludGVycHJldGVyKCksIHVuZGVmaW5lZCk7XG4gICAgfSk7XG5cbiAgICBpdChcImFuIGVudmlyb25tZW50IGZvbGRlciBmcm9tIHRoZSBQeXRob24gZXh0ZW5zaW9uIGlzIHNlYXJjaGVkIGluIGJpbi9cIiwgKCkgPT4ge1xuICAgICAgICBjb25zdCB0ID0gdHJlZSgpO1xuICAgICAgICB0LmV4ZShcImVudi9iaW4vcHl0aG9uXCIpO1xuICAgICAgICBjb25zdCBjID0gY2FuZGlkYXRlc0ZvckludGVycHJldGVyKHBhdGguam9pbih0LnJvb3QsIFwiZW52XCIpLCBcImxpbnV4XCIsIHt9KTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKGNbMF0sIHBhdGguam9pbih0LnJvb3QsIFwiZW52L2Jpbi9wYXJha2VyblwiKSk7XG4gICAgfSk7XG5cbiAgICBpdChcIldpbmRvd3M6IFNjcmlwdHNcXFxccGFyYWtlcm4uZXhlIGJlc2lkZSBweXRob24uZXhlXCIsICgpID0+IHtcbiAgICAgICAgY29uc3QgYyA9IGNhbmRpZGF0ZXNGb3JJbnRlcnByZXRlcihcIkM6XFxcXGVudlxcXFxweXRob24uZXhlXCIsIFwid2luMzJcIiwgeyBQQVRIRVhUOiBcIi5FWEU7LkNNRFwiIH0pO1xuICAgICAgICBhc3NlcnQub2soYy5pbmNsdWRlcyhcIkM6XFxcXGVudlxcXFxTY3JpcHRzXFxcXHBhcmFrZXJuLmV4ZVwiKSk7XG4gICAgICAgIGFzc2VydC5vayhjLmluY2x1ZGVzKFwiQzpcXFxcZW52XFxcXHBhcmFrZXJuLmV4ZVwiKSk7XG4gICAgfSk7XG5cbiAgICBpdChcImZhbGxzIGJhY2sgdG8gUEFUSCB3aGVuIHRoZSBpbnRlcnByZXRlciBoYXMgbm8gcGFyYWtlcm5cIiwgYXN5bmMgKCkgPT4ge1xuICAgICAgICBjb25zdCB0ID0gdHJlZSgpO1xuICAgICAgICBjb25zdCBweXRob24gPSB0LmV4ZShcInZlbnYvYmluL3B5dGhvblwiKTtcbiAgICAgICAgY29uc3Qgb25QYXRoID0gdC5leGUoXCJwYXRoZGlyL3BhcmFrZXJuXCIpO1xuICAgICAgICBjb25zdCByID0gYXdhaXQgcmVzb2x2ZVNlcnZlcih7IGludGVycHJldGVyOiBweXRob24sIGVudjogeyBQQVRIOiBgL25vbmV4aXN0ZW50OiR7cGF0aC5kaXJuYW1lKG9uUGF0aCl9YCB9LCBwbGF0Zm9ybTogXCJsaW51eFwiIH0pO1xuICAgICAgICBhc3NlcnQub2soaXNSZXNvbHZlZChyKSk7XG4gICAgICAgIGFzc2VydC5lcXVhbChyLmNvbW1hbmQsIG9uUGF0aCk7XG4gICAgICAgIGFzc2VydC5lcXVhbChyLnNvdXJjZSwgXCJQQVRIXCIpO1xuICAgICAgICBhc3NlcnQub2soci50cmllZC5zb21lKCh4KSA9PiB4LmluY2x1ZGVzKHBhdGguam9pbih0LnJvb3QsIFwidmVudi9iaW4vcGFyYWtlcm5cIikpKSk7XG4gICAgfSk7XG5cbiAgICBpdChcInNraXBzIGEgUEFUSCBlbnRyeSB0aGF0IGlzIG5vdCBleGVjdXRhYmxlXCIsIGFzeW5jICgpID0+IHtcbiAgICAgICAgY29uc3QgdCA9IHRyZWUoKTtcbiAgICAgICAgY29uc3QgcGxhaW4gPSBwYXRoLmpvaW4odC5yb290LCBcImEvcGFyYWtlcm5cIik7XG4gICAgICAgIGZzLm1rZGlyU3luYyhwYXRoLmRpcm5hbWUocGxhaW4pLCB7IHJlY3Vyc2l2ZTogdHJ1ZSB9KTtcbiAgICAgICAgZnMud3JpdGVGaWxlU3luYyhwbGFpbiwgXCJcIiwgeyBtb2RlOiAwbzY0NCB9KTtcbiAgICAgICAgY29uc3QgZ29vZCA9IHQuZXhlKFwiYi9wYXJha2VyblwiKTtcbiAgICAgICAgY29uc3QgciA9IGF3YWl0IHJlc29sdmVTZXJ2ZXIoeyBlbnY6IHsgUEFUSDogYCR7cGF0aC5kaXJuYW1lKHBsYWluKX06JHtwYXRoLmRpcm5hbWUoZ29vZCl9YCB9LCBwbGF0Zm9ybTogXCJsaW51eFwiIH0pO1xuICAgICAgICBhc3NlcnQub2soaXNSZXNvbHZlZChyKSk7XG4gICAgICAgIGFzc2VydC5lcXVhbChyLmNvbW1hbmQsIGdvb2QpO1xuICAgIH0pO1xuXG4gICAgaXQoXCJub3RoaW5nIGZvdW5kOiB0aGUgbWVzc2FnZSBzYXlzIGhvdyB0byBmaXggaXRcIiwgYXN5bmMgKCkgPT4ge1xuICAgICAgICBjb25zdCByID0gYXdhaXQgcmVzb2x2ZVNlcnZlcih7IGVudjogeyBQQVRIOiBcIi9ub25leGlzdGVudFwiIH0sIHBsYXRmb3JtOiBcImxpbnV4XCIsIHB5dGhvbkV4dGVuc2lvbkludGVycHJldGVyOiBhc3luYyAoKSA9PiB7IHRocm93IG5ldyBFcnJvcihcIm5vIGFwaVwiKTsgfSB9KTtcbiAgICAgICAgYXNzZXJ0Lm9rKCFpc1Jlc29sdmVkKHIpKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKHIuZXJyb3IsIE5PVF9GT1VORF9NRVNTQUdFKTtcbiAgICAgICAgYXNzZXJ0Lm1hdGNoKHIuZXJyb3IsIC9waXAgaW5zdGFsbCAtZSAuKiBvciBzZXQgcGFyYWtlcm5cXC5wYXRoLyk7XG4gICAgICAgIGFzc2VydC5vayhyLnRyaWVkLnNvbWUoKHgpID0+IHguc3RhcnRzV2l0aChcInB5dGhvbiBleHRlbnNpb246IEVycm9yOiBubyBhcGlcIikpKTtcbiAgICB9KTtcbn0pO1xuXG5kZXNjcmliZShcInNldHRpbmdzXCIsICgpID0+IHtcbiAgICBiZWZvcmVFYWNoKCgpID0+IG1vY2sucmVzZXQoKSk7XG5cbiAgICBpdChcImluaXRpYWxpemF0aW9uT3B0aW9ucyBjYXJyeSB0aGUgc2VydmVyJ3Mga2V5cyBvbmx5XCIsICgpID0+IHtcbiAgICAgICAgbW9jay5yZXNldCh7XG4gICAgICAgICAgICBcInBhcmFrZXJuLnRhcmdldFwiOiBcInNtXzkwXCIsIFwicGFyYWtlcm4uZ3B1UHJvZmlsZXNcIjogW1wiaDEwMFwiXSwgXCJwYXJha2Vybi5zdHJhdGVnaWVzXCI6IFtcIigzYilcIl0sXG4gICAgICAgICAgICBcInBhcmFrZXJuLm9jY3VwYW5jeVwiOiBcImExMDBcIiwgXCJwYXJha2Vybi5jYXNlRGlhZ25vc3RpY3NcIjogZmFsc2UsIFwicGFyYWtlcm4uY2FzZVRyZWVzXCI6IHRydWUsXG4gICAgICAgICAgICBcInBhcmFrZXJuLnRpbWVMaW1pdFNlY29uZHNcIjogNSwgXCJwYXJha2Vybi5iZW5jaFwiOiB7IHJlcGVhdDogMyB9LFxuICAgICAgICAgICAgXCJwYXJha2Vybi5wYXRoXCI6IFwiL3hcIiwgXCJwYXJha2Vybi5pbnRlcnByZXRlclwiOiBcIi95XCIsIFwicGFyYWtlcm4udHJhY2Uuc2VydmVyXCI6IFwidmVyYm9zZVwiLFxuICAgICAgICB9KTtcbiAgICAgICAgYXNzZXJ0LmRlZXBFcXVhbChzZXJ2ZXJTZXR0aW5ncygpLCB7XG4gICAgICAgICAgICB0YXJnZXQ6IFwic21fOTBcIiwgZ3B1UHJvZmlsZXM6IFtcImgxMDBcIl0sIHN0cmF0ZWdpZXM6IFtcIigzYilcIl0sIG9jY3VwYW5jeTogXCJhMTAwXCIsXG4gICAgICAgICAgICBjYXNlRGlhZ25vc3RpY3M6IGZhbHNlLCBjYXNlVHJlZXM6IHRydWUsIHRpbWVMaW1pdFNlY29uZHM6IDUsIGJlbmNoOiB7IHJlcGVhdDogMyB9LFxuICAgICAgICB9KTtcbiAgICAgICAgYXNzZXJ0LmRlZXBFcXVhbChjbGllbnRTZXR0aW5ncygpLCB7IHBhdGg6IFwiL3hcIiwgaW50ZXJwcmV0ZXI6IFwiL3lcIiB9KTtcbiAgICB9KTtcblxuICAgIGl0KFwidW5zZXQgc2V0dGluZ3MgYXJlIGxlZnQgb3V0OyBudWxsIGlzIGtlcHQgKHN0cmF0ZWdpZXM6IGFsbClcIiwgKCkgPT4ge1xuICAgICAgICBtb2NrLnJlc2V0KHsgXCJwYXJha2Vybi5zdHJhdGVnaWVzXCI6IG51bGwgfSk7XG4gICAgICAgIGFzc2VydC5kZWVwRXF1YWwoc2VydmVyU2V0dGluZ3MoKSwgeyBzdHJhdGVnaWVzOiBudWxsIH0pO1xuICAgICAgICBhc3NlcnQuZGVlcEVxdWFsKGNsaWVudFNldHRpbmdzKCksIHsgcGF0aDogXCJcIiwgaW50ZXJwcmV0ZXI6IFwiXCIgfSk7XG4gICAgfSk7XG5cbiAgICBpdChcInRoZSBzZXJ2ZXIga2V5cyBhcmUgdGhvc2Ugb2YgdGhlIFJFQURNRSB0YWJsZSBhbmQgb2YgcGFja2FnZS5qc29uXCIsICgpID0+IHtcbiAgICAgICAgY29uc3QgbWFuaWZlc3QgPSBKU09OLnBhcnNlKGZzLnJlYWRGaWxlU3luYyhwYXRoLmpvaW4oX19kaXJuYW1lLCBcIi4uLy4uL3BhY2thZ2UuanNvblwiKSwgXCJ1dGY4XCIpKTtcbiAgICAgICAgY29uc3QgcHJvcHMgPSBPYmplY3Qua2V5cyhtYW5pZmVzdC5jb250cmlidXRlcy5jb25maWd1cmF0aW9uLnByb3BlcnRpZXMpO1xuICAgICAgICBmb3IgKGNvbnN0IGtleSBvZiBTRVJWRVJfS0VZUykgYXNzZXJ0Lm9rKHByb3BzLmluY2x1ZGVzKGBwYXJha2Vybi4ke2tleX1gKSwga2V5KTtcbiAgICAgICAgZm9yIChjb25zdCBrZXkgb2YgW1wicGFyYWtlcm4ucGF0aFwiLCBcInBhcmFrZXJuLmludGVycHJldGVyXCIsIFwicGFyYWtlcm4udHJhY2Uuc2VydmVyXCJdKSBhc3NlcnQub2socHJvcHMuaW5jbHVkZXMoa2V5KSwga2V5KTtcbiAgICAgICAgY29uc3QgcmVhZG1lID0gZnMucmVhZEZpbGVTeW5jKHBhdGguam9pbihfX2Rpcm5hbWUsIFwiLi4vLi4vLi4vUkVBRE1FLm1kXCIpLCBcInV0ZjhcIik7XG4gICAgICAgIGZvciAoY29uc3Qga2V5IG9mIFNFUlZFUl9LRVlTKSBhc3NlcnQub2socmVhZG1lLmluY2x1ZGVzKGB8IFxcYCR7a2V5fVxcYGApLCBgUkVBRE1FIGxpc3RzICR7a2V5fWApO1xuICAgIH0pO1xuXG4gICAgaXQoXCJwYXRoIGFuZCBpbnRlcnByZXRlciBjaGFuZ2VzIHJlc3RhcnQgdGhlIHNlcnZlcjsgb3RoZXJzIGRvIG5vdFwiLCAoKSA9PiB7XG4gICAgICAgIGNvbnN0IGV2ZW50ID0gKGtleXM6IHN0cmluZ1tdKSA9PiAoeyBhZmZlY3RzQ29uZmlndXJhdGlvbjogKGs6IHN0cmluZykgPT4ga2V5cy5pbmNsdWRlcyhrKSB9KTtcbiAgICAgICAgYXNzZXJ0Lm9rKG5lZWRzUmVzdGFydChldmVudChbXCJwYXJha2Vybi5wYXRoXCJdKSBhcyBuZXZlcikpO1xuICAgICAgICBhc3NlcnQub2sobmVlZHNSZXN0YXJ0KGV2ZW50KFtcInBhcmFrZXJuLmludGVycHJldGVyXCJdKSBhcyBuZXZlcikpO1xuICAgICAgICBhc3NlcnQub2soIW5lZWRzUmVzdGFydChldmVudChbXCJwYXJha2Vybi50YXJnZXRcIl0pIGFzIG5ldmVyKSk7XG4gICAgfSk7XG59KTtcblxuZGVzY3JpYmUoXCJzdGF0dXMgYmFyIGFuZCBwYWxldHRlXCIsICgpID0+IHtcbiAgICBiZWZvcmVFYWNoKCgpID0+IG1vY2sucmVzZXQoKSk7XG5cbiAgICBpdChcInNob3dzIHN0YXJ0aW5nIC8gcnVubmluZyAvIHN0b3BwZWQgLyBlcnJvclwiLCAoKSA9PiB7XG4gICAgICAgIGNvbnN0IHMgPSBuZXcgU3RhdHVzSXRlbSgpO1xuICAgICAgICBjb25zdCBpdGVtID0gbW9jay5zdGF0ZS5zdGF0dXNJdGVtc1swXTtcbiAgICAgICAgYXNzZXJ0Lm9rKGl0ZW0udmlzaWJsZSk7XG4gICAgICAgIGFzc2VydC5lcXVhbChpdGVtLmNvbW1hbmQsIFwicGFyYWtlcm4uc2hvd091dHB1dFwiKTtcbiAgICAgICAgYXNzZXJ0Lm1hdGNoKGl0ZW0udGV4dCwgL3BhcmFrZXJuLyk7XG4gICAgICAgIGZvciAoY29uc3Qgc3RhdGUgb2YgW1wic3RhcnRpbmdcIiwgXCJydW5uaW5nXCIsIFwic3RvcHBlZFwiLCBcImVycm9yXCJdIGFzIGNvbnN0KSB7XG4gICAgICAgICAgICBzLnNldChzdGF0ZSwgXCJkZXRhaWxcIik7XG4gICAgICAgICAgICBhc3NlcnQubWF0Y2goU3RyaW5nKGl0ZW0udG9vbHRpcCksIG5ldyBSZWdFeHAoYHBhcmFrZXJuOiAke3N0YXRlfWApKTtcbiAgICAgICAgfVxuICAgICAgICBhc3NlcnQub2soaXRlbS5iYWNrZ3JvdW5kQ29sb3IpO1xuICAgICAgICBzLnNldChcInJ1bm5pbmdcIik7XG4gICAgICAgIGFzc2VydC5lcXVhbChpdGVtLmJhY2tncm91bmRDb2xvciwgdW5kZWZpbmVkKTtcbiAgICAgICAgYXNzZXJ0Lm1hdGNoKGl0ZW0udGV4dCwgL1xcJFxcKGNoZWNrXFwpLyk7XG4gICAgfSk7XG5cbiAgICBpdChcInBpY2tzIHRoZSBzY2hlZHVsZSBhdCBvciBhYm92ZSB0aGUgY3Vyc29yXCIsICgpID0+IHtcbiAgICAgICAgY29uc3QgbGVuc2VzID0gW1xuICAgICAgICAgICAgeyByYW5nZTogeyBzdGFydDogeyBsaW5lOiAzIH0gfSwgY29tbWFuZDogeyBjb21tYW5kOiBcInBhcmFrZXJuLnNob3dDYXNlVHJlZVwiLCBhcmd1bWVudHM6IFtcInVcIiwgXCJmIzFcIiwgXCJtYXJrZG93blwiXSB9IH0sXG4gICAgICAgICAgICB7IHJhbmdlOiB7IHN0YXJ0OiB7IGxpbmU6IDMgfSB9LCBjb21tYW5kOiB7IGNvbW1hbmQ6IFwicGFyYWtlcm4uaW5zZXJ0RGlzcGF0Y2hlclwiLCBhcmd1bWVudHM6IFtcInVcIiwgXCJmIzFcIl0gfSB9LFxuICAgICAgICAgICAgeyByYW5nZTogeyBzdGFydDogeyBsaW5lOiAyMCB9IH0sIGNvbW1hbmQ6IHsgY29tbWFuZDogXCJwYXJha2Vybi5pbnNlcnREaXNwYXRjaGVyXCIsIGFyZ3VtZW50czogW1widVwiLCBcImcjMVwiXSB9IH0sXG4gICAgICAgIF07XG4gICAgICAgIGNvbnN0IHNjaGVkdWxlcyA9IHNjaGVkdWxlc0Zyb21MZW5zZXMobGVuc2VzKTtcbiAgICAgICAgYXNzZXJ0LmRlZXBFcXVhbChzY2hlZHVsZXMubWFwKChzKSA9PiBzLmlkKSwgW1wiZiMxXCIsIFwiZyMxXCJdKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKHBpY2tTY2hlZHVsZShzY2hlZHVsZXMsIDApPy5pZCwgXCJmIzFcIik7XG4gICAgICAgIGFzc2VydC5lcXVhbChwaWNrU2NoZWR1bGUoc2NoZWR1bGVzLCAxMCk/LmlkLCBcImYjMVwiKTtcbiAgICAgICAgYXNzZXJ0LmVxdWFsKHBpY2tTY2hlZHVsZShzY2hlZHVsZXMsIDI1KT8uaWQsIFwiZyMxXCIpO1xuICAgICAgICBhc3NlcnQuZXF1YWwocGlja1NjaGVkdWxlKFtdLCAxKSwgdW5kZWZpbmVkKTtcbiAgICB9KTtcbn0pO1xuXG5kZXNjcmliZShcImV4dGVuc2lvbiBjb2RlXCIsICgpID0+IHtcbiAgICBpdChcImRvZXMgbm90IHJlZ2lzdGVyIHRoZSBzZXJ2ZXIncyBjb21tYW5kcyBpdHNlbGZcIiwgKCkgPT4ge1xuICAgICAgICBjb25zdCBzcmMgPSBbXCJleHRlbnNpb24udHNcIiwgXCJjb21tYW5kcy50c1wiXS5tYXAoKGYpID0+IGZzLnJlYWRGaWxlU3luYyhwYXRoLmpvaW4oX19kaXJuYW1lLCBcIi4uLy4uL3NyY1wiLCBmKSwgXCJ1dGY4XCIpKS5qb2luKFwiXFxuXCIpO1xuICAgICAgICBjb25zdCByZWdpc3RlcmVkID0gWy4uLnNyYy5tYXRjaEFsbCgvcmVnaXN0ZXJDb21tYW5kXFwoXFxzKlwiKFteXCJdKylcIi9nKV0ubWFwKChtKSA9PiBtWzFdKTtcbiAgICAgICAgYXNzZXJ0LmRlZXBFcXVhbChyZWdpc3RlcmVkLnNvcnQoKSwgW1wicGFyYWtlcm4ucmVzdGFydFNlcnZlclwiLCBcInBhcmFrZXJuLnNob3dPdXRwdXRcIl0pO1xuICAgIH0pO1xufSk7XG4iLCAiLyoqIFRoZSBwYXJ0cyBvZiB0aGUgYHZzY29kZWAgQVBJIHRoZSBleHRlbnNpb24ncyBtb2R1bGVzIHVzZSwgd2l0aCBzdGF0ZSB0aGUgdGVzdHMgc2V0LiAqL1xuZXhwb3J0IGNvbnN0IHN0YXRlID0ge1xuICAgIGNvbmZpZzoge30gYXMgUmVjb3JkPHN0cmluZywgdW5rbm93bj4sXG4gICAgbWVzc2FnZXM6IFtdIGFzIHsgbGV2ZWw6IHN0cmluZzsgdGV4dDogc3RyaW5nIH1bXSxcbiAgICBleHRlbnNpb25zOiB7fSBhcyBSZWNvcmQ8c3RyaW5nLCB1bmtub3duPixcbiAgICBzdGF0dXNJdGVtczogW10gYXMgU3RhdHVzQmFySXRlbU1vY2tbXSxcbn07XG5cbmV4cG9ydCBmdW5jdGlvbiByZXNldChjb25maWc6IFJlY29yZDxzdHJpbmcsIHVua25vd24+ID0ge30pOiB2b2lkIHtcbiAgICBzdGF0ZS5jb25maWcgPSBjb25maWc7XG4gICAgc3RhdGUubWVzc2FnZXMgPSBbXTtcbiAgICBzdGF0ZS5leHRlbnNpb25zID0ge307XG4gICAgc3RhdGUuc3RhdHVzSXRlbXMgPSBbXTtcbn1cblxuZXhwb3J0IGNsYXNzIFRoZW1lQ29sb3Ige1xuICAgIGNvbnN0cnVjdG9yKHB1YmxpYyBpZDogc3RyaW5nKSB7fVxufVxuXG5leHBvcnQgZW51bSBTdGF0dXNCYXJBbGlnbm1lbnQgeyBMZWZ0ID0gMSwgUmlnaHQgPSAyIH1cbmV4cG9ydCBlbnVtIFZpZXdDb2x1bW4geyBCZXNpZGUgPSAtMiB9XG5cbmV4cG9ydCBjbGFzcyBTdGF0dXNCYXJJdGVtTW9jayB7XG4gICAgdGV4dCA9IFwiXCI7XG4gICAgdG9vbHRpcDogc3RyaW5nIHwgdW5kZWZpbmVkO1xuICAgIGNvbW1hbmQ6IHN0cmluZyB8IHVuZGVmaW5lZDtcbiAgICBuYW1lOiBzdHJpbmcgfCB1bmRlZmluZWQ7XG4gICAgYmFja2dyb3VuZENvbG9yOiBUaGVtZUNvbG9yIHwgdW5kZWZpbmVkO1xuICAgIHZpc2libGUgPSBmYWxzZTtcbiAgICBjb25zdHJ1Y3RvcihwdWJsaWMgaWQ6IHN0cmluZykge31cbiAgICBzaG93KCk6IHZvaWQgeyB0aGlzLnZpc2libGUgPSB0cnVlOyB9XG4gICAgaGlkZSgpOiB2b2lkIHsgdGhpcy52aXNpYmxlID0gZmFsc2U7IH1cbiAgICBkaXNwb3NlKCk6IHZvaWQgeyB0aGlzLnZpc2libGUgPSBmYWxzZTsgfVxufVxuXG5leHBvcnQgY29uc3Qgd29ya3NwYWNlID0ge1xuICAgIHdvcmtzcGFjZUZvbGRlcnM6IHVuZGVmaW5lZCBhcyB7IHVyaTogeyBmc1BhdGg6IHN0cmluZyB9IH1bXSB8IHVuZGVmaW5lZCxcbiAgICBnZXRDb25maWd1cmF0aW9uKHNlY3Rpb24/OiBzdHJpbmcpIHtcbiAgICAgICAgY29uc3QgcHJlZml4ID0gc2VjdGlvbiA/IGAke3NlY3Rpb259LmAgOiBcIlwiO1xuICAgICAgICByZXR1cm4ge1xuICAgICAgICAgICAgZ2V0PFQ+KGtleTogc3RyaW5nLCBmYWxsYmFjaz86IFQpOiBUIHwgdW5kZWZpbmVkIHtcbiAgICAgICAgICAgICAgICBjb25zdCBmdWxsID0gcHJlZml4ICsga2V5O1xuICAgICAgICAgICAgICAgIHJldHVybiAoZnVsbCBpbiBzdGF0ZS5jb25maWcgPyBzdGF0ZS5jb25maWdbZnVsbF0gOiBmYWxsYmFjaykgYXMgVCB8IHVuZGVmaW5lZDtcbiAgICAgICAgICAgIH0sXG4gICAgICAgICAgICBoYXMoa2V5OiBzdHJpbmcpIHsgcmV0dXJuIHByZWZpeCArIGtleSBpbiBzdGF0ZS5jb25maWc7IH0sXG4gICAgICAgIH07XG4gICAgfSxcbn07XG5cbmV4cG9ydCBjb25zdCB3aW5kb3cgPSB7XG4gICAgY3JlYXRlU3RhdHVzQmFySXRlbShpZDogc3RyaW5nKSB7XG4gICAgICAgIGNvbnN0IGl0ZW0gPSBuZXcgU3RhdHVzQmFySXRlbU1vY2soaWQpO1xuICAgICAgICBzdGF0ZS5zdGF0dXNJdGVtcy5wdXNoKGl0ZW0pO1xuICAgICAgICByZXR1cm4gaXRlbTtcbiAgICB9LFxuICAgIHNob3dFcnJvck1lc3NhZ2UodGV4dDogc3RyaW5nKSB7IHN0YXRlLm1lc3NhZ2VzLnB1c2goeyBsZXZlbDogXCJlcnJvclwiLCB0ZXh0IH0pOyByZXR1cm4gUHJvbWlzZS5yZXNvbHZlKHVuZGVmaW5lZCk7IH0sXG4gICAgc2hvd1dhcm5pbmdNZXNzYWdlKHRleHQ6IHN0cmluZykgeyBzdGF0ZS5tZXNzYWdlcy5wdXNoKHsgbGV2ZWw6IFwid2FybmluZ1wiLCB0ZXh0IH0pOyByZXR1cm4gUHJvbWlzZS5yZXNvbHZlKHVuZGVmaW5lZCk7IH0sXG4gICAgYWN0aXZlVGV4dEVkaXRvcjogdW5kZWZpbmVkIGFzIHVua25vd24sXG59O1xuXG5leHBvcnQgY29uc3QgZXh0ZW5zaW9ucyA9IHtcbiAgICBnZXRFeHRlbnNpb24oaWQ6IHN0cmluZykgeyByZXR1cm4gc3RhdGUuZXh0ZW5zaW9uc1tpZF07IH0sXG59O1xuXG5leHBvcnQgY29uc3QgY29tbWFuZHMgPSB7XG4gICAgZXhlY3V0ZUNvbW1hbmQ6IGFzeW5jICguLi5fYXJnczogdW5rbm93bltdKSA9PiB1bmRlZmluZWQgYXMgdW5rbm93bixcbn07XG5cbmV4cG9ydCBjbGFzcyBVcmkge1xuICAgIGNvbnN0cnVjdG9yKHB1YmxpYyBmc1BhdGg6IHN0cmluZykge31cbiAgICB0b1N0cmluZygpIHsgcmV0dXJuIGBmaWxlOi8vJHt0aGlzLmZzUGF0aH1gOyB9XG59XG4iLCAiLyoqXG4gKiBXaGVyZSBgcGFyYWtlcm4gc2VydmVgIGNvbWVzIGZyb20sIGluIHRoaXMgb3JkZXI6XG4gKlxuICogIDEuIHRoZSBgcGFyYWtlcm4ucGF0aGAgc2V0dGluZyAoYW4gZXhwbGljaXQgcGF0aCBpcyB1c2VkIG9yIHJlcG9ydGVkLCBuZXZlciBza2lwcGVkKTtcbiAqICAyLiB0aGUgc2VsZWN0ZWQgUHl0aG9uIGludGVycHJldGVyJ3MgZW52aXJvbm1lbnQ6IHRoZSBgcGFyYWtlcm4uaW50ZXJwcmV0ZXJgIHNldHRpbmcsXG4gKiAgICAgZWxzZSB0aGUgUHl0aG9uIGV4dGVuc2lvbidzIGFjdGl2ZSBpbnRlcnByZXRlciAoYG1zLXB5dGhvbi5weXRob25gLFxuICogICAgIGBlbnZpcm9ubWVudHMuZ2V0QWN0aXZlRW52aXJvbm1lbnRQYXRoKClgKTsgYHBhcmFrZXJuYCBpcyBsb29rZWQgZm9yIG5leHQgdG8gdGhlXG4gKiAgICAgaW50ZXJwcmV0ZXIgKGA8ZGlyIG9mIHB5dGhvbj4vcGFyYWtlcm5gLCBgU2NyaXB0c1xccGFyYWtlcm4uZXhlYCBvbiBXaW5kb3dzKTtcbiAqICAzLiBgUEFUSGAuXG4gKi9cbmltcG9ydCAqIGFzIGZzIGZyb20gXCJub2RlOmZzXCI7XG5pbXBvcnQgKiBhcyBvcyBmcm9tIFwibm9kZTpvc1wiO1xuaW1wb3J0ICogYXMgcGF0aCBmcm9tIFwibm9kZTpwYXRoXCI7XG5cbmV4cG9ydCBjb25zdCBOT1RfRk9VTkRfTUVTU0FHRSA9XG4gICAgXCJwYXJha2VybiBub3QgZm91bmQ6IHBpcCBpbnN0YWxsIC1lIC9wYXRoL3RvL3BhcmFrZXJuIGluIHlvdXIgUHl0aG9uIGVudmlyb25tZW50LCBvciBzZXQgcGFyYWtlcm4ucGF0aFwiO1xuXG5leHBvcnQgdHlwZSBTb3VyY2UgPSBcInBhcmFrZXJuLnBhdGhcIiB8IFwicGFyYWtlcm4uaW50ZXJwcmV0ZXJcIiB8IFwicHl0aG9uIGV4dGVuc2lvblwiIHwgXCJQQVRIXCI7XG5cbmV4cG9ydCBpbnRlcmZhY2UgUmVzb2x2ZWQge1xuICAgIGNvbW1hbmQ6IHN0cmluZztcbiAgICBzb3VyY2U6IFNvdXJjZTtcbiAgICAvKiogRXZlcnkgcGxhY2UgbG9va2VkIGF0LCBpbiBvcmRlciwgZm9yIHRoZSBvdXRwdXQgY2hhbm5lbC4gKi9cbiAgICB0cmllZDogc3RyaW5nW107XG59XG5cbmV4cG9ydCBpbnRlcmZhY2UgVW5yZXNvbHZlZCB7XG4gICAgZXJyb3I6IHN0cmluZztcbiAgICB0cmllZDogc3RyaW5nW107XG59XG5cbmV4cG9ydCBpbnRlcmZhY2UgUmVzb2x2ZUlucHV0IHtcbiAgICAvKiogVGhlIHBhcmFrZXJuLnBhdGggc2V0dGluZyAoXCJcIiBvciB1bmRlZmluZWQ6IHVuc2V0KS4gKi9cbiAgICBwYXRoPzogc3RyaW5nO1xuICAgIC8qKiBUaGUgcGFyYWtlcm4uaW50ZXJwcmV0ZXIgc2V0dGluZy4gKi9cbiAgICBpbnRlcnByZXRlcj86IHN0cmluZztcbiAgICAvKiogVGhlIFB5dGhvbiBleHRlbnNpb24ncyBhY3RpdmUgaW50ZXJwcmV0ZXIgKGEgcHl0aG9uIGV4ZWN1dGFibGUgb3IgYW4gZW52aXJvbm1lbnQgZm9sZGVyKS4gKi9cbiAgICBweXRob25FeHRlbnNpb25JbnRlcnByZXRlcj86ICgpID0+IFByb21pc2U8c3RyaW5nIHwgdW5kZWZpbmVkPjtcbiAgICAvKiogV29ya3NwYWNlIGZvbGRlciBmb3IgJHt3b3Jrc3BhY2VGb2xkZXJ9IGFuZCByZWxhdGl2ZSBwYXRocy4gKi9cbiAgICB3b3Jrc3BhY2VGb2xkZXI/OiBzdHJpbmc7XG4gICAgZW52PzogTm9kZUpTLlByb2Nlc3NFbnY7XG4gICAgcGxhdGZvcm0/OiBOb2RlSlMuUGxhdGZvcm07XG4gICAgaXNFeGVjdXRhYmxlPzogKGZpbGU6IHN0cmluZykgPT4gYm9vbGVhbjtcbn1cblxuZXhwb3J0IGZ1bmN0aW9uIGRlZmF1bHRJc0V4ZWN1dGFibGUoZmlsZTogc3RyaW5nKTogYm9vbGVhbiB7XG4gICAgdHJ5IHtcbiAgICAgICAgY29uc3Qgc3QgPSBmcy5zdGF0U3luYyhmaWxlKTtcbiAgICAgICAgaWYgKCFzdC5pc0ZpbGUoKSkgcmV0dXJuIGZhbHNlO1xuICAgICAgICBpZiAocHJvY2Vzcy5wbGF0Zm9ybSA9PT0gXCJ3aW4zMlwiKSByZXR1cm4gdHJ1ZTtcbiAgICAgICAgZnMuYWNjZXNzU3luYyhmaWxlLCBmcy5jb25zdGFudHMuWF9PSyk7XG4gICAgICAgIHJldHVybiB0cnVlO1xuICAgIH0gY2F0Y2gge1xuICAgICAgICByZXR1cm4gZmFsc2U7XG4gICAgfVxufVxuXG4vKiogYH5gLCBgJHt3b3Jrc3BhY2VGb2xkZXJ9YCwgYCR7dXNlckhvbWV9YCBhbmQgYCR7ZW52Ok5BTUV9YCBleHBhbmRlZDsgcmVsYXRpdmUgcGF0aHMgYWdhaW5zdCB0aGUgd29ya3NwYWNlIGZvbGRlci4gKi9cbmV4cG9ydCBmdW5jdGlvbiBleHBhbmRQYXRoKHZhbHVlOiBzdHJpbmcsIHdvcmtzcGFjZUZvbGRlcj86IHN0cmluZywgZW52OiBOb2RlSlMuUHJvY2Vzc0VudiA9IHByb2Nlc3MuZW52KTogc3RyaW5nIHtcbiAgICBsZXQgb3V0ID0gdmFsdWUudHJpbSgpO1xuICAgIG91dCA9IG91dC5yZXBsYWNlKC9cXCRcXHt3b3Jrc3BhY2VGb2xkZXJcXH0vZywgd29ya3NwYWNlRm9sZGVyID8/IFwiXCIpO1xuICAgIG91dCA9IG91dC5yZXBsYWNlKC9cXCRcXHt1c2VySG9tZVxcfS9nLCBvcy5ob21lZGlyKCkpO1xuICAgIG91dCA9IG91dC5yZXBsYWNlKC9cXCRcXHtlbnY6KFtefV0rKVxcfS9nLCAoX20sIG5hbWU6IHN0cmluZykgPT4gZW52W25hbWVdID8/IFwiXCIpO1xuICAgIGlmIChvdXQgPT09IFwiflwiIHx8IG91dC5zdGFydHNXaXRoKFwifi9cIikgfHwgb3V0LnN0YXJ0c1dpdGgoXCJ+XFxcXFwiKSkgb3V0ID0gcGF0aC5qb2luKG9zLmhvbWVkaXIoKSwgb3V0LnNsaWNlKDEpKTtcbiAgICBpZiAoIXBhdGguaXNBYnNvbHV0ZShvdXQpICYmIHdvcmtzcGFjZUZvbGRlciAmJiAvW1xcXFwvXS8udGVzdChvdXQpKSBvdXQgPSBwYXRoLmpvaW4od29ya3NwYWNlRm9sZGVyLCBvdXQpO1xuICAgIHJldHVybiBvdXQ7XG59XG5cbmZ1bmN0aW9uIGV4ZU5hbWVzKHBsYXRmb3JtOiBOb2RlSlMuUGxhdGZvcm0sIGVudjogTm9kZUpTLlByb2Nlc3NFbnYpOiBzdHJpbmdbXSB7XG4gICAgaWYgKHBsYXRmb3JtICE9PSBcIndpbjMyXCIpIHJldHVybiBbXCJwYXJha2VyblwiXTtcbiAgICBjb25zdCBleHRzID0gKGVudi5QQVRIRVhUID8/IFwiLkVYRTsuQ01EOy5CQVRcIikuc3BsaXQoXCI7XCIpLmZpbHRlcihCb29sZWFuKS5tYXAoKGUpID0+IGUudG9Mb3dlckNhc2UoKSk7XG4gICAgcmV0dXJuIFtcInBhcmFrZXJuXCIsIC4uLmV4dHMubWFwKChlKSA9PiBgcGFyYWtlcm4ke2V9YCldO1xufVxuXG4vKiogQ2FuZGlkYXRlIGBwYXJha2VybmAgZmlsZXMgZm9yIGFuIGludGVycHJldGVyOiBuZXh0IHRvIGl0LCBvciBpbnNpZGUgaXQgd2hlbiBpdCBpcyBhbiBlbnZpcm9ubWVudCBmb2xkZXIuICovXG5leHBvcnQgZnVuY3Rpb24gY2FuZGlkYXRlc0ZvckludGVycHJldGVyKGludGVycHJldGVyOiBzdHJpbmcsIHBsYXRmb3JtOiBOb2RlSlMuUGxhdGZvcm0gPSBwcm9jZXNzLnBsYXRmb3JtLFxuICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICBlbnY6IE5vZGVKUy5Qcm9jZXNzRW52ID0gcHJvY2Vzcy5lbnYpOiBzdHJpbmdbXSB7XG4gICAgY29uc3QgcCA9IHBsYXRmb3JtID09PSBcIndpbjMyXCIgPyBwYXRoLndpbjMyIDogcGF0aC5wb3NpeDtcbiAgICBjb25zdCBuYW1lcyA9IGV4ZU5hbWVzKHBsYXRmb3JtLCBlbnYpO1xuICAgIGNvbnN0IGRpcnM6IHN0cmluZ1tdID0gW107XG4gICAgbGV0IGlzRGlyID0gZmFsc2U7XG4gICAgdHJ5IHsgaXNEaXIgPSBmcy5zdGF0U3luYyhpbnRlcnByZXRlcikuaXNEaXJlY3RvcnkoKTsgfSBjYXRjaCB7IC8qIG5vdCB0aGVyZTogdHJlYXQgYXMgYSBmaWxlICovIH1cbiAgICBpZiAoaXNEaXIpIHtcbiAgICAgICAgZGlycy5wdXNoKHAuam9pbihpbnRlcnByZXRlciwgXCJiaW5cIiksIHAuam9pbihpbnRlcnByZXRlciwgXCJTY3JpcHRzXCIpLCBpbnRlcnByZXRlcik7XG4gICAgfSBlbHNlIHtcbiAgICAgICAgY29uc3QgZGlyID0gcC5kaXJuYW1lKGludGVycHJldGVyKTtcbiAgICAgICAgZGlycy5wdXNoKGRpcik7XG4gICAgICAgIGlmIChwbGF0Zm9ybSA9PT0gXCJ3aW4zMlwiKSBkaXJzLnB1c2gocC5qb2luKGRpciwgXCJTY3JpcHRzXCIpKTtcbiAgICB9XG4gICAgcmV0dXJuIGRpcnMuZmxhdE1hcCgoZCkgPT4gbmFtZXMubWFwKChuKSA9PiBwLmpvaW4oZCwgbikpKTtcbn1cblxuZXhwb3J0IGZ1bmN0aW9uIGNhbmRpZGF0ZXNPblBhdGgoZW52OiBOb2RlSlMuUHJvY2Vzc0VudiA9IHByb2Nlc3MuZW52LCBwbGF0Zm9ybTogTm9kZUpTLlBsYXRmb3JtID0gcHJvY2Vzcy5wbGF0Zm9ybSk6IHN0cmluZ1tdIHtcbiAgICBjb25zdCBwID0gcGxhdGZvcm0gPT09IFwid2luMzJcIiA/IHBhdGgud2luMzIgOiBwYXRoLnBvc2l4O1xuICAgIGNvbnN0IHZhbHVlID0gZW52LlBBVEggPz8gZW52LlBhdGggPz8gXCJcIjtcbiAgICBjb25zdCBzZXAgPSBwbGF0Zm9ybSA9PT0gXCJ3aW4zMlwiID8gXCI7XCIgOiBcIjpcIjtcbiAgICBjb25zdCBuYW1lcyA9IGV4ZU5hbWVzKHBsYXRmb3JtLCBlbnYpO1xuICAgIHJldHVybiB2YWx1ZS5zcGxpdChzZXApLmZpbHRlcihCb29sZWFuKS5mbGF0TWFwKChkKSA9PiBuYW1lcy5tYXAoKG4pID0+IHAuam9pbihkLCBuKSkpO1xufVxuXG5leHBvcnQgYXN5bmMgZnVuY3Rpb24gcmVzb2x2ZVNlcnZlcihpbnB1dDogUmVzb2x2ZUlucHV0KTogUHJvbWlzZTxSZXNvbHZlZCB8IFVucmVzb2x2ZWQ+IHtcbiAgICBjb25zdCBlbnYgPSBpbnB1dC5lbnYgPz8gcHJvY2Vzcy5lbnY7XG4gICAgY29uc3QgcGxhdGZvcm0gPSBpbnB1dC5wbGF0Zm9ybSA/PyBwcm9jZXNzLnBsYXRmb3JtO1xuICAgIGNvbnN0IGlzRXhlID0gaW5wdXQuaXNFeGVjdXRhYmxlID8/IGRlZmF1bHRJc0V4ZWN1dGFibGU7XG4gICAgY29uc3QgdHJpZWQ6IHN0cmluZ1tdID0gW107XG5cbiAgICAvLyAxLiBwYXJha2Vybi5wYXRoXG4gICAgaWYgKGlucHV0LnBhdGggJiYgaW5wdXQucGF0aC50cmltKCkpIHtcbiAgICAgICAgY29uc3QgZmlsZSA9IGV4cGFuZFBhdGgoaW5wdXQucGF0aCwgaW5wdXQud29ya3NwYWNlRm9sZGVyLCBlbnYpO1xuICAgICAgICB0cmllZC5wdXNoKGBwYXJha2Vybi5wYXRoOiAke2ZpbGV9YCk7XG4gICAgICAgIGlmIChpc0V4ZShmaWxlKSkgcmV0dXJuIHsgY29tbWFuZDogZmlsZSwgc291cmNlOiBcInBhcmFrZXJuLnBhdGhcIiwgdHJpZWQgfTtcbiAgICAgICAgcmV0dXJuIHtcbiAgICAgICAgICAgIGVycm9yOiBgcGFyYWtlcm4ucGF0aCBpcyBzZXQgdG8gJHtmaWxlfSwgd2hpY2ggaXMgbm90IGFuIGV4ZWN1dGFibGUgZmlsZTogZml4IG9yIGNsZWFyIHRoZSBzZXR0aW5nYCxcbiAgICAgICAgICAgIHRyaWVkLFxuICAgICAgICB9O1xuICAgIH1cblxuICAgIC8vIDIuIHRoZSBpbnRlcnByZXRlcidzIGVudmlyb25tZW50XG4gICAgY29uc3QgaW50ZXJwcmV0ZXJzOiBbU291cmNlLCAoKSA9PiBQcm9taXNlPHN0cmluZyB8IHVuZGVmaW5lZD5dW10gPSBbXTtcbiAgICBpZiAoaW5wdXQuaW50ZXJwcmV0ZXIgJiYgaW5wdXQuaW50ZXJwcmV0ZXIudHJpbSgpKSB7XG4gICAgICAgIGludGVycHJldGVycy5wdXNoKFtcInBhcmFrZXJuLmludGVycHJldGVyXCIsIGFzeW5jICgpID0+IGV4cGFuZFBhdGgoaW5wdXQuaW50ZXJwcmV0ZXIhLCBpbnB1dC53b3Jrc3BhY2VGb2xkZXIsIGVudildKTtcbiAgICB9IGVsc2UgaWYgKGlucHV0LnB5dGhvbkV4dGVuc2lvbkludGVycHJldGVyKSB7XG4gICAgICAgIGludGVycHJldGVycy5wdXNoKFtcInB5dGhvbiBleHRlbnNpb25cIiwgaW5wdXQucHl0aG9uRXh0ZW5zaW9uSW50ZXJwcmV0ZXJdKTtcbiAgICB9XG4gICAgZm9yIChjb25zdCBbc291cmNlLCBnZXRdIG9mIGludGVycHJldGVycykge1xuICAgICAgICBsZXQgaW50ZXJwcmV0ZXI6IHN0cmluZyB8IHVuZGVmaW5lZDtcbiAgICAgICAgdHJ5IHtcbiAgICAgICAgICAgIGludGVycHJldGVyID0gYXdhaXQgZ2V0KCk7XG4gICAgICAgIH0gY2F0Y2ggKGVycikge1xuICAgICAgICAgICAgdHJpZWQucHVzaChgJHtzb3VyY2V9OiAke1N0cmluZyhlcnIpfWApO1xuICAgICAgICAgICAgY29udGludWU7XG4gICAgICAgIH1cbiAgICAgICAgaWYgKCFpbnRlcnByZXRlcikge1xuICAgICAgICAgICAgdHJpZWQucHVzaChgJHtzb3VyY2V9OiBubyBpbnRlcnByZXRlcmApO1xuICAgICAgICAgICAgY29udGludWU7XG4gICAgICAgIH1cbiAgICAgICAgZm9yIChjb25zdCBmaWxlIG9mIGNhbmRpZGF0ZXNGb3JJbnRlcnByZXRlcihpbnRlcnByZXRlciwgcGxhdGZvcm0sIGVudikpIHtcbiAgICAgICAgICAgIHRyaWVkLnB1c2goYCR7c291cmNlfSAoJHtpbnRlcnByZXRlcn0pOiAke2ZpbGV9YCk7XG4gICAgICAgICAgICBpZiAoaXNFeGUoZmlsZSkpIHJldHVybiB7IGNvbW1hbmQ6IGZpbGUsIHNvdXJjZSwgdHJpZWQgfTtcbiAgICAgICAgfVxuICAgIH1cblxuICAgIC8vIDMuIFBBVEhcbiAgICBmb3IgKGNvbnN0IGZpbGUgb2YgY2FuZGlkYXRlc09uUGF0aChlbnYsIHBsYXRmb3JtKSkge1xuICAgICAgICB0cmllZC5wdXNoKGBQQVRIOiAke2ZpbGV9YCk7XG4gICAgICAgIGlmIChpc0V4ZShmaWxlKSkgcmV0dXJuIHsgY29tbWFuZDogZmlsZSwgc291cmNlOiBcIlBBVEhcIiwgdHJpZWQgfTtcbiAgICB9XG4gICAgcmV0dXJuIHsgZXJyb3I6IE5PVF9GT1VORF9NRVNTQUdFLCB0cmllZCB9O1xufVxuXG5leHBvcnQgZnVuY3Rpb24gaXNSZXNvbHZlZChyOiBSZXNvbHZlZCB8IFVucmVzb2x2ZWQpOiByIGlzIFJlc29sdmVkIHtcbiAgICByZXR1cm4gKHIgYXMgUmVzb2x2ZWQpLmNvbW1hbmQgIT09IHVuZGVmaW5lZDtcbn1cbiIsICIvKiogVGhlIHNlcnZlcidzIHNldHRpbmdzLCByZWFkIGZyb20gdGhlIFwicGFyYWtlcm5cIiBjb25maWd1cmF0aW9uIHNlY3Rpb24uICovXG5pbXBvcnQgKiBhcyB2c2NvZGUgZnJvbSBcInZzY29kZVwiO1xuXG4vKiogS2V5cyB0aGUgc2VydmVyIGtub3dzIChSRUFETUUncyBzZXR0aW5ncyB0YWJsZSk7IHRoZSBvdGhlcnMgKHBhdGgsIGludGVycHJldGVyLCB0cmFjZSkgc3RheSBpbiB0aGUgY2xpZW50LiAqL1xuZXhwb3J0IGNvbnN0IFNFUlZFUl9LRVlTID0gW1xuICAgIFwidGFyZ2V0XCIsIFwiZ3B1UHJvZmlsZXNcIiwgXCJzdHJhdGVnaWVzXCIsIFwib2NjdXBhbmN5XCIsIFwiY2FzZURpYWdub3N0aWNzXCIsIFwiY2FzZVRyZWVzXCIsXG4gICAgXCJ0aW1lTGltaXRTZWNvbmRzXCIsIFwiYmVuY2hcIixcbl0gYXMgY29uc3Q7XG5cbi8qKiBTZXR0aW5ncyB0aGF0IGNob29zZSB0aGUgc2VydmVyIHByb2Nlc3M6IGNoYW5naW5nIG9uZSByZXN0YXJ0cyBpdC4gKi9cbmV4cG9ydCBjb25zdCBSRVNUQVJUX0tFWVMgPSBbXCJwYXJha2Vybi5wYXRoXCIsIFwicGFyYWtlcm4uaW50ZXJwcmV0ZXJcIl0gYXMgY29uc3Q7XG5cbmV4cG9ydCB0eXBlIFNlcnZlclNldHRpbmdzID0gUGFydGlhbDxSZWNvcmQ8KHR5cGVvZiBTRVJWRVJfS0VZUylbbnVtYmVyXSwgdW5rbm93bj4+O1xuXG4vKiogVGhlIHNlcnZlciBwYXJ0IG9mIHRoZSBjb25maWd1cmF0aW9uLCBhcyBpbml0aWFsaXphdGlvbk9wdGlvbnMgKHVuZGVmaW5lZCB2YWx1ZXMgbGVmdCBvdXQpLiAqL1xuZXhwb3J0IGZ1bmN0aW9uIHNlcnZlclNldHRpbmdzKHNjb3BlPzogdnNjb2RlLkNvbmZpZ3VyYXRpb25TY29wZSk6IFNlcnZlclNldHRpbmdzIHtcbiAgICBjb25zdCBjb25maWcgPSB2c2NvZGUud29ya3NwYWNlLmdldENvbmZpZ3VyYXRpb24oXCJwYXJha2VyblwiLCBzY29wZSk7XG4gICAgY29uc3Qgb3V0OiBTZXJ2ZXJTZXR0aW5ncyA9IHt9O1xuICAgIGZvciAoY29uc3Qga2V5IG9mIFNFUlZFUl9LRVlTKSB7XG4gICAgICAgIGNvbnN0IHZhbHVlID0gY29uZmlnLmdldChrZXkpO1xuICAgICAgICBpZiAodmFsdWUgIT09IHVuZGVmaW5lZCkgb3V0W2tleV0gPSB2YWx1ZTtcbiAgICB9XG4gICAgcmV0dXJuIG91dDtcbn1cblxuZXhwb3J0IGludGVyZmFjZSBDbGllbnRTZXR0aW5ncyB7XG4gICAgcGF0aDogc3RyaW5nO1xuICAgIGludGVycHJldGVyOiBzdHJpbmc7XG59XG5cbmV4cG9ydCBmdW5jdGlvbiBjbGllbnRTZXR0aW5ncyhzY29wZT86IHZzY29kZS5Db25maWd1cmF0aW9uU2NvcGUpOiBDbGllbnRTZXR0aW5ncyB7XG4gICAgY29uc3QgY29uZmlnID0gdnNjb2RlLndvcmtzcGFjZS5nZXRDb25maWd1cmF0aW9uKFwicGFyYWtlcm5cIiwgc2NvcGUpO1xuICAgIHJldHVybiB7IHBhdGg6IGNvbmZpZy5nZXQ8c3RyaW5nPihcInBhdGhcIikgPz8gXCJcIiwgaW50ZXJwcmV0ZXI6IGNvbmZpZy5nZXQ8c3RyaW5nPihcImludGVycHJldGVyXCIpID8/IFwiXCIgfTtcbn1cblxuZXhwb3J0IGZ1bmN0aW9uIG5lZWRzUmVzdGFydChldmVudDogdnNjb2RlLkNvbmZpZ3VyYXRpb25DaGFuZ2VFdmVudCk6IGJvb2xlYW4ge1xuICAgIHJldHVybiBSRVNUQVJUX0tFWVMuc29tZSgoa2V5KSA9PiBldmVudC5hZmZlY3RzQ29uZmlndXJhdGlvbihrZXkpKTtcbn1cbiIsICIvKipcbiAqIFRoZSBzZXJ2ZXIncyBjb21tYW5kcyBhcmUgcmVnaXN0ZXJlZCBieSB2c2NvZGUtbGFuZ3VhZ2VjbGllbnQgaXRzZWxmIChmcm9tIHRoZVxuICogc2VydmVyJ3MgZXhlY3V0ZUNvbW1hbmRQcm92aWRlcik7IHRoaXMgbWlkZGxld2FyZSBvbmx5IGNvbXBsZXRlcyB0aGVpciBhcmd1bWVudHNcbiAqIHdoZW4gdGhleSBjb21lIGZyb20gdGhlIGNvbW1hbmQgcGFsZXR0ZSAobm8gYXJndW1lbnRzOiB0aGUgYWN0aXZlIGVkaXRvciBhbmQgdGhlXG4gKiBtZXRhX3NjaGVkdWxlIGF0IG9yIGFib3ZlIHRoZSBjdXJzb3IpLCBhbmQgc2hvd3MgdGhlIGNhc2UgdHJlZSB0aGUgc2VydmVyIHJldHVybnMuXG4gKi9cbmltcG9ydCAqIGFzIHZzY29kZSBmcm9tIFwidnNjb2RlXCI7XG5cbmV4cG9ydCBjb25zdCBTRVJWRVJfQ09NTUFORFMgPSBbXCJwYXJha2Vybi5pbnNlcnREaXNwYXRjaGVyXCIsIFwicGFyYWtlcm4uYmVuY2hcIiwgXCJwYXJha2Vybi5zaG93Q2FzZVRyZWVcIl0gYXMgY29uc3Q7XG5leHBvcnQgY29uc3QgTEFOR1VBR0VTID0gW1wiY1wiLCBcImNwcFwiLCBcImN1ZGEtY3BwXCJdIGFzIGNvbnN0O1xuXG5leHBvcnQgaW50ZXJmYWNlIFNjaGVkdWxlTGVucyB7XG4gICAgbGluZTogbnVtYmVyO1xuICAgIGlkOiBzdHJpbmc7XG59XG5cbi8qKiBUaGUgc2NoZWR1bGUgZm9yIGEgY3Vyc29yIGxpbmU6IHRoZSBsYXN0IG9uZSBzdGFydGluZyBhdCBvciBhYm92ZSBpdCwgZWxzZSB0aGUgZmlyc3QuICovXG5leHBvcnQgZnVuY3Rpb24gcGlja1NjaGVkdWxlKHNjaGVkdWxlczogU2NoZWR1bGVMZW5zW10sIGN1cnNvckxpbmU6IG51bWJlcik6IFNjaGVkdWxlTGVucyB8IHVuZGVmaW5lZCB7XG4gICAgY29uc3Qgc29ydGVkID0gWy4uLnNjaGVkdWxlc10uc29ydCgoYSwgYikgPT4gYS5saW5lIC0gYi5saW5lKTtcbiAgICBsZXQgYmVzdDogU2NoZWR1bGVMZW5zIHwgdW5kZWZpbmVkO1xuICAgIGZvciAoY29uc3QgcyBvZiBzb3J0ZWQpIGlmIChzLmxpbmUgPD0gY3Vyc29yTGluZSkgYmVzdCA9IHM7XG4gICAgcmV0dXJuIGJlc3QgPz8gc29ydGVkWzBdO1xufVxuXG4vKiogU2NoZWR1bGVzIGZyb20gdGhlIHNlcnZlcidzIGxlbnNlczogdGhvc2Ugd2hvc2UgY29tbWFuZCBjYXJyaWVzIFt1cmksIGlkXS4gKi9cbmV4cG9ydCBmdW5jdGlvbiBzY2hlZHVsZXNGcm9tTGVuc2VzKGxlbnNlczogeyByYW5nZTogeyBzdGFydDogeyBsaW5lOiBudW1iZXIgfSB9OyBjb21tYW5kPzogeyBjb21tYW5kOiBzdHJpbmc7IGFyZ3VtZW50cz86IHVua25vd25bXSB9IH1bXSk6IFNjaGVkdWxlTGVuc1tdIHtcbiAgICBjb25zdCBzZWVuID0gbmV3IE1hcDxzdHJpbmcsIFNjaGVkdWxlTGVucz4oKTtcbiAgICBmb3IgKGNvbnN0IGxlbnMgb2YgbGVuc2VzKSB7XG4gICAgICAgIGNvbnN0IGFyZ3MgPSBsZW5zLmNvbW1hbmQ/LmFyZ3VtZW50cztcbiAgICAgICAgaWYgKGxlbnMuY29tbWFuZD8uY29tbWFuZCA9PT0gXCJwYXJha2Vybi5pbnNlcnREaXNwYXRjaGVyXCIgJiYgYXJncyAmJiB0eXBlb2YgYXJnc1sxXSA9PT0gXCJzdHJpbmdcIikge1xuICAgICAgICAgICAgc2Vlbi5zZXQoYXJnc1sxXSwgeyBsaW5lOiBsZW5zLnJhbmdlLnN0YXJ0LmxpbmUsIGlkOiBhcmdzWzFdIH0pO1xuICAgICAgICB9XG4gICAgfVxuICAgIHJldHVybiBbLi4uc2Vlbi52YWx1ZXMoKV07XG59XG5cbmV4cG9ydCBhc3luYyBmdW5jdGlvbiBjb21wbGV0ZUFyZ3VtZW50cyhjb21tYW5kOiBzdHJpbmcsIGFyZ3M6IHVua25vd25bXSk6IFByb21pc2U8dW5rbm93bltdIHwgdW5kZWZpbmVkPiB7XG4gICAgaWYgKGNvbW1hbmQgPT09IFwicGFyYWtlcm4uYmVuY2hcIiB8fCBhcmdzLmxlbmd0aCA+IDApIHJldHVybiBhcmdzO1xuICAgIGNvbnN0IGVkaXRvciA9IHZzY29kZS53aW5kb3cuYWN0aXZlVGV4dEVkaXRvcjtcbiAgICBpZiAoIWVkaXRvciB8fCAhKExBTkdVQUdFUyBhcyByZWFkb25seSBzdHJpbmdbXSkuaW5jbHVkZXMoZWRpdG9yLmRvY3VtZW50Lmxhbmd1YWdlSWQpKSB7XG4gICAgICAgIHZvaWQgdnNjb2RlLndpbmRvdy5zaG93V2FybmluZ01lc3NhZ2UoYCR7Y29tbWFuZH06IG9wZW4gYSBDLCBDKysgb3IgQ1VEQSBmaWxlIHdpdGggYSBtZXRhX3NjaGVkdWxlIGZpcnN0YCk7XG4gICAgICAgIHJldHVybiB1bmRlZmluZWQ7XG4gICAgfVxuICAgIGNvbnN0IGxlbnNlcyA9IGF3YWl0IHZzY29kZS5jb21tYW5kcy5leGVjdXRlQ29tbWFuZDx2c2NvZGUuQ29kZUxlbnNbXT4oXG4gICAgICAgIFwidnNjb2RlLmV4ZWN1dGVDb2RlTGVuc1Byb3ZpZGVyXCIsIGVkaXRvci5kb2N1bWVudC51cmkpO1xuICAgIGNvbnN0IHNjaGVkdWxlcyA9IHNjaGVkdWxlc0Zyb21MZW5zZXMoKGxlbnNlcyA/PyBbXSkubWFwKChsKSA9PiAoe1xuICAgICAgICByYW5nZTogbC5yYW5nZSwgY29tbWFuZDogbC5jb21tYW5kID8geyBjb21tYW5kOiBsLmNvbW1hbmQuY29tbWFuZCwgYXJndW1lbnRzOiBsLmNvbW1hbmQuYXJndW1lbnRzIH0gOiB1bmRlZmluZWQsXG4gICAgfSkpKTtcbiAgICBjb25zdCBjaG9zZW4gPSBwaWNrU2NoZWR1bGUoc2NoZWR1bGVzLCBlZGl0b3Iuc2VsZWN0aW9uLmFjdGl2ZS5saW5lKTtcbiAgICBpZiAoIWNob3Nlbikge1xuICAgICAgICB2b2lkIHZzY29kZS53aW5kb3cuc2hvd1dhcm5pbmdNZXNzYWdlKGAke2NvbW1hbmR9OiBubyBtZXRhX3NjaGVkdWxlIGluIHRoaXMgZmlsZWApO1xuICAgICAgICByZXR1cm4gdW5kZWZpbmVkO1xuICAgIH1cbiAgICBjb25zdCB1cmkgPSBlZGl0b3IuZG9jdW1lbnQudXJpLnRvU3RyaW5nKCk7XG4gICAgcmV0dXJuIGNvbW1hbmQgPT09IFwicGFyYWtlcm4uc2hvd0Nhc2VUcmVlXCIgPyBbdXJpLCBjaG9zZW4uaWQsIFwibWFya2Rvd25cIl0gOiBbdXJpLCBjaG9zZW4uaWRdO1xufVxuXG4vKiogV2hhdCB0byBkbyB3aXRoIGEgY29tbWFuZCdzIHJlc3VsdDogc2hvdyB0aGUgY2FzZSB0cmVlIGluIGEgbWFya2Rvd24gZG9jdW1lbnQuICovXG5leHBvcnQgYXN5bmMgZnVuY3Rpb24gc2hvd1Jlc3VsdChjb21tYW5kOiBzdHJpbmcsIHJlc3VsdDogdW5rbm93bik6IFByb21pc2U8dm9pZD4ge1xuICAgIGlmIChjb21tYW5kID09PSBcInBhcmFrZXJuLnNob3dDYXNlVHJlZVwiICYmIHR5cGVvZiByZXN1bHQgPT09IFwic3RyaW5nXCIpIHtcbiAgICAgICAgY29uc3QgZG9jID0gYXdhaXQgdnNjb2RlLndvcmtzcGFjZS5vcGVuVGV4dERvY3VtZW50KHsgbGFuZ3VhZ2U6IFwibWFya2Rvd25cIiwgY29udGVudDogcmVzdWx0IH0pO1xuICAgICAgICBhd2FpdCB2c2NvZGUud2luZG93LnNob3dUZXh0RG9jdW1lbnQoZG9jLCB7IHZpZXdDb2x1bW46IHZzY29kZS5WaWV3Q29sdW1uLkJlc2lkZSwgcHJldmlldzogdHJ1ZSB9KTtcbiAgICB9XG59XG4iLCAiLyoqIFRoZSBQeXRob24gZXh0ZW5zaW9uJ3MgYWN0aXZlIGludGVycHJldGVyLCB3aGVuIG1zLXB5dGhvbi5weXRob24gaXMgaW5zdGFsbGVkLiAqL1xuaW1wb3J0ICogYXMgdnNjb2RlIGZyb20gXCJ2c2NvZGVcIjtcblxuaW50ZXJmYWNlIFB5dGhvbkFwaSB7XG4gICAgZW52aXJvbm1lbnRzPzoge1xuICAgICAgICBnZXRBY3RpdmVFbnZpcm9ubWVudFBhdGgocmVzb3VyY2U/OiB2c2NvZGUuVXJpKTogeyBpZDogc3RyaW5nOyBwYXRoOiBzdHJpbmcgfSB8IHVuZGVmaW5lZDtcbiAgICAgICAgb25EaWRDaGFuZ2VBY3RpdmVFbnZpcm9ubWVudFBhdGg/OiB2c2NvZGUuRXZlbnQ8dW5rbm93bj47XG4gICAgfTtcbn1cblxuZXhwb3J0IGNvbnN0IFBZVEhPTl9FWFRFTlNJT05fSUQgPSBcIm1zLXB5dGhvbi5weXRob25cIjtcblxuYXN5bmMgZnVuY3Rpb24gYXBpKCk6IFByb21pc2U8UHl0aG9uQXBpIHwgdW5kZWZpbmVkPiB7XG4gICAgY29uc3QgZXh0ID0gdnNjb2RlLmV4dGVuc2lvbnMuZ2V0RXh0ZW5zaW9uPFB5dGhvbkFwaT4oUFlUSE9OX0VYVEVOU0lPTl9JRCk7XG4gICAgaWYgKCFleHQpIHJldHVybiB1bmRlZmluZWQ7XG4gICAgcmV0dXJuIGV4dC5pc0FjdGl2ZSA/IGV4dC5leHBvcnRzIDogYXdhaXQgZXh0LmFjdGl2YXRlKCk7XG59XG5cbi8qKiBQYXRoIG9mIHRoZSBhY3RpdmUgaW50ZXJwcmV0ZXIgKGFuIGV4ZWN1dGFibGUgb3IgYW4gZW52aXJvbm1lbnQgZm9sZGVyKTsgdW5kZWZpbmVkIHdpdGhvdXQgdGhlIGV4dGVuc2lvbi4gKi9cbmV4cG9ydCBhc3luYyBmdW5jdGlvbiBhY3RpdmVJbnRlcnByZXRlcihyZXNvdXJjZT86IHZzY29kZS5VcmkpOiBQcm9taXNlPHN0cmluZyB8IHVuZGVmaW5lZD4ge1xuICAgIGNvbnN0IGVudmlyb25tZW50cyA9IChhd2FpdCBhcGkoKSk/LmVudmlyb25tZW50cztcbiAgICByZXR1cm4gZW52aXJvbm1lbnRzPy5nZXRBY3RpdmVFbnZpcm9ubWVudFBhdGgocmVzb3VyY2UpPy5wYXRoIHx8IHVuZGVmaW5lZDtcbn1cblxuLyoqIFN1YnNjcmliZSB0byBpbnRlcnByZXRlciBjaGFuZ2VzIChuby1vcCB3aXRob3V0IHRoZSBleHRlbnNpb24pLiAqL1xuZXhwb3J0IGFzeW5jIGZ1bmN0aW9uIG9uSW50ZXJwcmV0ZXJDaGFuZ2UobGlzdGVuZXI6ICgpID0+IHZvaWQpOiBQcm9taXNlPHZzY29kZS5EaXNwb3NhYmxlIHwgdW5kZWZpbmVkPiB7XG4gICAgdHJ5IHtcbiAgICAgICAgY29uc3QgZXZlbnQgPSAoYXdhaXQgYXBpKCkpPy5lbnZpcm9ubWVudHM/Lm9uRGlkQ2hhbmdlQWN0aXZlRW52aXJvbm1lbnRQYXRoO1xuICAgICAgICByZXR1cm4gZXZlbnQgPyBldmVudChsaXN0ZW5lcikgOiB1bmRlZmluZWQ7XG4gICAgfSBjYXRjaCB7XG4gICAgICAgIHJldHVybiB1bmRlZmluZWQ7XG4gICAgfVxufVxuIiwgImltcG9ydCAqIGFzIHZzY29kZSBmcm9tIFwidnNjb2RlXCI7XG5cbmV4cG9ydCB0eXBlIFNlcnZlclN0YXRlID0gXCJzdGFydGluZ1wiIHwgXCJydW5uaW5nXCIgfCBcInN0b3BwZWRcIiB8IFwiZXJyb3JcIjtcblxuY29uc3QgSUNPTlM6IFJlY29yZDxTZXJ2ZXJTdGF0ZSwgc3RyaW5nPiA9IHtcbiAgICBzdGFydGluZzogXCIkKHN5bmN+c3BpbilcIiwgcnVubmluZzogXCIkKGNoZWNrKVwiLCBzdG9wcGVkOiBcIiQoY2lyY2xlLXNsYXNoKVwiLCBlcnJvcjogXCIkKGVycm9yKVwiLFxufTtcblxuLyoqIFN0YXR1cyBiYXIgaXRlbTogdGhlIHNlcnZlcidzIHN0YXRlOyBhIGNsaWNrIHNob3dzIHRoZSBvdXRwdXQgY2hhbm5lbC4gKi9cbmV4cG9ydCBjbGFzcyBTdGF0dXNJdGVtIGltcGxlbWVudHMgdnNjb2RlLkRpc3Bvc2FibGUge1xuICAgIHJlYWRvbmx5IGl0ZW06IHZzY29kZS5TdGF0dXNCYXJJdGVtO1xuICAgIHN0YXRlOiBTZXJ2ZXJTdGF0ZSA9IFwic3RvcHBlZFwiO1xuXG4gICAgY29uc3RydWN0b3IoKSB7XG4gICAgICAgIHRoaXMuaXRlbSA9IHZzY29kZS53aW5kb3cuY3JlYXRlU3RhdHVzQmFySXRlbShcInBhcmFrZXJuLnN0YXR1c1wiLCB2c2NvZGUuU3RhdHVzQmFyQWxpZ25tZW50LlJpZ2h0LCAxMDApO1xuICAgICAgICB0aGlzLml0ZW0ubmFtZSA9IFwicGFyYWtlcm5cIjtcbiAgICAgICAgdGhpcy5pdGVtLmNvbW1hbmQgPSBcInBhcmFrZXJuLnNob3dPdXRwdXRcIjtcbiAgICAgICAgdGhpcy5zZXQoXCJzdG9wcGVkXCIpO1xuICAgICAgICB0aGlzLml0ZW0uc2hvdygpO1xuICAgIH1cblxuICAgIHNldChzdGF0ZTogU2VydmVyU3RhdGUsIGRldGFpbD86IHN0cmluZyk6IHZvaWQge1xuICAgICAgICB0aGlzLnN0YXRlID0gc3RhdGU7XG4gICAgICAgIHRoaXMuaXRlbS50ZXh0ID0gYCR7SUNPTlNbc3RhdGVdfSBwYXJha2VybmA7XG4gICAgICAgIHRoaXMuaXRlbS50b29sdGlwID0gYHBhcmFrZXJuOiAke3N0YXRlfSR7ZGV0YWlsID8gYCBcdTIwMTQgJHtkZXRhaWx9YCA6IFwiXCJ9IChjbGljayBmb3IgdGhlIG91dHB1dClgO1xuICAgICAgICB0aGlzLml0ZW0uYmFja2dyb3VuZENvbG9yID0gc3RhdGUgPT09IFwiZXJyb3JcIlxuICAgICAgICAgICAgPyBuZXcgdnNjb2RlLlRoZW1lQ29sb3IoXCJzdGF0dXNCYXJJdGVtLmVycm9yQmFja2dyb3VuZFwiKSA6IHVuZGVmaW5lZDtcbiAgICB9XG5cbiAgICBkaXNwb3NlKCk6IHZvaWQge1xuICAgICAgICB0aGlzLml0ZW0uZGlzcG9zZSgpO1xuICAgIH1cbn1cbiJdLAogICJtYXBwaW5ncyI6ICI7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7QUFDQSx5QkFBaUM7QUFDakMsSUFBQUEsTUFBb0I7QUFDcEIsSUFBQUMsTUFBb0I7QUFDcEIsSUFBQUMsUUFBc0I7QUFDdEIsdUJBQXlDOzs7QUNKbEMsSUFBTSxRQUFRO0FBQUEsRUFDakIsUUFBUSxDQUFDO0FBQUEsRUFDVCxVQUFVLENBQUM7QUFBQSxFQUNYLFlBQVksQ0FBQztBQUFBLEVBQ2IsYUFBYSxDQUFDO0FBQ2xCO0FBRU8sU0FBUyxNQUFNLFNBQWtDLENBQUMsR0FBUztBQUM5RCxRQUFNLFNBQVM7QUFDZixRQUFNLFdBQVcsQ0FBQztBQUNsQixRQUFNLGFBQWEsQ0FBQztBQUNwQixRQUFNLGNBQWMsQ0FBQztBQUN6QjtBQUVPLElBQU0sYUFBTixNQUFpQjtBQUFBLEVBQ3BCLFlBQW1CLElBQVk7QUFBWjtBQUFBLEVBQWE7QUFBQSxFQUFiO0FBQ3ZCO0FBS08sSUFBTSxvQkFBTixNQUF3QjtBQUFBLEVBTzNCLFlBQW1CLElBQVk7QUFBWjtBQUFBLEVBQWE7QUFBQSxFQUFiO0FBQUEsRUFObkIsT0FBTztBQUFBLEVBQ1A7QUFBQSxFQUNBO0FBQUEsRUFDQTtBQUFBLEVBQ0E7QUFBQSxFQUNBLFVBQVU7QUFBQSxFQUVWLE9BQWE7QUFBRSxTQUFLLFVBQVU7QUFBQSxFQUFNO0FBQUEsRUFDcEMsT0FBYTtBQUFFLFNBQUssVUFBVTtBQUFBLEVBQU87QUFBQSxFQUNyQyxVQUFnQjtBQUFFLFNBQUssVUFBVTtBQUFBLEVBQU87QUFDNUM7QUFFTyxJQUFNLFlBQVk7QUFBQSxFQUNyQixrQkFBa0I7QUFBQSxFQUNsQixpQkFBaUIsU0FBa0I7QUFDL0IsVUFBTSxTQUFTLFVBQVUsR0FBRyxPQUFPLE1BQU07QUFDekMsV0FBTztBQUFBLE1BQ0gsSUFBTyxLQUFhLFVBQTZCO0FBQzdDLGNBQU0sT0FBTyxTQUFTO0FBQ3RCLGVBQVEsUUFBUSxNQUFNLFNBQVMsTUFBTSxPQUFPLElBQUksSUFBSTtBQUFBLE1BQ3hEO0FBQUEsTUFDQSxJQUFJLEtBQWE7QUFBRSxlQUFPLFNBQVMsT0FBTyxNQUFNO0FBQUEsTUFBUTtBQUFBLElBQzVEO0FBQUEsRUFDSjtBQUNKO0FBRU8sSUFBTSxTQUFTO0FBQUEsRUFDbEIsb0JBQW9CLElBQVk7QUFDNUIsVUFBTSxPQUFPLElBQUksa0JBQWtCLEVBQUU7QUFDckMsVUFBTSxZQUFZLEtBQUssSUFBSTtBQUMzQixXQUFPO0FBQUEsRUFDWDtBQUFBLEVBQ0EsaUJBQWlCLE1BQWM7QUFBRSxVQUFNLFNBQVMsS0FBSyxFQUFFLE9BQU8sU0FBUyxLQUFLLENBQUM7QUFBRyxXQUFPLFFBQVEsUUFBUSxNQUFTO0FBQUEsRUFBRztBQUFBLEVBQ25ILG1CQUFtQixNQUFjO0FBQUUsVUFBTSxTQUFTLEtBQUssRUFBRSxPQUFPLFdBQVcsS0FBSyxDQUFDO0FBQUcsV0FBTyxRQUFRLFFBQVEsTUFBUztBQUFBLEVBQUc7QUFBQSxFQUN2SCxrQkFBa0I7QUFDdEI7QUFFTyxJQUFNLGFBQWE7QUFBQSxFQUN0QixhQUFhLElBQVk7QUFBRSxXQUFPLE1BQU0sV0FBVyxFQUFFO0FBQUEsRUFBRztBQUM1RDs7O0FDcERBLFNBQW9CO0FBQ3BCLFNBQW9CO0FBQ3BCLFdBQXNCO0FBRWYsSUFBTSxvQkFDVDtBQThCRyxTQUFTLG9CQUFvQixNQUF1QjtBQUN2RCxNQUFJO0FBQ0EsVUFBTSxLQUFRLFlBQVMsSUFBSTtBQUMzQixRQUFJLENBQUMsR0FBRyxPQUFPLEVBQUcsUUFBTztBQUN6QixRQUFJLFFBQVEsYUFBYSxRQUFTLFFBQU87QUFDekMsSUFBRyxjQUFXLE1BQVMsYUFBVSxJQUFJO0FBQ3JDLFdBQU87QUFBQSxFQUNYLFFBQVE7QUFDSixXQUFPO0FBQUEsRUFDWDtBQUNKO0FBR08sU0FBUyxXQUFXLE9BQWUsaUJBQTBCLE1BQXlCLFFBQVEsS0FBYTtBQUM5RyxNQUFJLE1BQU0sTUFBTSxLQUFLO0FBQ3JCLFFBQU0sSUFBSSxRQUFRLDBCQUEwQixtQkFBbUIsRUFBRTtBQUNqRSxRQUFNLElBQUksUUFBUSxtQkFBc0IsV0FBUSxDQUFDO0FBQ2pELFFBQU0sSUFBSSxRQUFRLHNCQUFzQixDQUFDLElBQUksU0FBaUIsSUFBSSxJQUFJLEtBQUssRUFBRTtBQUM3RSxNQUFJLFFBQVEsT0FBTyxJQUFJLFdBQVcsSUFBSSxLQUFLLElBQUksV0FBVyxLQUFLLEVBQUcsT0FBVyxVQUFRLFdBQVEsR0FBRyxJQUFJLE1BQU0sQ0FBQyxDQUFDO0FBQzVHLE1BQUksQ0FBTSxnQkFBVyxHQUFHLEtBQUssbUJBQW1CLFFBQVEsS0FBSyxHQUFHLEVBQUcsT0FBVyxVQUFLLGlCQUFpQixHQUFHO0FBQ3ZHLFNBQU87QUFDWDtBQUVBLFNBQVMsU0FBUyxVQUEyQixLQUFrQztBQUMzRSxNQUFJLGFBQWEsUUFBUyxRQUFPLENBQUMsVUFBVTtBQUM1QyxRQUFNLFFBQVEsSUFBSSxXQUFXLGtCQUFrQixNQUFNLEdBQUcsRUFBRSxPQUFPLE9BQU8sRUFBRSxJQUFJLENBQUMsTUFBTSxFQUFFLFlBQVksQ0FBQztBQUNwRyxTQUFPLENBQUMsWUFBWSxHQUFHLEtBQUssSUFBSSxDQUFDLE1BQU0sV0FBVyxDQUFDLEVBQUUsQ0FBQztBQUMxRDtBQUdPLFNBQVMseUJBQXlCLGFBQXFCLFdBQTRCLFFBQVEsVUFDekQsTUFBeUIsUUFBUSxLQUFlO0FBQ3JGLFFBQU0sSUFBSSxhQUFhLFVBQWUsYUFBYTtBQUNuRCxRQUFNLFFBQVEsU0FBUyxVQUFVLEdBQUc7QUFDcEMsUUFBTSxPQUFpQixDQUFDO0FBQ3hCLE1BQUksUUFBUTtBQUNaLE1BQUk7QUFBRSxZQUFXLFlBQVMsV0FBVyxFQUFFLFlBQVk7QUFBQSxFQUFHLFFBQVE7QUFBQSxFQUFtQztBQUNqRyxNQUFJLE9BQU87QUFDUCxTQUFLLEtBQUssRUFBRSxLQUFLLGFBQWEsS0FBSyxHQUFHLEVBQUUsS0FBSyxhQUFhLFNBQVMsR0FBRyxXQUFXO0FBQUEsRUFDckYsT0FBTztBQUNILFVBQU0sTUFBTSxFQUFFLFFBQVEsV0FBVztBQUNqQyxTQUFLLEtBQUssR0FBRztBQUNiLFFBQUksYUFBYSxRQUFTLE1BQUssS0FBSyxFQUFFLEtBQUssS0FBSyxTQUFTLENBQUM7QUFBQSxFQUM5RDtBQUNBLFNBQU8sS0FBSyxRQUFRLENBQUMsTUFBTSxNQUFNLElBQUksQ0FBQyxNQUFNLEVBQUUsS0FBSyxHQUFHLENBQUMsQ0FBQyxDQUFDO0FBQzdEO0FBRU8sU0FBUyxpQkFBaUIsTUFBeUIsUUFBUSxLQUFLLFdBQTRCLFFBQVEsVUFBb0I7QUFDM0gsUUFBTSxJQUFJLGFBQWEsVUFBZSxhQUFhO0FBQ25ELFFBQU0sUUFBUSxJQUFJLFFBQVEsSUFBSSxRQUFRO0FBQ3RDLFFBQU0sTUFBTSxhQUFhLFVBQVUsTUFBTTtBQUN6QyxRQUFNLFFBQVEsU0FBUyxVQUFVLEdBQUc7QUFDcEMsU0FBTyxNQUFNLE1BQU0sR0FBRyxFQUFFLE9BQU8sT0FBTyxFQUFFLFFBQVEsQ0FBQyxNQUFNLE1BQU0sSUFBSSxDQUFDLE1BQU0sRUFBRSxLQUFLLEdBQUcsQ0FBQyxDQUFDLENBQUM7QUFDekY7QUFFQSxlQUFzQixjQUFjLE9BQXFEO0FBQ3JGLFFBQU0sTUFBTSxNQUFNLE9BQU8sUUFBUTtBQUNqQyxRQUFNLFdBQVcsTUFBTSxZQUFZLFFBQVE7QUFDM0MsUUFBTSxRQUFRLE1BQU0sZ0JBQWdCO0FBQ3BDLFFBQU0sUUFBa0IsQ0FBQztBQUd6QixNQUFJLE1BQU0sUUFBUSxNQUFNLEtBQUssS0FBSyxHQUFHO0FBQ2pDLFVBQU0sT0FBTyxXQUFXLE1BQU0sTUFBTSxNQUFNLGlCQUFpQixHQUFHO0FBQzlELFVBQU0sS0FBSyxrQkFBa0IsSUFBSSxFQUFFO0FBQ25DLFFBQUksTUFBTSxJQUFJLEVBQUcsUUFBTyxFQUFFLFNBQVMsTUFBTSxRQUFRLGlCQUFpQixNQUFNO0FBQ3hFLFdBQU87QUFBQSxNQUNILE9BQU8sMkJBQTJCLElBQUk7QUFBQSxNQUN0QztBQUFBLElBQ0o7QUFBQSxFQUNKO0FBR0EsUUFBTSxlQUE4RCxDQUFDO0FBQ3JFLE1BQUksTUFBTSxlQUFlLE1BQU0sWUFBWSxLQUFLLEdBQUc7QUFDL0MsaUJBQWEsS0FBSyxDQUFDLHdCQUF3QixZQUFZLFdBQVcsTUFBTSxhQUFjLE1BQU0saUJBQWlCLEdBQUcsQ0FBQyxDQUFDO0FBQUEsRUFDdEgsV0FBVyxNQUFNLDRCQUE0QjtBQUN6QyxpQkFBYSxLQUFLLENBQUMsb0JBQW9CLE1BQU0sMEJBQTBCLENBQUM7QUFBQSxFQUM1RTtBQUNBLGFBQVcsQ0FBQyxRQUFRLEdBQUcsS0FBSyxjQUFjO0FBQ3RDLFFBQUk7QUFDSixRQUFJO0FBQ0Esb0JBQWMsTUFBTSxJQUFJO0FBQUEsSUFDNUIsU0FBUyxLQUFLO0FBQ1YsWUFBTSxLQUFLLEdBQUcsTUFBTSxLQUFLLE9BQU8sR0FBRyxDQUFDLEVBQUU7QUFDdEM7QUFBQSxJQUNKO0FBQ0EsUUFBSSxDQUFDLGFBQWE7QUFDZCxZQUFNLEtBQUssR0FBRyxNQUFNLGtCQUFrQjtBQUN0QztBQUFBLElBQ0o7QUFDQSxlQUFXLFFBQVEseUJBQXlCLGFBQWEsVUFBVSxHQUFHLEdBQUc7QUFDckUsWUFBTSxLQUFLLEdBQUcsTUFBTSxLQUFLLFdBQVcsTUFBTSxJQUFJLEVBQUU7QUFDaEQsVUFBSSxNQUFNLElBQUksRUFBRyxRQUFPLEVBQUUsU0FBUyxNQUFNLFFBQVEsTUFBTTtBQUFBLElBQzNEO0FBQUEsRUFDSjtBQUdBLGFBQVcsUUFBUSxpQkFBaUIsS0FBSyxRQUFRLEdBQUc7QUFDaEQsVUFBTSxLQUFLLFNBQVMsSUFBSSxFQUFFO0FBQzFCLFFBQUksTUFBTSxJQUFJLEVBQUcsUUFBTyxFQUFFLFNBQVMsTUFBTSxRQUFRLFFBQVEsTUFBTTtBQUFBLEVBQ25FO0FBQ0EsU0FBTyxFQUFFLE9BQU8sbUJBQW1CLE1BQU07QUFDN0M7QUFFTyxTQUFTLFdBQVcsR0FBeUM7QUFDaEUsU0FBUSxFQUFlLFlBQVk7QUFDdkM7OztBQ3BKTyxJQUFNLGNBQWM7QUFBQSxFQUN2QjtBQUFBLEVBQVU7QUFBQSxFQUFlO0FBQUEsRUFBYztBQUFBLEVBQWE7QUFBQSxFQUFtQjtBQUFBLEVBQ3ZFO0FBQUEsRUFBb0I7QUFDeEI7QUFHTyxJQUFNLGVBQWUsQ0FBQyxpQkFBaUIsc0JBQXNCO0FBSzdELFNBQVMsZUFBZSxPQUFtRDtBQUM5RSxRQUFNLFNBQWdCLFVBQVUsaUJBQWlCLFlBQVksS0FBSztBQUNsRSxRQUFNLE1BQXNCLENBQUM7QUFDN0IsYUFBVyxPQUFPLGFBQWE7QUFDM0IsVUFBTSxRQUFRLE9BQU8sSUFBSSxHQUFHO0FBQzVCLFFBQUksVUFBVSxPQUFXLEtBQUksR0FBRyxJQUFJO0FBQUEsRUFDeEM7QUFDQSxTQUFPO0FBQ1g7QUFPTyxTQUFTLGVBQWUsT0FBbUQ7QUFDOUUsUUFBTSxTQUFnQixVQUFVLGlCQUFpQixZQUFZLEtBQUs7QUFDbEUsU0FBTyxFQUFFLE1BQU0sT0FBTyxJQUFZLE1BQU0sS0FBSyxJQUFJLGFBQWEsT0FBTyxJQUFZLGFBQWEsS0FBSyxHQUFHO0FBQzFHO0FBRU8sU0FBUyxhQUFhLE9BQWlEO0FBQzFFLFNBQU8sYUFBYSxLQUFLLENBQUMsUUFBUSxNQUFNLHFCQUFxQixHQUFHLENBQUM7QUFDckU7OztBQ3BCTyxTQUFTLGFBQWEsV0FBMkIsWUFBOEM7QUFDbEcsUUFBTSxTQUFTLENBQUMsR0FBRyxTQUFTLEVBQUUsS0FBSyxDQUFDLEdBQUcsTUFBTSxFQUFFLE9BQU8sRUFBRSxJQUFJO0FBQzVELE1BQUk7QUFDSixhQUFXLEtBQUssT0FBUSxLQUFJLEVBQUUsUUFBUSxXQUFZLFFBQU87QUFDekQsU0FBTyxRQUFRLE9BQU8sQ0FBQztBQUMzQjtBQUdPLFNBQVMsb0JBQW9CLFFBQXdIO0FBQ3hKLFFBQU0sT0FBTyxvQkFBSSxJQUEwQjtBQUMzQyxhQUFXLFFBQVEsUUFBUTtBQUN2QixVQUFNLE9BQU8sS0FBSyxTQUFTO0FBQzNCLFFBQUksS0FBSyxTQUFTLFlBQVksK0JBQStCLFFBQVEsT0FBTyxLQUFLLENBQUMsTUFBTSxVQUFVO0FBQzlGLFdBQUssSUFBSSxLQUFLLENBQUMsR0FBRyxFQUFFLE1BQU0sS0FBSyxNQUFNLE1BQU0sTUFBTSxJQUFJLEtBQUssQ0FBQyxFQUFFLENBQUM7QUFBQSxJQUNsRTtBQUFBLEVBQ0o7QUFDQSxTQUFPLENBQUMsR0FBRyxLQUFLLE9BQU8sQ0FBQztBQUM1Qjs7O0FDeEJPLElBQU0sc0JBQXNCO0FBRW5DLGVBQWUsTUFBc0M7QUFDakQsUUFBTSxNQUFhLFdBQVcsYUFBd0IsbUJBQW1CO0FBQ3pFLE1BQUksQ0FBQyxJQUFLLFFBQU87QUFDakIsU0FBTyxJQUFJLFdBQVcsSUFBSSxVQUFVLE1BQU0sSUFBSSxTQUFTO0FBQzNEO0FBR0EsZUFBc0Isa0JBQWtCLFVBQW9EO0FBQ3hGLFFBQU0sZ0JBQWdCLE1BQU0sSUFBSSxJQUFJO0FBQ3BDLFNBQU8sY0FBYyx5QkFBeUIsUUFBUSxHQUFHLFFBQVE7QUFDckU7OztBQ2xCQSxJQUFNLFFBQXFDO0FBQUEsRUFDdkMsVUFBVTtBQUFBLEVBQWdCLFNBQVM7QUFBQSxFQUFZLFNBQVM7QUFBQSxFQUFtQixPQUFPO0FBQ3RGO0FBR08sSUFBTSxhQUFOLE1BQThDO0FBQUEsRUFDeEM7QUFBQSxFQUNULFFBQXFCO0FBQUEsRUFFckIsY0FBYztBQUNWLFNBQUssT0FBYyxPQUFPLG9CQUFvQixrQ0FBb0QsR0FBRztBQUNyRyxTQUFLLEtBQUssT0FBTztBQUNqQixTQUFLLEtBQUssVUFBVTtBQUNwQixTQUFLLElBQUksU0FBUztBQUNsQixTQUFLLEtBQUssS0FBSztBQUFBLEVBQ25CO0FBQUEsRUFFQSxJQUFJQyxRQUFvQixRQUF1QjtBQUMzQyxTQUFLLFFBQVFBO0FBQ2IsU0FBSyxLQUFLLE9BQU8sR0FBRyxNQUFNQSxNQUFLLENBQUM7QUFDaEMsU0FBSyxLQUFLLFVBQVUsYUFBYUEsTUFBSyxHQUFHLFNBQVMsV0FBTSxNQUFNLEtBQUssRUFBRTtBQUNyRSxTQUFLLEtBQUssa0JBQWtCQSxXQUFVLFVBQ2hDLElBQVcsV0FBVywrQkFBK0IsSUFBSTtBQUFBLEVBQ25FO0FBQUEsRUFFQSxVQUFnQjtBQUNaLFNBQUssS0FBSyxRQUFRO0FBQUEsRUFDdEI7QUFDSjs7O0FObkJBLFNBQVMsT0FBdUQ7QUFDNUQsUUFBTSxPQUFVLGdCQUFpQixXQUFRLFdBQU8sR0FBRyxlQUFlLENBQUM7QUFDbkUsU0FBTztBQUFBLElBQ0g7QUFBQSxJQUNBLElBQUksS0FBYTtBQUNiLFlBQU0sT0FBWSxXQUFLLE1BQU0sR0FBRztBQUNoQyxNQUFHLGNBQWUsY0FBUSxJQUFJLEdBQUcsRUFBRSxXQUFXLEtBQUssQ0FBQztBQUNwRCxNQUFHLGtCQUFjLE1BQU0sZUFBZSxFQUFFLE1BQU0sSUFBTSxDQUFDO0FBQ3JELGFBQU87QUFBQSxJQUNYO0FBQUEsRUFDSjtBQUNKO0FBQUEsSUFFQSwyQkFBUyxxQkFBcUIsTUFBTTtBQUNoQyxtQ0FBVyxNQUFXLE1BQU0sQ0FBQztBQUU3QiwyQkFBRyx3RUFBd0UsWUFBWTtBQUNuRixVQUFNLElBQUksS0FBSztBQUNmLFVBQU0sV0FBVyxFQUFFLElBQUksaUJBQWlCO0FBQ3hDLFVBQU0sT0FBTyxFQUFFLElBQUksbUJBQW1CO0FBQ3RDLE1BQUUsSUFBSSxpQkFBaUI7QUFDdkIsVUFBTSxTQUFTLEVBQUUsSUFBSSxrQkFBa0I7QUFDdkMsVUFBTSxJQUFJLE1BQU0sY0FBYztBQUFBLE1BQzFCLE1BQU07QUFBQSxNQUFVLGFBQWtCLFdBQUssRUFBRSxNQUFNLGlCQUFpQjtBQUFBLE1BQ2hFLEtBQUssRUFBRSxNQUFXLGNBQVEsTUFBTSxFQUFFO0FBQUEsTUFBRyxVQUFVO0FBQUEsSUFDbkQsQ0FBQztBQUNELHVCQUFBQyxPQUFPLEdBQUcsV0FBVyxDQUFDLENBQUM7QUFDdkIsdUJBQUFBLE9BQU8sTUFBTSxFQUFFLFNBQVMsUUFBUTtBQUNoQyx1QkFBQUEsT0FBTyxNQUFNLEVBQUUsUUFBUSxlQUFlO0FBQ3RDLHVCQUFBQSxPQUFPLFNBQVMsRUFBRSxTQUFTLElBQUk7QUFBQSxFQUNuQyxDQUFDO0FBRUQsMkJBQUcsNkVBQTZFLFlBQVk7QUFDeEYsVUFBTSxJQUFJLEtBQUs7QUFDZixVQUFNLFNBQVMsRUFBRSxJQUFJLGtCQUFrQjtBQUN2QyxVQUFNLElBQUksTUFBTSxjQUFjLEVBQUUsTUFBVyxXQUFLLEVBQUUsTUFBTSxTQUFTLEdBQUcsS0FBSyxFQUFFLE1BQVcsY0FBUSxNQUFNLEVBQUUsR0FBRyxVQUFVLFFBQVEsQ0FBQztBQUM1SCx1QkFBQUEsT0FBTyxHQUFHLENBQUMsV0FBVyxDQUFDLENBQUM7QUFDeEIsdUJBQUFBLE9BQU8sTUFBTSxFQUFFLE9BQU8sb0NBQW9DO0FBQUEsRUFDOUQsQ0FBQztBQUVELDJCQUFHLG9EQUFvRCxNQUFNO0FBQ3pELHVCQUFBQSxPQUFPLE1BQU0sV0FBVyx5Q0FBeUMsS0FBSyxHQUFHLHdCQUF3QjtBQUNqRyx1QkFBQUEsT0FBTyxNQUFNLFdBQVcsc0JBQXNCLEtBQUssR0FBRyx3QkFBd0I7QUFDOUUsdUJBQUFBLE9BQU8sTUFBTSxXQUFXLGNBQWMsR0FBUSxXQUFRLFlBQVEsR0FBRyxZQUFZLENBQUM7QUFDOUUsdUJBQUFBLE9BQU8sTUFBTSxXQUFXLGtCQUFrQixRQUFXLEVBQUUsT0FBTyxLQUFLLENBQUMsR0FBRyxNQUFNO0FBQUEsRUFDakYsQ0FBQztBQUVELDJCQUFHLHVEQUF1RCxZQUFZO0FBQ2xFLFVBQU0sSUFBSSxLQUFLO0FBQ2YsVUFBTSxTQUFTLEVBQUUsSUFBSSxpQkFBaUI7QUFDdEMsVUFBTSxTQUFTLEVBQUUsSUFBSSxtQkFBbUI7QUFDeEMsVUFBTSxTQUFTLEVBQUUsSUFBSSxrQkFBa0I7QUFDdkMsUUFBSSxRQUFRO0FBQ1osVUFBTSxJQUFJLE1BQU0sY0FBYztBQUFBLE1BQzFCLGFBQWE7QUFBQSxNQUFRLEtBQUssRUFBRSxNQUFXLGNBQVEsTUFBTSxFQUFFO0FBQUEsTUFBRyxVQUFVO0FBQUEsTUFDcEUsNEJBQTRCLFlBQVk7QUFBRSxnQkFBUTtBQUFNLGVBQU87QUFBQSxNQUFXO0FBQUEsSUFDOUUsQ0FBQztBQUNELHVCQUFBQSxPQUFPLEdBQUcsV0FBVyxDQUFDLENBQUM7QUFDdkIsdUJBQUFBLE9BQU8sTUFBTSxFQUFFLFNBQVMsTUFBTTtBQUM5Qix1QkFBQUEsT0FBTyxNQUFNLEVBQUUsUUFBUSxzQkFBc0I7QUFDN0MsdUJBQUFBLE9BQU8sTUFBTSxPQUFPLE9BQU8sb0VBQW9FO0FBQUEsRUFDbkcsQ0FBQztBQUVELDJCQUFHLG9FQUFvRSxZQUFZO0FBQy9FLFVBQU0sSUFBSSxLQUFLO0FBQ2YsVUFBTSxTQUFTLEVBQUUsSUFBSSxpQkFBaUI7QUFDdEMsVUFBTSxTQUFTLEVBQUUsSUFBSSxrQkFBa0I7QUFDdkMsSUFBSyxNQUFNLFdBQVcsa0JBQWtCLElBQUk7QUFBQSxNQUN4QyxVQUFVO0FBQUEsTUFDVixTQUFTLEVBQUUsY0FBYyxFQUFFLDBCQUEwQixPQUFPLEVBQUUsSUFBSSxLQUFLLE1BQU0sT0FBTyxHQUFHLEVBQUU7QUFBQSxJQUM3RjtBQUNBLFVBQU0sSUFBSSxNQUFNLGNBQWMsRUFBRSxLQUFLLEVBQUUsTUFBTSxHQUFHLEdBQUcsVUFBVSxTQUFTLDRCQUE0QixNQUFNLGtCQUFrQixFQUFFLENBQUM7QUFDN0gsdUJBQUFBLE9BQU8sR0FBRyxXQUFXLENBQUMsQ0FBQztBQUN2Qix1QkFBQUEsT0FBTyxNQUFNLEVBQUUsU0FBUyxNQUFNO0FBQzlCLHVCQUFBQSxPQUFPLE1BQU0sRUFBRSxRQUFRLGtCQUFrQjtBQUFBLEVBQzdDLENBQUM7QUFFRCwyQkFBRyw0REFBNEQsWUFBWTtBQUN2RSxRQUFJLFlBQVk7QUFDaEIsSUFBSyxNQUFNLFdBQVcsa0JBQWtCLElBQUk7QUFBQSxNQUN4QyxVQUFVO0FBQUEsTUFDVixVQUFVLFlBQVk7QUFBRSxvQkFBWTtBQUFNLGVBQU8sRUFBRSxjQUFjLEVBQUUsMEJBQTBCLE9BQU8sRUFBRSxJQUFJLEtBQUssTUFBTSxnQkFBZ0IsR0FBRyxFQUFFO0FBQUEsTUFBRztBQUFBLElBQ2pKO0FBQ0EsdUJBQUFBLE9BQU8sTUFBTSxNQUFNLGtCQUFrQixHQUFHLGVBQWU7QUFDdkQsdUJBQUFBLE9BQU8sR0FBRyxTQUFTO0FBQUEsRUFDdkIsQ0FBQztBQUVELDJCQUFHLGlFQUFpRSxZQUFZO0FBQzVFLHVCQUFBQSxPQUFPLE1BQU0sTUFBTSxrQkFBa0IsR0FBRyxNQUFTO0FBQUEsRUFDckQsQ0FBQztBQUVELDJCQUFHLHVFQUF1RSxNQUFNO0FBQzVFLFVBQU0sSUFBSSxLQUFLO0FBQ2YsTUFBRSxJQUFJLGdCQUFnQjtBQUN0QixVQUFNLElBQUkseUJBQThCLFdBQUssRUFBRSxNQUFNLEtBQUssR0FBRyxTQUFTLENBQUMsQ0FBQztBQUN4RSx1QkFBQUEsT0FBTyxNQUFNLEVBQUUsQ0FBQyxHQUFRLFdBQUssRUFBRSxNQUFNLGtCQUFrQixDQUFDO0FBQUEsRUFDNUQsQ0FBQztBQUVELDJCQUFHLG9EQUFvRCxNQUFNO0FBQ3pELFVBQU0sSUFBSSx5QkFBeUIsdUJBQXVCLFNBQVMsRUFBRSxTQUFTLFlBQVksQ0FBQztBQUMzRix1QkFBQUEsT0FBTyxHQUFHLEVBQUUsU0FBUyxnQ0FBZ0MsQ0FBQztBQUN0RCx1QkFBQUEsT0FBTyxHQUFHLEVBQUUsU0FBUyx1QkFBdUIsQ0FBQztBQUFBLEVBQ2pELENBQUM7QUFFRCwyQkFBRywyREFBMkQsWUFBWTtBQUN0RSxVQUFNLElBQUksS0FBSztBQUNmLFVBQU0sU0FBUyxFQUFFLElBQUksaUJBQWlCO0FBQ3RDLFVBQU0sU0FBUyxFQUFFLElBQUksa0JBQWtCO0FBQ3ZDLFVBQU0sSUFBSSxNQUFNLGNBQWMsRUFBRSxhQUFhLFFBQVEsS0FBSyxFQUFFLE1BQU0sZ0JBQXFCLGNBQVEsTUFBTSxDQUFDLEdBQUcsR0FBRyxVQUFVLFFBQVEsQ0FBQztBQUMvSCx1QkFBQUEsT0FBTyxHQUFHLFdBQVcsQ0FBQyxDQUFDO0FBQ3ZCLHVCQUFBQSxPQUFPLE1BQU0sRUFBRSxTQUFTLE1BQU07QUFDOUIsdUJBQUFBLE9BQU8sTUFBTSxFQUFFLFFBQVEsTUFBTTtBQUM3Qix1QkFBQUEsT0FBTyxHQUFHLEVBQUUsTUFBTSxLQUFLLENBQUMsTUFBTSxFQUFFLFNBQWMsV0FBSyxFQUFFLE1BQU0sbUJBQW1CLENBQUMsQ0FBQyxDQUFDO0FBQUEsRUFDckYsQ0FBQztBQUVELDJCQUFHLDZDQUE2QyxZQUFZO0FBQ3hELFVBQU0sSUFBSSxLQUFLO0FBQ2YsVUFBTSxRQUFhLFdBQUssRUFBRSxNQUFNLFlBQVk7QUFDNUMsSUFBRyxjQUFlLGNBQVEsS0FBSyxHQUFHLEVBQUUsV0FBVyxLQUFLLENBQUM7QUFDckQsSUFBRyxrQkFBYyxPQUFPLElBQUksRUFBRSxNQUFNLElBQU0sQ0FBQztBQUMzQyxVQUFNLE9BQU8sRUFBRSxJQUFJLFlBQVk7QUFDL0IsVUFBTSxJQUFJLE1BQU0sY0FBYyxFQUFFLEtBQUssRUFBRSxNQUFNLEdBQVEsY0FBUSxLQUFLLENBQUMsSUFBUyxjQUFRLElBQUksQ0FBQyxHQUFHLEdBQUcsVUFBVSxRQUFRLENBQUM7QUFDbEgsdUJBQUFBLE9BQU8sR0FBRyxXQUFXLENBQUMsQ0FBQztBQUN2Qix1QkFBQUEsT0FBTyxNQUFNLEVBQUUsU0FBUyxJQUFJO0FBQUEsRUFDaEMsQ0FBQztBQUVELDJCQUFHLGlEQUFpRCxZQUFZO0FBQzVELFVBQU0sSUFBSSxNQUFNLGNBQWMsRUFBRSxLQUFLLEVBQUUsTUFBTSxlQUFlLEdBQUcsVUFBVSxTQUFTLDRCQUE0QixZQUFZO0FBQUUsWUFBTSxJQUFJLE1BQU0sUUFBUTtBQUFBLElBQUcsRUFBRSxDQUFDO0FBQzFKLHVCQUFBQSxPQUFPLEdBQUcsQ0FBQyxXQUFXLENBQUMsQ0FBQztBQUN4Qix1QkFBQUEsT0FBTyxNQUFNLEVBQUUsT0FBTyxpQkFBaUI7QUFDdkMsdUJBQUFBLE9BQU8sTUFBTSxFQUFFLE9BQU8seUNBQXlDO0FBQy9ELHVCQUFBQSxPQUFPLEdBQUcsRUFBRSxNQUFNLEtBQUssQ0FBQyxNQUFNLEVBQUUsV0FBVyxpQ0FBaUMsQ0FBQyxDQUFDO0FBQUEsRUFDbEYsQ0FBQztBQUNMLENBQUM7QUFBQSxJQUVELDJCQUFTLFlBQVksTUFBTTtBQUN2QixtQ0FBVyxNQUFXLE1BQU0sQ0FBQztBQUU3QiwyQkFBRyxzREFBc0QsTUFBTTtBQUMzRCxJQUFLLE1BQU07QUFBQSxNQUNQLG1CQUFtQjtBQUFBLE1BQVMsd0JBQXdCLENBQUMsTUFBTTtBQUFBLE1BQUcsdUJBQXVCLENBQUMsTUFBTTtBQUFBLE1BQzVGLHNCQUFzQjtBQUFBLE1BQVEsNEJBQTRCO0FBQUEsTUFBTyxzQkFBc0I7QUFBQSxNQUN2Riw2QkFBNkI7QUFBQSxNQUFHLGtCQUFrQixFQUFFLFFBQVEsRUFBRTtBQUFBLE1BQzlELGlCQUFpQjtBQUFBLE1BQU0sd0JBQXdCO0FBQUEsTUFBTSx5QkFBeUI7QUFBQSxJQUNsRixDQUFDO0FBQ0QsdUJBQUFBLE9BQU8sVUFBVSxlQUFlLEdBQUc7QUFBQSxNQUMvQixRQUFRO0FBQUEsTUFBUyxhQUFhLENBQUMsTUFBTTtBQUFBLE1BQUcsWUFBWSxDQUFDLE1BQU07QUFBQSxNQUFHLFdBQVc7QUFBQSxNQUN6RSxpQkFBaUI7QUFBQSxNQUFPLFdBQVc7QUFBQSxNQUFNLGtCQUFrQjtBQUFBLE1BQUcsT0FBTyxFQUFFLFFBQVEsRUFBRTtBQUFBLElBQ3JGLENBQUM7QUFDRCx1QkFBQUEsT0FBTyxVQUFVLGVBQWUsR0FBRyxFQUFFLE1BQU0sTUFBTSxhQUFhLEtBQUssQ0FBQztBQUFBLEVBQ3hFLENBQUM7QUFFRCwyQkFBRywrREFBK0QsTUFBTTtBQUNwRSxJQUFLLE1BQU0sRUFBRSx1QkFBdUIsS0FBSyxDQUFDO0FBQzFDLHVCQUFBQSxPQUFPLFVBQVUsZUFBZSxHQUFHLEVBQUUsWUFBWSxLQUFLLENBQUM7QUFDdkQsdUJBQUFBLE9BQU8sVUFBVSxlQUFlLEdBQUcsRUFBRSxNQUFNLElBQUksYUFBYSxHQUFHLENBQUM7QUFBQSxFQUNwRSxDQUFDO0FBRUQsMkJBQUcscUVBQXFFLE1BQU07QUFDMUUsVUFBTSxXQUFXLEtBQUssTUFBUyxpQkFBa0IsV0FBSyxXQUFXLG9CQUFvQixHQUFHLE1BQU0sQ0FBQztBQUMvRixVQUFNLFFBQVEsT0FBTyxLQUFLLFNBQVMsWUFBWSxjQUFjLFVBQVU7QUFDdkUsZUFBVyxPQUFPLFlBQWEsb0JBQUFBLE9BQU8sR0FBRyxNQUFNLFNBQVMsWUFBWSxHQUFHLEVBQUUsR0FBRyxHQUFHO0FBQy9FLGVBQVcsT0FBTyxDQUFDLGlCQUFpQix3QkFBd0IsdUJBQXVCLEVBQUcsb0JBQUFBLE9BQU8sR0FBRyxNQUFNLFNBQVMsR0FBRyxHQUFHLEdBQUc7QUFDeEgsVUFBTSxTQUFZLGlCQUFrQixXQUFLLFdBQVcsb0JBQW9CLEdBQUcsTUFBTTtBQUNqRixlQUFXLE9BQU8sWUFBYSxvQkFBQUEsT0FBTyxHQUFHLE9BQU8sU0FBUyxPQUFPLEdBQUcsSUFBSSxHQUFHLGdCQUFnQixHQUFHLEVBQUU7QUFBQSxFQUNuRyxDQUFDO0FBRUQsMkJBQUcsa0VBQWtFLE1BQU07QUFDdkUsVUFBTSxRQUFRLENBQUMsVUFBb0IsRUFBRSxzQkFBc0IsQ0FBQyxNQUFjLEtBQUssU0FBUyxDQUFDLEVBQUU7QUFDM0YsdUJBQUFBLE9BQU8sR0FBRyxhQUFhLE1BQU0sQ0FBQyxlQUFlLENBQUMsQ0FBVSxDQUFDO0FBQ3pELHVCQUFBQSxPQUFPLEdBQUcsYUFBYSxNQUFNLENBQUMsc0JBQXNCLENBQUMsQ0FBVSxDQUFDO0FBQ2hFLHVCQUFBQSxPQUFPLEdBQUcsQ0FBQyxhQUFhLE1BQU0sQ0FBQyxpQkFBaUIsQ0FBQyxDQUFVLENBQUM7QUFBQSxFQUNoRSxDQUFDO0FBQ0wsQ0FBQztBQUFBLElBRUQsMkJBQVMsMEJBQTBCLE1BQU07QUFDckMsbUNBQVcsTUFBVyxNQUFNLENBQUM7QUFFN0IsMkJBQUcsOENBQThDLE1BQU07QUFDbkQsVUFBTSxJQUFJLElBQUksV0FBVztBQUN6QixVQUFNLE9BQVksTUFBTSxZQUFZLENBQUM7QUFDckMsdUJBQUFBLE9BQU8sR0FBRyxLQUFLLE9BQU87QUFDdEIsdUJBQUFBLE9BQU8sTUFBTSxLQUFLLFNBQVMscUJBQXFCO0FBQ2hELHVCQUFBQSxPQUFPLE1BQU0sS0FBSyxNQUFNLFVBQVU7QUFDbEMsZUFBV0MsVUFBUyxDQUFDLFlBQVksV0FBVyxXQUFXLE9BQU8sR0FBWTtBQUN0RSxRQUFFLElBQUlBLFFBQU8sUUFBUTtBQUNyQix5QkFBQUQsT0FBTyxNQUFNLE9BQU8sS0FBSyxPQUFPLEdBQUcsSUFBSSxPQUFPLGFBQWFDLE1BQUssRUFBRSxDQUFDO0FBQUEsSUFDdkU7QUFDQSx1QkFBQUQsT0FBTyxHQUFHLEtBQUssZUFBZTtBQUM5QixNQUFFLElBQUksU0FBUztBQUNmLHVCQUFBQSxPQUFPLE1BQU0sS0FBSyxpQkFBaUIsTUFBUztBQUM1Qyx1QkFBQUEsT0FBTyxNQUFNLEtBQUssTUFBTSxhQUFhO0FBQUEsRUFDekMsQ0FBQztBQUVELDJCQUFHLDZDQUE2QyxNQUFNO0FBQ2xELFVBQU0sU0FBUztBQUFBLE1BQ1gsRUFBRSxPQUFPLEVBQUUsT0FBTyxFQUFFLE1BQU0sRUFBRSxFQUFFLEdBQUcsU0FBUyxFQUFFLFNBQVMseUJBQXlCLFdBQVcsQ0FBQyxLQUFLLE9BQU8sVUFBVSxFQUFFLEVBQUU7QUFBQSxNQUNwSCxFQUFFLE9BQU8sRUFBRSxPQUFPLEVBQUUsTUFBTSxFQUFFLEVBQUUsR0FBRyxTQUFTLEVBQUUsU0FBUyw2QkFBNkIsV0FBVyxDQUFDLEtBQUssS0FBSyxFQUFFLEVBQUU7QUFBQSxNQUM1RyxFQUFFLE9BQU8sRUFBRSxPQUFPLEVBQUUsTUFBTSxHQUFHLEVBQUUsR0FBRyxTQUFTLEVBQUUsU0FBUyw2QkFBNkIsV0FBVyxDQUFDLEtBQUssS0FBSyxFQUFFLEVBQUU7QUFBQSxJQUNqSDtBQUNBLFVBQU0sWUFBWSxvQkFBb0IsTUFBTTtBQUM1Qyx1QkFBQUEsT0FBTyxVQUFVLFVBQVUsSUFBSSxDQUFDLE1BQU0sRUFBRSxFQUFFLEdBQUcsQ0FBQyxPQUFPLEtBQUssQ0FBQztBQUMzRCx1QkFBQUEsT0FBTyxNQUFNLGFBQWEsV0FBVyxDQUFDLEdBQUcsSUFBSSxLQUFLO0FBQ2xELHVCQUFBQSxPQUFPLE1BQU0sYUFBYSxXQUFXLEVBQUUsR0FBRyxJQUFJLEtBQUs7QUFDbkQsdUJBQUFBLE9BQU8sTUFBTSxhQUFhLFdBQVcsRUFBRSxHQUFHLElBQUksS0FBSztBQUNuRCx1QkFBQUEsT0FBTyxNQUFNLGFBQWEsQ0FBQyxHQUFHLENBQUMsR0FBRyxNQUFTO0FBQUEsRUFDL0MsQ0FBQztBQUNMLENBQUM7QUFBQSxJQUVELDJCQUFTLGtCQUFrQixNQUFNO0FBQzdCLDJCQUFHLGtEQUFrRCxNQUFNO0FBQ3ZELFVBQU0sTUFBTSxDQUFDLGdCQUFnQixhQUFhLEVBQUUsSUFBSSxDQUFDLE1BQVMsaUJBQWtCLFdBQUssV0FBVyxhQUFhLENBQUMsR0FBRyxNQUFNLENBQUMsRUFBRSxLQUFLLElBQUk7QUFDL0gsVUFBTSxhQUFhLENBQUMsR0FBRyxJQUFJLFNBQVMsZ0NBQWdDLENBQUMsRUFBRSxJQUFJLENBQUMsTUFBTSxFQUFFLENBQUMsQ0FBQztBQUN0Rix1QkFBQUEsT0FBTyxVQUFVLFdBQVcsS0FBSyxHQUFHLENBQUMsMEJBQTBCLHFCQUFxQixDQUFDO0FBQUEsRUFDekYsQ0FBQztBQUNMLENBQUM7IiwKICAibmFtZXMiOiBbImZzIiwgIm9zIiwgInBhdGgiLCAic3RhdGUiLCAiYXNzZXJ0IiwgInN0YXRlIl0KfQo=
