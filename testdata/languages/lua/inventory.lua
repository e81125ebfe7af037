-- Stock levels of a small shop.
local log = require("log")

local Inventory = {}
Inventory.__index = Inventory

function Inventory.new(items)
  return setmetatable({ items = items or {}, orders = {} }, Inventory)
end

-- Orders a batch of every item that runs low.
function Inventory:restock(threshold, batch)
  threshold = threshold or 5
  batch = batch or 20
  local orders = {}
  for name, count in pairs(self.items) do
    if count < threshold then
      local wanted = batch - count
      if wanted > 100 then
        log.warn(("large order for %s: %d"):format(name, wanted))
        wanted = 100
      end
      orders[#orders + 1] = { item = name, quantity = wanted }
    end
  end
  table.sort(orders, function(a, b) return a.quantity > b.quantity end)
  for _, order in ipairs(orders) do
    self.orders[#self.orders + 1] = order
  end
  return orders
end

function Inventory:total()
  local sum = 0
  for _, order in ipairs(self.orders) do
    sum = sum + order.quantity
  end
  return sum
end

function Inventory.load(path)
  local items = {}
  for line in io.lines(path) do
    local name, count = line:match("^(.-),(%d+)$")
    if name then items[name] = tonumber(count) end
  end
  return Inventory.new(items)
end

return Inventory
