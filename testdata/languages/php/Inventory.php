<?php

declare(strict_types=1);

namespace Shop;

use Psr\Log\LoggerInterface;

/**
 * Stock levels of a small shop.
 */
final class Inventory
{
    private array $orders = [];

    public function __construct(
        private array $items,
        private LoggerInterface $log,
    ) {
    }

    /** Orders a batch of every item that runs low. */
    public function restock(int $threshold = 5, int $batch = 20): array
    {
        $orders = [];
        foreach ($this->items as $name => $count) {
            if ($count >= $threshold) {
                continue;
            }
            $wanted = $batch - $count;
            if ($wanted > 100) {
                $this->log->warning("large order for {$name}: $wanted");
                $wanted = 100;
            }
            $orders[] = ['item' => $name, 'quantity' => $wanted];
        }
        usort($orders, fn (array $a, array $b): int => $b['quantity'] <=> $a['quantity']);
        $this->orders = array_merge($this->orders, $orders);
        return $orders;
    }

    public function total(): int
    {
        return array_sum(array_column($this->orders, 'quantity'));
    }

    public static function fromCsv(string $path, LoggerInterface $log): self
    {
        $items = [];
        foreach (file($path, FILE_IGNORE_NEW_LINES) as $line) {
            [$name, $count] = explode(',', $line);
            $items[$name] = (int) $count;
        }
        return new self($items, $log);
    }
}
