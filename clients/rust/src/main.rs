//! `client-rust`: flags → runtime → run → result. All logic lives in the library.
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hft_client_rust::args::{self, ArgsError};
use hft_client_rust::{output, runner, NAME};

fn main() -> ExitCode {
    let config = match args::parse(std::env::args_os()) {
        Ok(config) => config,
        Err(ArgsError::Help(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(ArgsError::Invalid(line)) => return fail(&line),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
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
    let runtime_threads = runtime.metrics().num_workers();
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
        let result = match runner::run(&config, runtime_threads, stop).await {
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
