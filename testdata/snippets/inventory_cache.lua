-- A small cache of inventory counts, refreshed from a loader.
local Cache = {}
Cache.__index = Cache

local DEFAULT_TTL = 30

function Cache.new(loader, ttl)
  local self = setmetatable({}, Cache)
  self.loader = loader
  self.ttl = ttl or DEFAULT_TTL
  self.entries = {}
  return self
end

function Cache:get(key, now)
  local entry = self.entries[key]
  if entry and now - entry.at < self.ttl then
    return entry.value
  end
  local ok, value = pcall(self.loader, key)
  if not ok then
    error(("loading %s failed: %s"):format(key, value))
  end
  self.entries[key] = { value = value, at = now }
  return value
end

function Cache:purge(now)
  local removed = 0
  for key, entry in pairs(self.entries) do
    if now - entry.at >= self.ttl then
      self.entries[key] = nil
      removed = removed + 1
    end
  end
  return removed
end

return Cache
