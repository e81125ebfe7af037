import React from "react";

type Row = { id: string; name: string; score: number };

export function ScoreTable({ rows, limit = 20 }: { rows: Row[]; limit?: number }) {
  const sorted = [...rows].sort((a, b) => b.score - a.score).slice(0, limit);
  if (sorted.length === 0) {
    return <p className="empty">No scores yet</p>;
  }
  return (
    <table className="scores">
      <tbody>
        {sorted.map((row, index) => (
          <tr key={row.id} className={index === 0 ? "first" : undefined}>
            <td>{index + 1}</td>
            <td>{row.name}</td>
            <td>{row.score.toFixed(1)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
