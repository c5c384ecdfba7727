#!/usr/bin/env bash
# The extension in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) with the built .vsix
# installed as a user installs it, a sample opened in a fresh profile, and headless Chromium
# (Debian's, through playwright-core, kept off the network) checking through the page what a
# user sees (drive.mjs). Screenshots of the hover and of the code action menu go to docs/.
#
#   bash vscode-extension/e2e/run.sh [VSIX]     (default: vscode-extension/parakern-<version>.vsix,
#                                                built with npm run package when missing)
#
# From nothing: the Debian packages it needs are installed with apt-get when missing (as root),
# code-server and playwright-core with npm (e2e/package-lock.json) in a temporary folder, the
# postinstall of code-server done by hand (it would download ripgrep from GitHub: Debian's is
# linked instead), parakern's .venv made when missing. It is skipped, saying why, only where
# that install is impossible (not root and packages missing, no apt-get, no Node 20, no registry).
# The built code-server is kept in ~/.cache/parakern-e2e (PARAKERN_E2E_CACHE) and reused by
# the next run on this machine; PARAKERN_E2E_FRESH=1 builds it again from the npm registry.
set -euo pipefail
e2e="$(cd "$(dirname "$0")" && pwd)"
ext="$(cd "$e2e/.." && pwd)"
repo="$(cd "$ext/.." && pwd)"
started=$(date +%s)
say() { echo "e2e: $(( $(date +%s) - started )) s  $*"; }
skip() { echo "e2e: SKIPPED: $*"; exit 0; }

work="$(mktemp -d /tmp/parakern-e2e.XXXXXX)"
server_pid=""
cleanup() {
  # code-server leaves its extension host (and the language server) running: end its process group
  if [ -n "$server_pid" ]; then kill -TERM -- "-$server_pid" 2>/dev/null || true; sleep 1; kill -KILL -- "-$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# ---------------------------------------------------------------- the machine
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)"
[ "$node_major" = 20 ] || skip "code-server 4.100.3 needs Node 20 (here: $node_major)"
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
{ command -v g++ && command -v make; } >/dev/null 2>&1 || missing+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
for dev in libsecret-1-dev libkrb5-dev libxkbfile-dev; do   # headers of code-server's native modules
  dpkg -s "$dev" >/dev/null 2>&1 || missing+=("$dev")
done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    || skip "needs the Debian packages ${missing[*]}, and cannot install them (not root, or no apt-get)"
  say "apt-get install ${missing[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >"$work/apt.log" 2>&1 \
    || skip "apt-get install ${missing[*]} failed: $(tail -n 2 "$work/apt.log" | tr '\n' ' ')"
fi

# ---------------------------------------------------------------- code-server and playwright-core
version_cs="$(node -p "require('$e2e/package.json').dependencies['code-server']")"
cache="${PARAKERN_E2E_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/parakern-e2e}"
install="$cache/code-server-$version_cs-node-abi$(node -p process.versions.modules)"
[ "${PARAKERN_E2E_FRESH:-}" = 1 ] && rm -rf "$install"
if [ ! -f "$install/.complete" ]; then
  build="$work/install"     # built aside, moved into the cache once complete
  cs="$build/node_modules/code-server"; vscode="$cs/lib/vscode"
  mkdir -p "$build"
  cp "$e2e/package.json" "$e2e/package-lock.json" "$build/"
  say "npm ci code-server playwright-core (no install scripts)"
  ( cd "$build" && npm ci --ignore-scripts --no-audit --no-fund ) >"$work/npm.log" 2>&1 \
    || skip "npm ci of code-server failed (is the npm registry reachable?): $(grep -m1 -i 'npm error' "$work/npm.log" || tail -n 1 "$work/npm.log")"
  ( cd "$vscode" && npm install --omit=dev --ignore-scripts --no-audit --no-fund ) >>"$work/npm.log" 2>&1 \
    || skip "npm install in code-server's lib/vscode failed: $(grep -m1 -i 'npm error' "$work/npm.log" || tail -n 1 "$work/npm.log")"
  ( cd "$vscode/extensions" && npm install --omit=dev --no-audit --no-fund ) >>"$work/npm.log" 2>&1 \
    || skip "npm install in code-server's lib/vscode/extensions failed: $(tail -n 1 "$work/npm.log")"
  # code-server's postinstall, by hand: native modules built with npm's own node-gyp against this
  # Node's headers (nothing downloaded), unoptimised (-O0: minutes less on two cores, and nothing
  # here is hot), Debian's ripgrep where @vscode/ripgrep would fetch one
  say "native modules (node-gyp), ripgrep, links"
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  nodedir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  [ -f "$nodedir/include/node/node.h" ] || nodedir=/usr
  export CFLAGS=-O0 CXXFLAGS=-O0
  # argon2 (loaded even with --auth none) through node-pre-gyp, which builds it here with --build-from-source
  ( cd "$build" && npm rebuild argon2 --build-from-source --nodedir="$nodedir" ) >"$work/gyp.log" 2>&1 \
    || { tail -n 20 "$work/gyp.log"; echo "e2e: building argon2 failed"; exit 1; }
  for module in @vscode/spdlog @vscode/deviceid native-watchdog node-pty kerberos; do
    ( cd "$vscode/node_modules/$module" && node "$gyp" rebuild --nodedir="$nodedir" -j 2 ) >"$work/gyp.log" 2>&1 \
      || { tail -n 20 "$work/gyp.log"; echo "e2e: building $module failed"; exit 1; }
  done
  unset CFLAGS CXXFLAGS
  mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin" && ln -sf "$(command -v rg)" "$vscode/node_modules/@vscode/ripgrep/bin/rg"
  ln -sfn node_modules "$vscode/node_modules.asar"
  ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
  ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
  touch "$build/.complete"
  mkdir -p "$cache" && rm -rf "$install" && mv "$build" "$install"
