# Stock levels of a small shop.

new_inventory <- function(items = list()) {
  structure(list(items = items, orders = data.frame()), class = "inventory")
}

# Orders a batch of every item that runs low.
restock <- function(inventory, threshold = 5, batch = 20) {
  orders <- data.frame(item = character(), quantity = integer())
  for (name in names(inventory$items)) {
    count <- inventory$items[[name]]
    if (count >= threshold) {
      next
    }
    wanted <- batch - count
    if (wanted > 100) {
      warning(sprintf("large order for %s: %d", name, wanted))
      wanted <- 100
    }
    orders <- rbind(orders, data.frame(item = name, quantity = wanted))
  }
  orders <- orders[order(orders$quantity, decreasing = TRUE), ]
  inventory$orders <- rbind(inventory$orders, orders)
  inventory
}

total <- function(inventory) {
  if (nrow(inventory$orders) == 0) return(0)
  sum(inventory$orders$quantity)
}

load_inventory <- function(path) {
  rows <- read.csv(path, header = FALSE, col.names = c("item", "count"))
  new_inventory(setNames(as.list(rows$count), rows$item))
}

print.inventory <- function(x, ...) {
  cat("Inventory of", length(x$items), "items and", nrow(x$orders), "orders\n")
  invisible(x)
}
