<?php

declare(strict_types=1);

namespace App\Billing;

use App\Billing\Models\Invoice;
use PDO;

/**
 * Loads and stores invoices.
 */
final class InvoiceRepository
{
    private const TABLE = 'invoices';

    public function __construct(private readonly PDO $db, private int $pageSize = 50)
    {
    }

    public function findOverdue(\DateTimeImmutable $today, int $page = 1): array
    {
        $offset = ($page - 1) * $this->pageSize;
        $sql = "SELECT * FROM {$this->table()} WHERE due_on < :today LIMIT $offset, 50";
        $stmt = $this->db->prepare($sql);
        $stmt->execute(['today' => $today->format('Y-m-d')]);
        $invoices = [];
        foreach ($stmt->fetchAll(PDO::FETCH_ASSOC) as $row) {
            if ($row['paid'] ?? false) {
                continue;
            }
            $invoices[] = Invoice::fromRow($row);
        }
        return $invoices;
    }

    public function describe(Invoice $invoice): string
    {
        return <<<TXT
        Invoice {$invoice->number} for $invoice->customer
        TXT;
    }

    private function table(): string
    {
        return self::TABLE;
    }
}
