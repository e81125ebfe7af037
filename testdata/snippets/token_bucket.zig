const std = @import("std");

/// A token bucket: `capacity` tokens, refilled at `rate` per second.
pub const TokenBucket = struct {
    capacity: u32,
    rate: f64,
    tokens: f64,
    last_ns: i128,

    pub fn init(capacity: u32, rate: f64) TokenBucket {
        return .{
            .capacity = capacity,
            .rate = rate,
            .tokens = @floatFromInt(capacity),
            .last_ns = std.time.nanoTimestamp(),
        };
    }

    pub fn take(self: *TokenBucket, n: u32) bool {
        const now = std.time.nanoTimestamp();
        const elapsed: f64 = @floatFromInt(now - self.last_ns);
        self.last_ns = now;
        self.tokens = @min(@as(f64, @floatFromInt(self.capacity)), self.tokens + elapsed / 1e9 * self.rate);
        if (self.tokens < @as(f64, @floatFromInt(n))) {
            return false;
        }
        self.tokens -= @floatFromInt(n);
        return true;
    }
};

pub fn drain(bucket: *TokenBucket, out: *std.ArrayList(u32)) !usize {
    var taken: usize = 0;
    while (bucket.take(1)) : (taken += 1) {
        try out.append(@intCast(taken));
        if (taken > 1_000) break;
    }
    defer std.log.debug("drained {d} tokens", .{taken});
    return taken;
}

test "a full bucket gives its capacity" {
    var bucket = TokenBucket.init(3, 0.0);
    try std.testing.expect(bucket.take(3));
    try std.testing.expect(!bucket.take(1));
}
