-- nvim_client.lua: drives `xpuify lsp` from a real editor (Neovim 0.7 headless; after the working client in
-- the project's LSP notes). Waits for diagnostics, applies the quick fix of the first XPU202 finding, waits for
-- the re-published diagnostics, then applies source.fixAll.xpuify the same way, and writes what happened to
-- OUT (lines: "step: title", "before N", "after M", then the buffer). Usage:
--   LSP_CMD="xpuify lsp" OUT=result.txt nvim --headless -u NONE -c "luafile nvim_client.lua" FILE
local buf, raw = vim.api.nvim_get_current_buf(), nil
local out = {}
local function finish(msg)
  if msg then table.insert(out, 'error: ' .. msg) end
  vim.list_extend(out, { '--- buffer' })
  vim.list_extend(out, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  vim.fn.writefile(out, os.getenv('OUT'))
  vim.cmd('qall!')
end
local id = vim.lsp.start_client({ name = 'xpuify', root_dir = vim.fn.getcwd(),
  cmd = vim.split(os.getenv('LSP_CMD'), ' '),
  handlers = { ['textDocument/publishDiagnostics'] = function(e, r, ctx, cfg)
    raw = r.diagnostics  -- the raw LSP dicts: the codeAction context echoes them
    return vim.lsp.diagnostic.on_publish_diagnostics(e, r, ctx, cfg) end } })
vim.lsp.buf_attach_client(buf, id)
if not vim.wait(15000, function() return raw and #raw > 0 end, 20) then return finish('no diagnostics') end
local c = vim.lsp.get_client_by_id(id)

local function apply(step, range, diags, only)
  local res = c.request_sync('textDocument/codeAction', {
    textDocument = vim.lsp.util.make_text_document_params(buf), range = range,
    context = { diagnostics = diags, only = only } }, 10000, buf)
  if not res or res.err or not res.result or not res.result[1] then return false end
  local a = res.result[1]
  local n = #raw
  vim.lsp.util.apply_workspace_edit(a.edit, c.offset_encoding)  -- nvim sends the incremental didChange
  vim.wait(10000, function() return #raw < n end, 20)
  vim.list_extend(out, { step .. ': ' .. a.title, 'before ' .. n, 'after ' .. #raw })
  return true
end

local target
for _, d in ipairs(raw) do if d.code == 'XPU202' and not target then target = d end end
if not target then return finish('no XPU202 finding') end
if not apply('quickfix', target.range, { target }, { 'quickfix' }) then return finish('no quick fix') end
local whole = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }
if not apply('fixall', whole, {}, { 'source.fixAll.xpuify' }) then return finish('no fix-all') end
vim.lsp.stop_client(id)
finish()
