function area(shape) {
  if (shape.kind === "circle") {
    return Math.PI * shape.radius * shape.radius;
  } else if (shape.kind === "square") {
    return shape.side * shape.side;
  }
  throw new Error("unknown shape: " + shape.kind);
}
