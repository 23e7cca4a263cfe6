//! `client-rust`: flags → runtime → run → result. All logic lives in the library.
//! This thread's runtime only probes, waits for SIGINT and collects; the orders are sent
//! by one client thread per core (`runner`'s shards).
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hft_client_rust::args::{self, ArgsError};
use hft_client_rust::{output, runner, NAME};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let config = match args::parse(std::env::args_os()) {
        Ok(config) => config,
        Err(ArgsError::Help(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(ArgsError::Invalid(line)) => return fail(&line),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            return fail(&format!(
                "cannot start the tokio runtime ({err}); check ulimit -n and memory"
            ))
        }
    };
    // One client thread per core (on the 2-core box one thread for 50 connections reached
    // ~0.55 of wrk, two 0.6-0.8: a single thread loses its core to the server too often).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    runtime.block_on(async move {
        if let Err(line) = runner::probe(&config.target, runner::PROBE_DEADLINE).await {
            return fail(&line);
        }
        // Open the output before the run so an unwritable path costs seconds, not a whole run.
        let sink = match output::Sink::open(config.output.as_deref()) {
            Ok(sink) => sink,
            Err(line) => return fail(&line),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let on_sigint = Arc::clone(&stop);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_sigint.store(true, Ordering::Relaxed);
            }
        });
        let result = match runner::run(&config, threads, stop).await {
            Ok(result) => result,
            Err(line) => return fail(&line),
        };
        if let Err(line) = sink.write(&result) {
            return fail(&line);
        }
        if result.errors == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    })
}

/// Exit 2 with the one line the contract asks for.
fn fail(line: &str) -> ExitCode {
    eprintln!("{NAME}: {line}");
    ExitCode::from(2)
}
