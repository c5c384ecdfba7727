-- Headless Neovim (0.7+) driving `parakern serve` as a user would: open a C file,
-- collect the diagnostics the server publishes and the code lenses it returns,
-- write them as JSON to $PARAKERN_NVIM_OUT and quit.
local out = os.getenv("PARAKERN_NVIM_OUT")
local file = os.getenv("PARAKERN_NVIM_FILE")
local python = os.getenv("PARAKERN_PYTHON") or "python3"
local wait_ms = tonumber(os.getenv("PARAKERN_NVIM_WAIT_MS") or "90000")

local received = { diagnostics = {}, lenses = {}, done = false }

local client_id = vim.lsp.start_client({
  name = "parakern",
  cmd = { python, "-m", "parakern", "serve" },
  root_dir = vim.fn.getcwd(),
  init_options = { caseDiagnostics = true },
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      table.insert(received.diagnostics, result)
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
    end,
  },
})

vim.cmd("edit " .. vim.fn.fnameescape(file))
vim.lsp.buf_attach_client(0, client_id)

-- Wait for the case diagnostics (information level, "case 1/..."), or for an error.
local function settled()
  for _, published in ipairs(received.diagnostics) do
    for _, d in ipairs(published.diagnostics) do
      if d.severity == 1 or string.find(d.message, "^case 1/") then
        return true
      end
    end
  end
  return false
end
vim.wait(wait_ms, settled, 100)

local params = { textDocument = vim.lsp.util.make_text_document_params() }
local responses = vim.lsp.buf_request_sync(0, "textDocument/codeLens", params, 30000) or {}
for _, response in pairs(responses) do
  for _, lens in ipairs(response.result or {}) do
    if lens.command == nil then
      local resolved = vim.lsp.buf_request_sync(0, "codeLens/resolve", lens, 30000) or {}
      for _, r in pairs(resolved) do
        if r.result then lens = r.result end
      end
    end
    table.insert(received.lenses, lens)
  end
end

local handle = io.open(out, "w")
handle:write(vim.fn.json_encode(received))
handle:close()
vim.lsp.stop_client(client_id)
vim.cmd("qall!")
