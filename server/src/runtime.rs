//! The process around `run`: the tokio runtime and its worker threads (`--workers`),
//! each pinned to its CPU (`--cpus`), the listener (bound on `--addr`, or inherited as
//! `--listen-fd`), SIGINT / SIGTERM.
//!
//! Here rather than in `main.rs` so that the tests start the server on the runtime the
//! binary runs on (`tests/runtime.rs`, `tests/wire`), not on one of their own.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::TcpListener;
use tokio::runtime::Runtime;

use crate::config::{Config, Listen};
use crate::cpus;
use crate::serve::run;

/// The name of every thread the runtime starts, so that `top -H`, perf and the tests tell
/// them apart from the thread that drives it.
pub const WORKER_THREAD: &str = "hft-worker";

/// `--workers` and `--cpus`: how many worker threads, and where they run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Threads {
    /// Worker threads; `None`: one per CPU of `cpus`, else one per CPU the process may use.
    pub workers: Option<NonZeroUsize>,
    /// The CPUs to run on, worker *i* pinned to the *i*-th, round robin (`cpus::for_thread`);
    /// `None`: not pinned. On CPUs isolated with `isolcpus` the kernel never spreads a
    /// process's threads, so without a CPU each they would all stay on one.
    pub cpus: Option<Vec<usize>>,
}

impl Threads {
    /// How many worker threads the runtime starts.
    pub fn worker_count(&self) -> usize {
        match (self.workers, &self.cpus) {
            (Some(n), _) => n.get(),
            (None, Some(list)) => list.len().max(1),
            (None, None) => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        }
    }
}

/// Why the server could not start, or stopped serving. The messages name the flag at
/// fault and the fix; `main.rs` prints them after `hft-server: `.
#[derive(Debug)]
pub enum Error {
    /// A CPU of `--cpus` cannot run the process (offline, past the machine, forbidden by
    /// a cpuset).
    Cpus { cpus: Vec<usize>, source: io::Error },
    /// The runtime could not start its worker threads.
    Runtime { workers: usize, source: io::Error },
    /// `--addr` cannot be bound.
    Bind { addr: SocketAddr, source: io::Error },
    /// The bound listener cannot tell its address (so the startup line cannot be printed).
    LocalAddr { addr: SocketAddr, source: io::Error },
    /// `--listen-fd`'s descriptor is not a listening TCP socket (`problem` says what it is).
    ListenFd { fd: RawFd, problem: String },
    /// `run` failed after the startup line: the only error that is not a setting to fix.
    Serve {
        local: SocketAddr,
        source: io::Error,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Cpus { cpus, source } => write!(
                f,
                "cannot run on --cpus {cpus:?}: {source}; pass CPUs of /sys/devices/system/cpu/online"
            ),
            Error::Runtime { workers, source } => write!(
                f,
                "cannot start {workers} worker threads: {source}; pass a smaller --workers"
            ),
            Error::Bind { addr, source } => write!(
                f,
                "cannot listen on {addr}: {source}; stop whatever uses it or pass --addr 127.0.0.1:0"
            ),
            Error::LocalAddr { addr, source } => {
                write!(f, "cannot read the bound address of {addr}: {source}")
            }
            Error::ListenFd { fd, problem } => write!(
                f,
                "--listen-fd {fd}: {problem}; pass the number of a TCP socket that is bound, \
                 listening and left open (not close-on-exec) by the process that starts the \
                 server, or use --addr instead"
            ),
            Error::Serve { local, source } => write!(f, "serving on {local} failed: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Cpus { source, .. }
            | Error::Runtime { source, .. }
            | Error::Bind { source, .. }
            | Error::LocalAddr { source, .. }
            | Error::Serve { source, .. } => Some(source),
            Error::ListenFd { .. } => None,
        }
    }
}

