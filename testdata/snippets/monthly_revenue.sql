-- Revenue per customer and month, for the finance dashboard.
CREATE TABLE invoices (
    id BIGINT PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    issued_on DATE NOT NULL,
    amount NUMERIC(12, 2) NOT NULL DEFAULT 0,
    status VARCHAR(16) NOT NULL DEFAULT 'open'
);

CREATE INDEX invoices_customer_idx ON invoices (customer_id, issued_on);

/*
 * Paid invoices only; refunds are negative amounts.
 */
SELECT
    c.name AS customer,
    EXTRACT(YEAR FROM i.issued_on) AS year,
    SUM(i.amount) AS revenue,
    COUNT(*) AS invoices
FROM invoices i
JOIN customers c ON c.id = i.customer_id
WHERE i.status = 'paid'
  AND i.issued_on >= DATE '2024-01-01'
  AND c.country IN ('DE', 'FR', 'IT')
GROUP BY c.name, EXTRACT(YEAR FROM i.issued_on)
HAVING SUM(i.amount) > 1000
ORDER BY revenue DESC
LIMIT 20;

UPDATE invoices
SET status = 'overdue'
WHERE status = 'open'
  AND issued_on < CURRENT_DATE - INTERVAL '30 days';

DELETE FROM invoices WHERE amount = 0 AND status = 'void';
