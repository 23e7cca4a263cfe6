//! The binary's contract: the startup line, flags, and exit 0 on SIGTERM / SIGINT.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

fn start(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hft-server"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn port_of(line: &str) -> u16 {
    let rest = line
        .strip_prefix("hft-server listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected startup line {line:?}"));
    rest.trim_end().parse().unwrap()
}

async fn health(port: u16) -> u16 {
    reqwest::get(format!("http://127.0.0.1:{port}/health"))
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn prints_the_port_serves_and_exits_0_on_sigterm() {
    let (mut child, line) = start(&["--addr", "127.0.0.1:0", "--workers", "1"]);
    let port = port_of(&line);
    assert_ne!(port, 0);
    assert_eq!(health(port).await, 200);
    signal(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[tokio::test]
async fn exits_0_on_sigint() {
    let (mut child, line) = start(&["--addr", "127.0.0.1:0", "--inject-delay-us", "5"]);
    assert_eq!(health(port_of(&line)).await, 200);
    signal(&child, "INT");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn bad_flags_fail_with_a_message_naming_the_flag() {
    for args in [
        &["--workers", "0"][..],
        &["--max-resting-per-symbol", "0"],
        &["--addr", "not-an-address"],
        &["--inject-delay-us=-1"],
        &["--workers", "many"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_hft-server"))
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let flag = args[0].split('=').next().unwrap();
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
}

#[test]
fn an_address_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_hft-server"))
        .args(["--addr", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&addr) && stderr.contains("--addr"),
        "{stderr}"
    );
}
