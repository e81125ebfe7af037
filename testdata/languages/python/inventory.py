"""Stock levels of a small shop."""

import logging

log = logging.getLogger(__name__)


def restock(items, threshold=5, batch=20):
    """Orders a batch of every item that runs low."""
    orders = []
    for name, count in items.items():
        if count >= threshold:
            continue
        wanted = batch - count
        if wanted > 100:
            log.warning("large order for %s: %d", name, wanted)
            wanted = 100
        orders.append({"item": name, "quantity": wanted})
    orders.sort(key=lambda order: order["quantity"], reverse=True)
    return orders


def total(orders):
    return sum(order["quantity"] for order in orders)
