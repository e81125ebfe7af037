function summarizeOrders(orders, taxRate) {
  const totals = { count: 0, net: 0, tax: 0 };
  for (const order of orders) {
    if (order.status === "cancelled") {
      continue;
    }
    const net = order.items.reduce((sum, item) => sum + item.price * item.quantity, 0);
    totals.count += 1;
    totals.net += net;
    totals.tax += net * taxRate;
  }
  totals.average = totals.count ? totals.net / totals.count : 0;
  return totals;
}
