-- Reporting queries for the warehouse team.

CREATE TABLE shipments (
    id BIGINT PRIMARY KEY,
    warehouse_id INTEGER NOT NULL,
    carrier VARCHAR(32) NOT NULL,
    shipped_at TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP,
    weight_kg NUMERIC(8, 2) NOT NULL
);

CREATE VIEW open_shipments AS
SELECT id, warehouse_id, carrier
FROM shipments
WHERE delivered_at IS NULL;

-- Late deliveries per carrier over the last quarter.
SELECT
    s.carrier,
    w.region,
    COUNT(*) AS shipments,
    SUM(CASE WHEN s.delivered_at > s.shipped_at + INTERVAL '5 days' THEN 1 ELSE 0 END) AS late,
    ROUND(AVG(s.weight_kg), 1) AS avg_weight
FROM shipments s
JOIN warehouses w ON w.id = s.warehouse_id
WHERE s.shipped_at >= CURRENT_DATE - INTERVAL '90 days'
  AND s.carrier <> 'internal'
  AND w.active = TRUE
GROUP BY s.carrier, w.region
HAVING COUNT(*) >= 25
ORDER BY late DESC, s.carrier
LIMIT 50;

UPDATE warehouses
SET active = FALSE
WHERE id NOT IN (SELECT DISTINCT warehouse_id FROM shipments);

DELETE FROM shipments
WHERE shipped_at < CURRENT_DATE - INTERVAL '5 years';
