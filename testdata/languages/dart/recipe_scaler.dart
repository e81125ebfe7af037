import 'dart:math' as math;

/// One ingredient of a recipe, in grams or pieces.
class Ingredient {
  final String name;
  final double amount;
  final String unit;

  const Ingredient(this.name, this.amount, {this.unit = 'g'});
}

/// Scales recipes to the number of guests.
class RecipeScaler {
  final Map<String, List<Ingredient>> recipes = {};
  final int defaultServings;

  RecipeScaler({this.defaultServings = 4});

  void add(String title, List<Ingredient> ingredients) {
    if (recipes.containsKey(title)) {
      throw ArgumentError('recipe "$title" exists already');
    }
    recipes[title] = List.unmodifiable(ingredients);
  }

  /// The shopping list for [guests], rounded up to whole units.
  List<String> shoppingList(String title, int guests, {bool metric = true}) {
    final ingredients = recipes[title];
    if (ingredients == null) {
      return const [];
    }
    final factor = guests / defaultServings;
    final lines = <String>[];
    for (final ingredient in ingredients) {
      var amount = ingredient.amount * factor;
      if (!metric && ingredient.unit == 'g') {
        amount = amount / 28.35;
      }
      final rounded = amount < 10 ? (amount * 10).ceil() / 10 : amount.ceilToDouble();
      final unit = metric ? ingredient.unit : 'oz';
      lines.add('${ingredient.name}: $rounded $unit');
    }
    lines.sort();
    return lines;
  }

  int largestRecipe() =>
      recipes.values.map((list) => list.length).fold(0, math.max);

  Future<void> export(StringSink sink) async {
    for (final entry in recipes.entries) {
      sink.writeln('# ${entry.key}');
      for (final ingredient in entry.value) {
        sink.writeln('- ${ingredient.amount} ${ingredient.unit} ${ingredient.name}');
      }
      await Future<void>.delayed(Duration.zero);
    }
  }
}