else
  say "code-server from $install"
fi
cs="$install/node_modules/code-server"
say "code-server $(node -p "require('$cs/package.json').version") installed"

# ---------------------------------------------------------------- parakern and the .vsix
python="$repo/.venv/bin/python"
if [ ! -x "$repo/.venv/bin/parakern" ]; then
  say "python3 -m venv .venv && pip install -e . (the server the extension starts)"
  ( cd "$repo" && python3 -m venv .venv && .venv/bin/pip install -q -e . ) >"$work/pip.log" 2>&1 \
    || { tail -n 20 "$work/pip.log"; echo "e2e: installing parakern failed"; exit 1; }
fi
version="$(node -p "require('$ext/package.json').version")"
vsix="${1:-$ext/parakern-$version.vsix}"
if [ ! -f "$vsix" ]; then
  say "npm run package (the .vsix)"
  ( cd "$ext" && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run package ) >"$work/package.log" 2>&1 \
    || { tail -n 30 "$work/package.log"; echo "e2e: npm run package failed"; exit 1; }
fi

# ---------------------------------------------------------------- a fresh profile, a sample, the server
profile="$work/profile"; workspace="$work/workspace"
mkdir -p "$profile/User" "$workspace"
cp "$repo/samples/matadd.c" "$repo/samples/metafork.h" "$workspace/"
cat >"$profile/User/settings.json" <<EOF
{
  "parakern.interpreter": "$python",
  "parakern.trace.server": "messages",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "chat.disableAIFeatures": true,
  "editor.hover.delay": 200
}
EOF
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' >"$work/config.yaml"
serve=(node "$cs/out/node/entry.js" --config "$work/config.yaml" --user-data-dir "$profile"
       --extensions-dir "$work/extensions" --disable-telemetry --disable-update-check --disable-workspace-trust
       --disable-getting-started-override)
"${serve[@]}" --install-extension "$vsix" >"$work/install-extension.log" 2>&1 \
  || { cat "$work/install-extension.log"; echo "e2e: code-server --install-extension failed"; exit 1; }
grep -q "was successfully installed" "$work/install-extension.log" || { cat "$work/install-extension.log"; exit 1; }
setsid "${serve[@]}" "$workspace" >"$work/code-server.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 300); do
  url="$(grep -o 'HTTP server listening on http://127.0.0.1:[0-9]*' "$work/code-server.log" | grep -o 'http://.*' || true)"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/code-server.log"; echo "e2e: code-server did not start"; exit 1; }
say "code-server on $url, $(basename "$vsix") installed"

# ---------------------------------------------------------------- the page
status=0
E2E_URL="$url/?folder=$workspace" E2E_WORKSPACE="$workspace" E2E_FILE=matadd.c E2E_SCHEDULE=matadd:0 \
E2E_USER_DATA="$profile" E2E_SHOTS="$repo/docs" E2E_MODULES="$install/node_modules" CHROMIUM="$(command -v chromium)" \
E2E_FAILURE="$repo/vscode-extension/e2e-failure" E2E_STARTED="$started" \
  timeout 240 node "$e2e/drive.mjs" || status=$?
if [ "$status" != 0 ]; then
  echo "e2e: failed (exit $status); code-server's log:"; tail -n 30 "$work/code-server.log"
  echo "e2e: the page where it failed: vscode-extension/e2e-failure-*.png"
fi
exit "$status"
