//! Raw HTTP/1.1 over real TCP for the abuse, fuzz and runtime tests: a server on
//! 127.0.0.1:0 started as the binary starts it, on a thread of its own (its threads are
//! named, so a panic in the server is told apart from a failing assertion), bytes written
//! as given, and a strict parser for what comes back.

// Shared by several test crates; each uses part of it.
#![allow(dead_code, unused_imports)]

use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hft_server::runtime::{self, Threads};
use hft_server::{Config, WORKER_THREAD};
use tokio::sync::oneshot;

mod parse;

use parse::finals;
pub use parse::{parse_responses, Bodies, Response};

/// The thread that calls `runtime::serve` (the runtime's own are `WORKER_THREAD`).
pub const SERVER_THREAD: &str = "hft-test-server";

/// Where the servers listen: a free port of the loopback.
const LOCAL: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// Panics seen on server threads, in this test process.
static SERVER_PANICS: AtomicUsize = AtomicUsize::new(0);

/// How long a test waits for an answer or a close before it calls the server stuck.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// A server running `hft_server::runtime::serve` on its own threads.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<(), runtime::Error>>>,
}

impl Server {
    /// A server on two worker threads, not pinned.
    pub fn start(config: Config) -> Server {
        let threads = Threads {
            workers: NonZeroUsize::new(2),
            cpus: None,
        };
        Server::start_with(config, threads).unwrap()
    }

    /// A server started as the binary starts it (`runtime::serve`), on `threads`; the
    /// error `serve` returns when it does not get as far as listening.
    pub fn start_with(config: Config, threads: Threads) -> Result<Server, runtime::Error> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                let thread = std::thread::current();
                if thread
                    .name()
                    .is_some_and(|n| n == WORKER_THREAD || n == SERVER_THREAD)
                {
                    SERVER_PANICS.fetch_add(1, Ordering::SeqCst);
                }
                previous(info);
            }));
        });
        let (bound, addr) = mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(SERVER_THREAD.to_string())
            .spawn(move || {
                let shutdown = async {
                    let _ = stopped.await;
                };
                let ready = move |local| {
                    let _ = bound.send(local);
                };
                runtime::serve(LOCAL, config, &threads, shutdown, ready)
            })
            .unwrap();
        match addr.recv() {
            Ok(addr) => Ok(Server {
                addr,
                stop: Some(stop),
                thread: Some(thread),
            }),
            // `ready` dropped unsent: `serve` returned before listening.
            Err(mpsc::RecvError) => Err(thread
                .join()
                .expect("the server thread panicked")
                .expect_err("serve returned Ok without listening")),
        }
    }

    /// Panics on server threads so far (in any server of this process).
    pub fn panics() -> usize {
        SERVER_PANICS.load(Ordering::SeqCst)
    }

    /// Whether `run` is still serving (it returns only after a shutdown).
    pub fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// `GET /health` on a new connection: the status, or why there was none.
    pub fn health(&self) -> Result<u16, String> {
        let sent = b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";
        let got = exchange(self.addr, &[sent], End::HalfClose, Bodies::Framed)
            .map_err(|e| e.to_string())?;
        let responses = parse_responses(&got.bytes, Bodies::Framed)?;
        match responses.as_slice() {
            [one] => Ok(one.status),
            other => Err(format!("{} answers to one GET /health", other.len())),
        }
    }

    /// Triggers the shutdown and waits for `serve` to return.
    pub fn stop(mut self) -> Result<(), runtime::Error> {
        self.halt()
    }

    fn halt(&mut self) -> Result<(), runtime::Error> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => thread.join().expect("the server thread panicked"),
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// How the client ends its side of an exchange.
#[derive(Clone, Copy, Debug)]
pub enum End {
    /// `shutdown(SHUT_WR)` after the last byte, then read until the server closes.
    HalfClose,
    /// Keep writing open; read until this many final answers arrived or the server closes.
    Answers(usize),
}

/// What came back on one connection.
pub struct Exchanged {
    /// Every byte the server sent.
    pub bytes: Vec<u8>,
    /// The server closed the connection (EOF or reset) rather than the client giving up.
    pub closed: bool,
}

/// Connects, writes `pieces` one `write` each, ends as `end` says, reads the answers
/// (`bodies` tells which have none, for counting them). A write the server refuses (it
/// closed early) stops the writing, not the exchange. Fails when the server neither
/// answers nor closes within `PATIENCE`.
pub fn exchange(
    addr: SocketAddr,
    pieces: &[&[u8]],
    end: End,
    bodies: Bodies<'_>,
) -> io::Result<Exchanged> {
    let mut tcp = TcpStream::connect(addr)?;
    tcp.set_nodelay(true)?;
    tcp.set_read_timeout(Some(PATIENCE))?;
    tcp.set_write_timeout(Some(PATIENCE))?;
    for piece in pieces {
        if let Err(err) = tcp.write_all(piece) {
            if gone(&err) {
                break;
            }
            return Err(err);
        }
    }
    if let End::HalfClose = end {
        // The server may have closed already; then there is nothing to shut.
        let _ = tcp.shutdown(Shutdown::Write);
    }
    let deadline = Instant::now() + PATIENCE;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let End::Answers(n) = end {
            if finals(&bytes, bodies) >= n {
                return Ok(Exchanged {
                    bytes,
                    closed: false,
                });
            }
        }
        if Instant::now() > deadline {
            return Err(stuck(end, &bytes));
        }
        match tcp.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(err) if gone(&err) => break,
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(stuck(end, &bytes))
            }
            Err(err) => return Err(err),
        }
    }
    Ok(Exchanged {
        bytes,
        closed: true,
    })
}

fn stuck(end: End, bytes: &[u8]) -> io::Error {
    io::Error::new(
        ErrorKind::TimedOut,
        format!(
            "no answer and no close within {PATIENCE:?} ({end:?}); got {:?}",
            bytes.escape_ascii().to_string()
        ),
    )
}

/// The peer closed or reset the connection.
fn gone(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
    )
}
