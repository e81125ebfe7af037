use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Requests allowed per client in a window.
pub struct Limiter {
    window: Duration,
    allowed: u32,
    seen: HashMap<String, (Instant, u32)>,
}

impl Limiter {
    pub fn new(window: Duration, allowed: u32) -> Limiter {
        Limiter { window, allowed, seen: HashMap::new() }
    }

    /// Whether `client` may make one more request at `now`.
    pub fn admit(&mut self, client: &str, now: Instant) -> bool {
        let entry = self.seen.entry(client.to_owned()).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        if entry.1 >= self.allowed {
            tracing::debug!("client {} over its limit of {}", client, self.allowed);
            return false;
        }
        entry.1 += 1;
        let stale: Vec<String> = self
            .seen
            .iter()
            .filter(|(_, (start, _))| now.duration_since(*start) > self.window * 4)
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            self.seen.remove(&name);
        }
        true
    }
}
