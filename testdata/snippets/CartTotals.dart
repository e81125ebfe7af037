import 'dart:math' as math;

/// Keeps the lines of one shopping cart.
class CartTotals {
  final List<CartLine> lines = [];
  double taxRate = 0.2;
  static const int maxLines = 40;

  CartTotals(this.taxRate);

  /// The total in cents, with tax, after [coupon] is applied.
  @override
  int total({String? coupon, bool rounded = true}) {
    var cents = 0;
    for (final line in lines) {
      if (line.quantity <= 0) {
        continue;
      }
      cents += line.price * line.quantity;
    }
    if (coupon != null && coupon.startsWith('SAVE')) {
      cents -= math.min(cents ~/ 10, 500);
    }
    final taxed = cents * (1 + taxRate);
    return rounded ? taxed.round() : taxed.floor();
  }

  /* Adds a line, merging it with an equal one. */
  Future<void> add(CartLine line) async {
    final index = lines.indexWhere((l) => l.sku == line.sku);
    if (index >= 0) {
      lines[index] = lines[index].copyWith(quantity: lines[index].quantity + line.quantity);
    } else if (lines.length < maxLines) {
      lines.add(line);
    } else {
      throw StateError('cart is full: ${lines.length} lines for $taxRate');
    }
    await Future<void>.delayed(const Duration(milliseconds: 5));
  }
}
