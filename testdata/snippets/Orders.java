package com.example.shop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Collects the orders of one customer.
 */
public class Orders {
    private final List<Order> placed = new ArrayList<>();
    private int limit = 25;

    public Orders(int limit) {
        this.limit = limit;
    }

    /**
     * Sums the open orders, in cents.
     */
    @Override
    public long openTotal(Map<String, Integer> discounts) throws IllegalStateException {
        long total = 0L;
        for (Order order : placed) {
            if (order.isClosed()) {
                continue;
            }
            int discount = discounts.getOrDefault(order.code(), 0);
            total += order.cents() * (100 - discount) / 100;
        }
        if (total > 1_000_000L) {
            throw new IllegalStateException("total too large: " + total);
        }
        return total;
    }

    private static <T extends Comparable<T>> T largest(List<T> items) {
        T best = null;
        for (var item : items) {
            if (best == null || item.compareTo(best) > 0) {
                best = item;
            }
        }
        return best;
    }

    @SuppressWarnings("unchecked")
    protected synchronized void add(Order order) {
        if (placed.size() >= limit) {
            throw new IllegalArgumentException('#' + order.code());
        }
        placed.add(order);
    }
}
