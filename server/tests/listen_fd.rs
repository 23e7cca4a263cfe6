//! `--listen-fd N`: the binary serves on a listening TCP socket it inherits (the harness binds
//! it, so the server can run with no network of its own), prints that socket's address, and
//! refuses, naming the flag, a descriptor that is not one.

use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{Command, Output, Stdio};

#[allow(dead_code)] // spawn_binary_with_fd, binary_command and keep_open only.
mod common;

fn signal(child: &std::process::Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The binary run to its end with `fd` inherited: its status and stderr.
fn run_with_fd(args: &[&str], fd: RawFd) -> Output {
    let mut command = common::binary_command(args);
    common::keep_open(&mut command, fd);
    command.stderr(Stdio::piped()).output().unwrap()
}

fn refusal(fd: RawFd) -> Output {
    run_with_fd(&["--listen-fd", &fd.to_string(), "--workers", "1"], fd)
}

#[tokio::test]
async fn serves_on_the_inherited_socket_and_prints_its_address() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let fd = listener.as_raw_fd();
    let (mut child, line) =
        common::spawn_binary_with_fd(&["--listen-fd", &fd.to_string(), "--workers", "1"], fd);
    assert_eq!(line, format!("hft-server listening on http://{addr}\n"));
    // The test's copy closed: whatever answers now is the server, on the socket it was handed.
    drop(listener);
    let status = reqwest::get(format!("http://{addr}/health"))
        .await
        .unwrap()
        .status();
    assert_eq!(status.as_u16(), 200);
    signal(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

fn assert_refused(output: &Output, fd: RawFd, problem: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "hft-server: --listen-fd {fd}: descriptor {fd} {problem}"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("pass the number of a TCP socket that is bound, listening"),
        "{stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "no startup line for a refused descriptor"
    );
}

#[test]
fn refuses_a_descriptor_that_is_not_a_listening_tcp_socket() {
    let file = std::fs::File::open(env!("CARGO_MANIFEST_DIR").to_owned() + "/Cargo.toml").unwrap();
    assert_refused(
        &refusal(file.as_raw_fd()),
        file.as_raw_fd(),
        "is a regular file, not a socket",
    );

    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    assert_refused(
        &refusal(udp.as_raw_fd()),
        udp.as_raw_fd(),
        "is a UDP socket, not TCP",
    );

    // A TCP socket, connected rather than listening.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    assert_refused(
        &refusal(stream.as_raw_fd()),
        stream.as_raw_fd(),
        "is a TCP socket that is not listening",
    );

    // A number nothing is open under (std opens everything close-on-exec, so the child has
    // only what it was handed and its standard streams).
    let closed = 1000;
    let output = common::binary_command(&["--listen-fd", "1000"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_refused(&output, closed, "is not open here");
}

#[test]
fn listen_fd_and_addr_together_are_a_usage_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let fd = listener.as_raw_fd();
    let output = run_with_fd(
        &["--listen-fd", &fd.to_string(), "--addr", "127.0.0.1:0"],
        fd,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'--listen-fd <N>' cannot be used with '--addr <ADDR>'"),
        "{stderr}"
    );
}
