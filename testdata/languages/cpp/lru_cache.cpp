// A least-recently-used cache of rendered pages.
#include <list>
#include <optional>
#include <string>
#include <unordered_map>

namespace render {

class LruCache {
public:
    explicit LruCache(std::size_t capacity) : capacity_(capacity) {}

    std::optional<std::string> get(const std::string& key);
    void put(const std::string& key, std::string page);
    std::size_t evictions() const noexcept { return evictions_; }

private:
    using Entry = std::pair<std::string, std::string>;
    std::list<Entry> order_;
    std::unordered_map<std::string, std::list<Entry>::iterator> index_;
    std::size_t capacity_;
    std::size_t evictions_ = 0;
};

std::optional<std::string> LruCache::get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) {
        return std::nullopt;
    }
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
}

void LruCache::put(const std::string& key, std::string page) {
    if (capacity_ == 0) {
        return;
    }
    auto found = index_.find(key);
    if (found != index_.end()) {
        found->second->second = std::move(page);
        order_.splice(order_.begin(), order_, found->second);
        return;
    }
    while (order_.size() >= capacity_) {
        const Entry& oldest = order_.back();
        index_.erase(oldest.first);
        order_.pop_back();
        ++evictions_;
    }
    order_.emplace_front(key, std::move(page));
    index_[key] = order_.begin();
    if (key.size() > 256) {
        throw std::length_error("cache key longer than 256 bytes");
    }
}

std::string cache_report(const LruCache& cache, const std::string& name) {
    return name + ": " + std::to_string(cache.evictions()) + " evictions";
}

}  // namespace render
