//! Scenario `slow`: 500 slow connections against a server started with
//! `--header-timeout 5`, while a probe times `GET /api/health` on its own
//! connection.
//!
//! 400 connections send a partial request head and then one more byte
//! every 2 s; 50 send a partial head and stop; 50 send nothing. The header
//! time-out counts from the start of the head, so each of them must get a
//! 408 `RequestTimeout` JSON about 5 s after it connected (never before
//! 4.5 s, at most 9 s), and the health probe must keep answering
//! throughout. The connections are driven from one thread, non-blocking;
//! the phase ends when all are answered, or after 12 s.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::fixture;
use crate::http;
use crate::load::{check_health_p99, probe_health};
use crate::report::{Latencies, Row};
use crate::server::{Server, READY_LIMIT};

/// The header time-out the server runs with, in seconds.
const HEADER_TIMEOUT: u64 = 5;
/// Connections that send a byte every [`TRICKLE_EVERY`].
const TRICKLERS: usize = 400;
/// Connections that send a partial head, then nothing.
const STALLERS: usize = 50;
/// Connections that send nothing at all.
const SILENT: usize = 50;
/// Time between two bytes of a trickling connection.
const TRICKLE_EVERY: Duration = Duration::from_secs(2);
/// The longest the slow phase lasts.
const PHASE_LIMIT: Duration = Duration::from_secs(12);
/// The earliest a 408 may come, after connecting.
const EARLIEST: Duration = Duration::from_millis(4_500);
/// The latest a 408 may come, after connecting.
const LATEST: Duration = Duration::from_secs(9);
/// The head the slow connections send, a part first, then byte by byte.
const HEAD: &[u8] = b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\n\
    Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
/// How much of [`HEAD`] is sent at once.
const FIRST_PART: usize = 28;

/// How a slow connection behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Trickle,
    Stall,
    Silent,
}

/// One slow connection.
struct Slow {
    kind: Kind,
    stream: TcpStream,
    connected: Instant,
    /// Bytes of [`HEAD`] sent.
    sent: usize,
    next_byte: Instant,
    /// Bytes received.
    received: Vec<u8>,
    /// When the first byte arrived.
    answered: Option<Instant>,
    /// Whether the server closed it (or it failed: the error).
    ended: Option<Result<(), String>>,
}

/// Runs the scenario.
pub fn run() -> Row {
    let mut row = Row::new("slow");
    let dir = fixture::project_copy();
    let timeout = HEADER_TIMEOUT.to_string();
    let args = ["--header-timeout", &timeout];
    let Some(server) = Server::start_ready("slow", dir.path(), &args, READY_LIMIT, &mut row) else {
        return row;
    };
    let port = server.port;
    let stop = AtomicBool::new(false);
    let (slow, (probe, health)) = thread::scope(|scope| {
        let stop = &stop;
        let probe = scope.spawn(move || probe_health(port, stop, PHASE_LIMIT * 2));
        let slow = drive(port);
        stop.store(true, Ordering::SeqCst);
        (slow, probe.join().expect("the health probe panicked"))
    });
    let slow = match slow {
        Ok(slow) => slow,
        Err(err) => {
            row.fail(format!("cannot open the slow connections: {err}"));
            Vec::new()
        }
    };
    row.requests += slow.len() as u64;
    row.absorb(probe);
    let times = judge(&mut row, &slow);
    drop(slow);
    row.figure(format!(
        "408 for {}/{} after {}",
        times.len(),
        TRICKLERS + STALLERS + SILENT,
        span(&times)
    ));
    row.figure(format!("health {} during", health.summary()));
    check_health_p99(&mut row, &health);
    // The server still serves once they are gone.
    server.check_health(&mut row, "the slow phase");
    server.finish(&mut row);
    row
}