/// Builds the multi-threaded runtime: `threads.worker_count()` workers named
/// `WORKER_THREAD`, each pinning itself to its CPU of `threads.cpus` as it starts.
///
/// With `cpus`, every CPU of the list is checked first (`cpus::check_usable`): one that
/// cannot be used is one clear error here, not a worker quietly left unpinned. Then the
/// calling thread is confined to the whole list, and so are the threads it starts.
pub fn build(threads: &Threads) -> Result<Runtime, Error> {
    if let Some(list) = &threads.cpus {
        cpus::check_usable(list)
            .and_then(|()| cpus::pin_current_thread(list))
            .map_err(|source| Error::Cpus {
                cpus: list.clone(),
                source,
            })?;
    }
    let workers = threads.worker_count();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(workers)
        .thread_name(WORKER_THREAD)
        .enable_all();
    if let Some(list) = threads.cpus.clone() {
        let started = AtomicUsize::new(0);
        builder.on_thread_start(move || {
            let cpu = cpus::for_thread(&list, started.fetch_add(1, Ordering::Relaxed));
            if let Err(err) = cpus::pin_current_thread(&[cpu]) {
                // Checked above; only a CPU taken offline since then gets here.
                tracing::warn!("cannot pin a worker thread to CPU {cpu}: {err}");
            }
        });
    }
    builder
        .build()
        .map_err(|source| Error::Runtime { workers, source })
}

/// The binary's whole life: builds the runtime (`build`), binds `listen`'s address or
/// takes its inherited socket (`inherited`), hands the listener's address to `ready` (port
/// 0 resolved; the binary prints its startup line there), then serves with `run` until
/// `shutdown` completes and the requests in flight are done.
///
/// Blocks the calling thread, which drives the runtime; with `threads.cpus` it is
/// confined to those CPUs (see `build`).
pub fn serve(
    listen: impl Into<Listen>,
    config: Config,
    threads: &Threads,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    // An inherited socket is checked before the runtime starts: a wrong descriptor is a
    // setting to fix, whatever the CPUs.
    let source = match listen.into() {
        Listen::Addr(addr) => Source::Bind(addr),
        Listen::Fd(fd) => Source::Inherited(fd, inherited(fd)?),
    };
    let runtime = build(threads)?;
    runtime.block_on(async move {
        let (listener, local) = match source {
            Source::Bind(addr) => {
                let listener = TcpListener::bind(addr)
                    .await
                    .map_err(|source| Error::Bind { addr, source })?;
                let local = listener
                    .local_addr()
                    .map_err(|source| Error::LocalAddr { addr, source })?;
                (listener, local)
            }
            Source::Inherited(fd, socket) => {
                let problem = |what: &str, source: io::Error| Error::ListenFd {
                    fd,
                    problem: format!("{what} ({source})"),
                };
                let local = socket
                    .local_addr()
                    .map_err(|e| problem("its address cannot be read", e))?;
                let listener = socket
                    .set_nonblocking(true)
                    .and_then(|()| TcpListener::from_std(socket))
                    .map_err(|e| problem("tokio cannot serve on it", e))?;
                (listener, local)
            }
        };
        ready(local);
        run(listener, config, shutdown)
            .await
            .map_err(|source| Error::Serve { local, source })?;
        tracing::info!("shut down cleanly");
        Ok(())
    })
}

/// Where `serve` gets its listener: `Listen` with an inherited socket already checked.
enum Source {
    Bind(SocketAddr),
    Inherited(RawFd, std::net::TcpListener),
}

/// File descriptor `fd` as a listener, once it is known to be an open, listening TCP socket
/// (IPv4 or IPv6): anything else is `Error::ListenFd` saying what it is instead, so that a
/// wrong number fails at startup rather than at the first `accept`.
fn inherited(fd: RawFd) -> Result<std::net::TcpListener, Error> {
    let wrong = |problem: String| Error::ListenFd { fd, problem };
    // SAFETY: fstat and getsockopt only write into the buffers passed, sized as given.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        let why = io::Error::last_os_error();
        return Err(wrong(format!("descriptor {fd} is not open here ({why})")));
    }
    let kind = match stat.st_mode & libc::S_IFMT {
        libc::S_IFSOCK => None,
        libc::S_IFREG => Some("a regular file"),
        libc::S_IFIFO => Some("a pipe"),
        libc::S_IFCHR => Some("a character device (a terminal or /dev/null)"),
        libc::S_IFDIR => Some("a directory"),
        _ => Some("not a socket"),
    };
    if let Some(kind) = kind {
        return Err(wrong(format!("descriptor {fd} is {kind}, not a socket")));
    }
    let option = |level: libc::c_int, name: libc::c_int| -> io::Result<libc::c_int> {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        let value_ptr = (&mut value as *mut libc::c_int).cast();
        // SAFETY: value and len are valid for the duration of the call.
        match unsafe { libc::getsockopt(fd, level, name, value_ptr, &mut len) } {
            0 => Ok(value),
            _ => Err(io::Error::last_os_error()),
        }
    };
    let read = |name: libc::c_int, what: &str| {
        option(libc::SOL_SOCKET, name).map_err(|e| wrong(format!("cannot read its {what} ({e})")))
    };
    let domain = read(libc::SO_DOMAIN, "address family")?;
    if domain != libc::AF_INET && domain != libc::AF_INET6 {
        let family = if domain == libc::AF_UNIX {
            "a Unix"
        } else {
            "a non-IP"
        };
        return Err(wrong(format!(
            "descriptor {fd} is {family} socket, not TCP"
        )));
    }
    let kind = read(libc::SO_TYPE, "type")?;
    let protocol = read(libc::SO_PROTOCOL, "protocol")?;
    if kind != libc::SOCK_STREAM || protocol != libc::IPPROTO_TCP {
        let what = if kind == libc::SOCK_DGRAM {
            "a UDP"
        } else {
            "an IP but not TCP"
        };
        return Err(wrong(format!("descriptor {fd} is {what} socket, not TCP")));
    }
    if read(libc::SO_ACCEPTCONN, "listening state")? == 0 {
        return Err(wrong(format!(
            "descriptor {fd} is a TCP socket that is not listening (call listen() on it \
             before starting the server)"
        )));
    }
    // SAFETY: fd is an open, listening TCP socket, and from here on the listener's: nothing
    // else in this process uses or closes it.
    Ok(unsafe { std::net::TcpListener::from_raw_fd(fd) })
}

