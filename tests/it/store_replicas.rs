//! The store on a primary and its streaming standby ([`PgServer::standby`]),
//! both named in one URL, as libpq lists hosts: a server with `--store`
//! checks from whichever answers, and goes on from the standby when the
//! primary stops; `publish` goes to the primary whatever the order of the
//! hosts, fails in one line while there is none, and succeeds again once
//! the standby is promoted; a connection that broke unseen is made again
//! within the check that finds it broken.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::json;

use crate::common::Server;
use crate::pg::{percent, PgServer};
use crate::store::{last_error, publish, run};
use crate::store_checks::{function, place, places, tree};

/// The URL of `database` on `first` and then `second`, password included.
fn both(first: &PgServer, second: &PgServer, database: &str) -> String {
    format!(
        "postgres://postgres:{}@127.0.0.1:{},127.0.0.1:{}/{database}",
        percent(PgServer::PASSWORD),
        first.port,
        second.port
    )
}

/// A primary with the schema made in a database of its own; its name.
fn primary() -> (PgServer, String) {
    let pg = PgServer::start();
    let db = pg.database();
    let out = run(
        Path::new("."),
        &["store", "init", "--store", &pg.url(&db)],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", last_error(&out));
    (pg, db)
}

/// The repositories with a current copy on `pg`, sorted, one a line.
fn repositories(pg: &PgServer, database: &str) -> String {
    pg.psql(
        database,
        "SELECT string_agg(name, ',' ORDER BY name) FROM repositories WHERE current_copy IS NOT NULL",
    )
}

#[test]
fn checks_go_on_from_the_standby_and_publishes_wait_for_a_primary() {
    let (mut primary, db) = primary();
    let payments = tree(&[("src/money.js", &function("total"))]);
    assert_eq!(
        publish(payments.path(), &primary.url(&db), "payments").0,
        Some(0)
    );
    let standby = primary.standby();
    standby.wait_replayed(&primary);
    let url = both(&primary, &standby, &db);
    let here = tree(&[("here.js", &function("here"))]);
    let server = Server::start_in(here, &["--store", &url, "--repository", "here"]);
    let check =
        || server.check(json!({"code": function("y"), "format": "javascript", "mode": "mild"}));
    let want = [
        place("", "here.js", 1, 10),
        place("payments", "src/money.js", 1, 10),
    ];
    let (status, answer) = check();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(places(&answer), want);
    assert_eq!(answer["store"], json!({"status": "ok"}));
    // The primary stops: the server's connection to it breaks, and the
    // same check reconnects, to the standby, within itself.
    primary.stop();
    let (status, answer) = check();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["store"], json!({"status": "ok"}), "{answer}");
    assert_eq!(places(&answer), want);
    let (_, health) = server.get("/api/health");
    assert_eq!(health["store"]["status"], "ok", "{health}");
    // No primary: a publish says so in one line.
    let shop = tree(&[("lib/sum.js", &function("sum"))]);
    let out = run(
        shop.path(),
        &["publish", ".", "--store", &url, "--repository", "shop"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!said.contains(PgServer::PASSWORD), "{said}");
    assert_eq!(
        last_error(&out),
        format!(
            "dupcheck: error: cannot reach the store at postgres@127.0.0.1:{},127.0.0.1:{}/{db}: no primary: the last host is a standby, which only reads (promote it, or start the primary)",
            primary.port, standby.port
        )
    );
    // The standby promoted is the primary: publishes go to it, and the
    // server reads what they wrote.
    standby.promote();
    let (code, line) = publish(shop.path(), &url, "shop");
    assert_eq!(code, Some(0), "{line}");
    assert_eq!(repositories(&standby, &db), "payments,shop");
    let (_, answer) = check();
    assert_eq!(
        places(&answer),
        [
            place("", "here.js", 1, 10),
            place("payments", "src/money.js", 1, 10),
            place("shop", "lib/sum.js", 1, 10),
        ]
    );
    assert_eq!(answer["store"], json!({"status": "ok"}));
}

#[test]
fn publish_goes_to_the_primary_when_the_standby_is_listed_first() {
    let (primary, db) = primary();
    let standby = primary.standby();
    let url = both(&standby, &primary, &db);
    let dir = tree(&[("src/a.js", &function("a"))]);
    let (code, line) = publish(dir.path(), &url, "acme/shop");
    assert_eq!(code, Some(0), "{line}");
    assert!(
        line.starts_with("published acme/shop: 1 file (10 lines) written"),
        "{line}"
    );
    assert_eq!(repositories(&primary, &db), "acme/shop");
    // Replayed on the standby, it is read from there too.
    standby.wait_replayed(&primary);
    assert_eq!(repositories(&standby, &db), "acme/shop");
    assert!(standby.in_recovery());
}

/// A TCP relay to a server that can be cut the way a dead host's
/// connections end when nothing tells the client: what is open stays
/// open, silent, until the client writes (then it is closed), and new
/// connections are closed at once. So a client learns of the break only
/// from the statement it sends.
struct Relay {
    port: u16,
    cut: Arc<AtomicBool>,
}

impl Relay {
    /// A relay on a free loopback port to `target`'s.
    fn to(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let port = listener.local_addr().expect("its address").port();
        let cut = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cut);
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if flag.load(Ordering::SeqCst) {
                    // Closed at once: the client tries its next host.
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let (client_in, server_in) = (
                    client.try_clone().expect("clone"),
                    server.try_clone().expect("clone"),
                );
                let up = Arc::clone(&flag);
                std::thread::spawn(move || pump(client_in, server, &up));
                let down = Arc::clone(&flag);
                std::thread::spawn(move || pump(server_in, client, &down));
            }
        });
        Relay { port, cut }
    }

    /// Cuts the relay.
    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until either ends; once `cut`, whatever arrives
/// closes both instead.
fn pump(mut from: TcpStream, mut to: TcpStream, cut: &AtomicBool) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if cut.load(Ordering::SeqCst) || to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

#[test]
fn a_check_whose_connection_broke_unseen_reconnects_within_itself() {
    let (primary, db) = primary();
    let payments = tree(&[("src/money.js", &function("total"))]);
    assert_eq!(
        publish(payments.path(), &primary.url(&db), "payments").0,
        Some(0)
    );
    let standby = primary.standby();
    standby.wait_replayed(&primary);
    let relay = Relay::to(primary.port);
    let url = format!(
        "postgres://postgres:{}@127.0.0.1:{},127.0.0.1:{}/{db}",
        percent(PgServer::PASSWORD),
        relay.port,
        standby.port
    );
    let here = tree(&[("here.js", &function("here"))]);
    let server = Server::start_in(here, &["--store", &url, "--repository", "here"]);
    let check =
        || server.check(json!({"code": function("y"), "format": "javascript", "mode": "mild"}));
    let want = [
        place("", "here.js", 1, 10),
        place("payments", "src/money.js", 1, 10),
    ];
    let (_, answer) = check();
    assert_eq!(
        (places(&answer), &answer["store"]),
        (want.to_vec(), &json!({"status": "ok"}))
    );
    // The server's connection looks open until its next statement finds
    // it closed: that check connects again, to the standby, and answers.
    relay.cut();
    let (_, answer) = check();
    assert_eq!(
        (places(&answer), &answer["store"]),
        (want.to_vec(), &json!({"status": "ok"})),
        "{answer}"
    );
    assert_eq!(
        standby.psql(
            "postgres",
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dupcheck'"
        ),
        "1"
    );
}
