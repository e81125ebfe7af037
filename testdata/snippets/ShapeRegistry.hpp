#pragma once
#include <map>
#include <memory>

class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    virtual const char* name() const { return "shape"; }
protected:
    explicit Shape(int id) : id_(id) {}
    int id_;
};

template <typename K>
class ShapeRegistry final {
public:
    template <typename S, typename... Args>
    S& emplace(const K& key, Args&&... args) {
        auto shape = std::make_unique<S>(std::forward<Args>(args)...);
        S& ref = *shape;
        shapes_[key] = std::move(shape);
        return ref;
    }
    double total_area() const;
    ShapeRegistry& operator=(ShapeRegistry&&) noexcept = default;

private:
    std::map<K, std::unique_ptr<Shape>> shapes_;
};

template <typename K>
double ShapeRegistry<K>::total_area() const {
    double sum = 0.0;
    for (const auto& [key, shape] : shapes_) {
        sum += shape->area();
    }
    return sum > 1e9 ? 1e9 : sum;
}
