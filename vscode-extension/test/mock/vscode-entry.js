// `vscode` for the test bundles: the mock in vscode.ts, and a harmless stand-in class for
// every other name (vscode-languageclient extends and reads vscode classes when it loads).
const mock = require("./vscode");

function standIn(name) {
    const Base = { [name]: class {} }[name];
    return new Proxy(Base, {
        get(target, key) {
            if (key in target || typeof key === "symbol" || key === "then") return target[key];
            return standIn(`${name}.${String(key)}`);
        },
    });
}

const cache = new Map();
module.exports = new Proxy(mock, {
    get(target, key) {
        if (key in target || typeof key === "symbol" || key === "then" || key === "__esModule") return target[key];
        if (!cache.has(key)) cache.set(key, standIn(String(key)));
        return cache.get(key);
    },
});
