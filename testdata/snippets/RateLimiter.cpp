#include <chrono>
#include <deque>
#include <string>

namespace net {

// Sliding-window limiter: at most `limit` requests per `window`.
class RateLimiter {
public:
    using Clock = std::chrono::steady_clock;

    RateLimiter(std::size_t limit, Clock::duration window)
        : limit_(limit), window_(window) {}

    bool allow(const std::string& client) {
        const auto now = Clock::now();
        evict(now);
        if (stamps_.size() >= limit_) {
            rejected_ += 1;
            return false;
        }
        stamps_.push_back(now);
        last_client_ = client;
        return true;
    }

    std::size_t rejected() const noexcept { return rejected_; }

private:
    void evict(Clock::time_point now);
    friend bool operator==(const RateLimiter& a, const RateLimiter& b) {
        return a.limit_ == b.limit_ && a.window_ == b.window_;
    }

    std::size_t limit_;
    Clock::duration window_;
    std::deque<Clock::time_point> stamps_;
    std::size_t rejected_ = 0;
    std::string last_client_;
};

void RateLimiter::evict(Clock::time_point now) {
    /* Drop the stamps that left the window,
       oldest first. */
    while (!stamps_.empty() && now - stamps_.front() > window_) {
        stamps_.pop_front();
    }
    if (stamps_.empty()) {
        last_client_.clear();
    }
}

template <typename T>
static T clamp_to(T value, T low, T high) {
    if (value < low) return low;
    if (value > high) return high;
    return value;
}

}  // namespace net
