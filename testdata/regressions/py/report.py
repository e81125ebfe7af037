def describe_table(connection, table_name, limit=10):
    cursor = connection.cursor()
    cursor.execute(f"SELECT COUNT(*) FROM {table_name}")
    total = cursor.fetchone()[0]
    rows = cursor.execute(f"SELECT * FROM {table_name} LIMIT {limit}").fetchall()
    header = f"{table_name}: {total} rows, showing {len(rows)}"
    lines = [header]
    for row in rows:
        lines.append(", ".join(f"{value!r}" for value in row))
    return "\n".join(lines)