/// Completes on SIGINT or SIGTERM (the handlers are installed on its first poll).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for SIGINT: {err}");
            std::future::pending::<()>().await;
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(err) => {
                tracing::error!("cannot listen for SIGTERM: {err}");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT: shutting down"),
        () = term => tracing::info!("SIGTERM: shutting down"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn threads(workers: usize, cpus: Option<Vec<usize>>) -> Threads {
        Threads {
            workers: NonZeroUsize::new(workers),
            cpus,
        }
    }

    #[test]
    fn workers_are_the_flag_else_the_cpus_of_the_list_else_the_cpus_it_may_use() {
        assert_eq!(threads(3, Some(vec![0, 1])).worker_count(), 3);
        assert_eq!(threads(0, Some(vec![4, 6, 5])).worker_count(), 3);
        let usable = std::thread::available_parallelism().unwrap().get();
        assert_eq!(Threads::default().worker_count(), usable);
    }

    #[test]
    fn errors_name_the_flag_and_the_fix() {
        let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let error = || io::Error::from_raw_os_error(libc::EINVAL);
        let bind = Error::Bind {
            addr,
            source: io::Error::from(io::ErrorKind::AddrInUse),
        };
        assert!(bind
            .to_string()
            .starts_with("cannot listen on 127.0.0.1:8080: "));
        assert!(bind
            .to_string()
            .ends_with("; stop whatever uses it or pass --addr 127.0.0.1:0"));
        let runtime = Error::Runtime {
            workers: 9,
            source: error(),
        };
        assert!(runtime.to_string().contains("9 worker threads"));
        assert!(runtime.to_string().ends_with("--workers"));
        let cpus = Error::Cpus {
            cpus: vec![0, 1000],
            source: error(),
        };
        assert!(cpus
            .to_string()
            .starts_with("cannot run on --cpus [0, 1000]: "));
        let fd = Error::ListenFd {
            fd: 7,
            problem: "descriptor 7 is a pipe, not a socket".into(),
        };
        assert!(fd
            .to_string()
            .starts_with("--listen-fd 7: descriptor 7 is a pipe, not a socket; pass "));
        assert!(fd.to_string().ends_with("or use --addr instead"));
    }

    #[test]
    fn an_inherited_descriptor_must_be_a_listening_tcp_socket() {
        use std::os::fd::IntoRawFd;
        let problem = |fd: RawFd| match inherited(fd) {
            Err(Error::ListenFd { problem, .. }) => problem,
            other => panic!("descriptor {fd}: {other:?}"),
        };
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(problem(udp.as_raw_fd()).ends_with("is a UDP socket, not TCP"));
        assert!(problem(-1).contains("is not open here"));
        // Taken over: the listener returned owns the descriptor from here on.
        let listening = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listening.local_addr().unwrap();
        let taken = inherited(listening.into_raw_fd()).unwrap();
        assert_eq!(taken.local_addr().unwrap(), addr);
    }
}
