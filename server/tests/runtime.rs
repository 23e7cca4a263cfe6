//! The runtime the binary runs on, started through the library as `main.rs` starts it
//! (`runtime::build`, `runtime::serve`): how many worker threads it starts, the CPU each
//! is pinned to (read back from /proc), and the settings it refuses.

mod wire;

use std::num::NonZeroUsize;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hft_server::runtime::{self, Error, Threads};
use hft_server::{cpus, Config, WORKER_THREAD};
use wire::{Server, SERVER_THREAD};

/// The tests read every thread of this process, so they start their runtimes one at a time.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn threads(workers: usize, cpus: Option<Vec<usize>>) -> Threads {
    Threads {
        workers: NonZeroUsize::new(workers),
        cpus,
    }
}

/// A field of a /proc status file (`Name:`, `Cpus_allowed_list:`).
fn field(status: &str, name: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| panic!("no {name} in {status}"))
}

/// The allowed CPUs (`Cpus_allowed_list`, e.g. "0-1") of this process's threads named
/// `name`, sorted: which worker takes which CPU of the list is a race, how many per CPU
/// is not.
fn cpus_of(name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        // A thread may exit between the listing and the reading.
        let Ok(status) = std::fs::read_to_string(task.unwrap().path().join("status")) else {
            continue;
        };
        if field(&status, "Name:") == name {
            found.push(field(&status, "Cpus_allowed_list:"));
        }
    }
    found.sort();
    found
}

/// `cpus_of(name)` once it is `expected` (threads start and pin themselves, or exit, in
/// their own time); the last reading after 5 s.
fn settled(name: &str, expected: &[&str]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found = cpus_of(name);
        if found == expected || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The CPUs the calling thread may run on.
fn allowed_here() -> String {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    field(&status, "Cpus_allowed_list:")
}

/// Whether CPUs 0 and 1 are online and allowed here; says why a test is skipped when not.
fn two_cpus(test: &str) -> bool {
    let allowed = cpus::parse_list(&allowed_here()).unwrap();
    let usable = allowed.contains(&0) && allowed.contains(&1);
    if !usable {
        eprintln!("{test}: skipped, it needs CPUs 0 and 1 and may use {allowed:?}");
    }
    usable
}

#[test]
fn build_starts_the_worker_threads_asked_for() {
    let _one = one_at_a_time();
    let two = runtime::build(&threads(2, None)).unwrap();
    assert_eq!(two.metrics().num_workers(), 2);
    drop(two);
    let usable = std::thread::available_parallelism().unwrap().get();
    let default = runtime::build(&Threads::default()).unwrap();
    assert_eq!(default.metrics().num_workers(), usable);
    drop(default);
    // On a thread of its own: with CPUs, `build` confines the calling thread to them.
    let per_cpu = std::thread::spawn(|| {
        let first = cpus::parse_list(&allowed_here()).unwrap()[0];
        let runtime = runtime::build(&threads(0, Some(vec![first]))).unwrap();
        runtime.metrics().num_workers()
    });
    assert_eq!(per_cpu.join().unwrap(), 1, "one worker per CPU of the list");
}

#[test]
fn serve_runs_the_workers_asked_for_unpinned_without_cpus() {
    let _one = one_at_a_time();
    // The server's threads inherit the mask of the thread that starts them: this one's.
    let mask = allowed_here();
    let server = Server::start_with(Config::default(), threads(2, None)).unwrap();
    assert_eq!(server.health(), Ok(200));
    let both = [mask.as_str(), mask.as_str()];
    assert_eq!(settled(WORKER_THREAD, &both), both);
    assert_eq!(cpus_of(SERVER_THREAD), vec![mask]);
    server.stop().unwrap();
    assert_eq!(
        settled(WORKER_THREAD, &[]),
        Vec::<String>::new(),
        "workers left"
    );
}

#[test]
fn serve_pins_one_worker_to_each_cpu_of_the_list_in_turn() {
    if !two_cpus("serve_pins_one_worker_to_each_cpu_of_the_list_in_turn") {
        return;
    }
    let _one = one_at_a_time();
    let server = Server::start_with(Config::default(), threads(3, Some(vec![1, 0]))).unwrap();
    assert_eq!(server.health(), Ok(200));
    assert_eq!(settled(WORKER_THREAD, &["0", "1", "1"]), ["0", "1", "1"]);
    // The thread driving the runtime is confined to the whole list.
    assert_eq!(cpus_of(SERVER_THREAD), ["0-1"]);
    server.stop().unwrap();
    assert_eq!(
        settled(WORKER_THREAD, &[]),
        Vec::<String>::new(),
        "workers left"
    );

    // Without a worker count: one worker per CPU of the list.
    let server = Server::start_with(Config::default(), threads(0, Some(vec![1]))).unwrap();
    assert_eq!(server.health(), Ok(200));
    assert_eq!(settled(WORKER_THREAD, &["1"]), ["1"]);
    server.stop().unwrap();
}

/// A CPU that is not online here: the first past /sys/devices/system/cpu/online.
fn offline_cpu() -> usize {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let online = cpus::parse_list(online.trim()).unwrap();
    (0..).find(|cpu| !online.contains(cpu)).unwrap()
}

#[test]
fn a_cpu_that_is_not_online_is_refused_naming_it() {
    let _one = one_at_a_time();
    let offline = offline_cpu();
    let before = allowed_here();
    let usable = cpus::parse_list(&before).unwrap()[0];
    // With a usable CPU beside it too: the kernel would take the pair as a whole.
    for list in [vec![offline], vec![usable, offline], vec![1000]] {
        let refused = Server::start_with(Config::default(), threads(0, Some(list.clone())));
        let Err(err) = refused else {
            panic!("--cpus {list:?} was accepted");
        };
        assert!(matches!(err, Error::Cpus { .. }), "{err:?}");
        let message = err.to_string();
        let named = format!("--cpus {list:?}: CPU {}: ", list[list.len() - 1]);
        assert!(message.contains(&named), "{message}");
        assert!(
            message.ends_with("/sys/devices/system/cpu/online"),
            "{message}"
        );
    }
    assert_eq!(
        settled(WORKER_THREAD, &[]),
        Vec::<String>::new(),
        "a runtime started"
    );
    let refused = runtime::build(&threads(2, Some(vec![])));
    assert!(matches!(refused, Err(Error::Cpus { .. })), "an empty list");
    assert_eq!(
        allowed_here(),
        before,
        "a refused list pinned the calling thread"
    );
}

#[test]
fn an_address_in_use_is_refused_before_the_ready_line() {
    let _one = one_at_a_time();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let mut ready = false;
    let err = runtime::serve(
        addr,
        Config::default(),
        &threads(1, None),
        std::future::pending::<()>(),
        |_| ready = true,
    )
    .unwrap_err();
    assert!(!ready, "the ready callback ran");
    assert!(matches!(err, Error::Bind { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&addr.to_string()) && message.ends_with("--addr 127.0.0.1:0"));
}