/// Opens the slow connections and drives them until all are answered or
/// the phase is over.
fn drive(port: u16) -> io::Result<Vec<Slow>> {
    let kinds = [
        (Kind::Trickle, TRICKLERS),
        (Kind::Stall, STALLERS),
        (Kind::Silent, SILENT),
    ];
    let mut slow = Vec::new();
    for (kind, count) in kinds {
        for _ in 0..count {
            let mut stream = http::connect(port, Duration::from_secs(5))?;
            let connected = Instant::now();
            let sent = if kind == Kind::Silent { 0 } else { FIRST_PART };
            stream.write_all(&HEAD[..sent])?;
            stream.set_nonblocking(true)?;
            slow.push(Slow {
                kind,
                stream,
                connected,
                sent,
                next_byte: connected + TRICKLE_EVERY,
                received: Vec::new(),
                answered: None,
                ended: None,
            });
        }
    }
    let started = Instant::now();
    while started.elapsed() < PHASE_LIMIT && slow.iter().any(|s| s.ended.is_none()) {
        for conn in slow.iter_mut().filter(|s| s.ended.is_none()) {
            conn.poll();
        }
        thread::sleep(Duration::from_millis(10));
    }
    Ok(slow)
}

impl Slow {
    /// Reads what arrived, and sends the next byte when it is due.
    fn poll(&mut self) {
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    self.ended = Some(Ok(()));
                    return;
                }
                Ok(n) => {
                    self.answered.get_or_insert_with(Instant::now);
                    self.received.extend_from_slice(&chunk[..n]);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    self.ended = Some(Err(err.to_string()));
                    return;
                }
            }
        }
        let due = self.kind == Kind::Trickle
            && self.answered.is_none()
            && self.sent < HEAD.len()
            && Instant::now() >= self.next_byte;
        if due {
            // A failed write means the server answered and closed meanwhile:
            // the next read says so.
            if let Ok(n) = self.stream.write(&HEAD[self.sent..=self.sent]) {
                self.sent += n;
            }
            self.next_byte += TRICKLE_EVERY;
        }
    }
}

/// Checks every slow connection got its 408 JSON in time; returns the
/// times of the good ones.
fn judge(row: &mut Row, slow: &[Slow]) -> Latencies {
    let mut times = Latencies::default();
    let want = format!(
        "The request headers were not received in time; send them within {HEADER_TIMEOUT} seconds"
    );
    for (i, conn) in slow.iter().enumerate() {
        let who = format!("{:?} connection {i}", conn.kind);
        let Some(answered) = conn.answered else {
            match &conn.ended {
                Some(Ok(())) => row.fail(format!("{who}: closed without an answer")),
                Some(Err(err)) => row.fail(format!("{who}: no answer: {err}")),
                None => row.fail(format!(
                    "{who}: no answer and still open after {} s",
                    PHASE_LIMIT.as_secs()
                )),
            }
            continue;
        };
        let after = answered - conn.connected;
        let mut buf = conn.received.clone();
        let res = match http::read_response(&mut io::empty(), &mut buf) {
            Ok(res) => res,
            Err(err) => {
                row.fail(format!("{who}: a bad response ({err})"));
                continue;
            }
        };
        let message = res
            .json()
            .and_then(|body| body["message"].as_str().map(str::to_owned));
        match res.error_name() {
            Ok(name) if res.status == 408 && name == "RequestTimeout" => {}
            _ => {
                row.fail(format!(
                    "{who}: expected 408 RequestTimeout, got {}",
                    res.summary()
                ));
                continue;
            }
        }
        if message.as_deref() != Some(&want) {
            row.fail(format!(
                "{who}: expected the message {want:?}, got {message:?}"
            ));
        } else if !(EARLIEST..=LATEST).contains(&after) {
            row.fail(format!(
                "{who}: the 408 came {:.2} s after connecting, outside {:.1}-{:.1} s",
                after.as_secs_f64(),
                EARLIEST.as_secs_f64(),
                LATEST.as_secs_f64()
            ));
        } else {
            times.push(after);
        }
    }
    times
}

/// `5.01-5.12 s`: the earliest and latest of `times`.
fn span(times: &Latencies) -> String {
    format!(
        "{:.2}-{:.2} s",
        times.percentile(0.0).as_secs_f64(),
        times.percentile(100.0).as_secs_f64()
    )
}
