//! A real server on 127.0.0.1:0, started through the library's `run`.

use std::net::SocketAddr;

use hft_server::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub struct TestServer {
    /// `http://127.0.0.1:PORT`, the port the OS picked.
    pub base: String,
    /// One keep-alive client, like the load clients use.
    pub client: reqwest::Client,
    /// Completes the shutdown future handed to `run`.
    stop: Option<oneshot::Sender<()>>,
    /// The task running `run`; joined by `stop()` to see it return.
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    pub async fn start(config: Config) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(hft_server::run(listener, config, async {
            let _ = stopped.await;
        }));
        TestServer {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends `body` to POST /order; returns the status and the parsed JSON answer.
    pub async fn post_order(&self, body: impl Into<reqwest::Body>) -> (u16, serde_json::Value) {
        let response = self
            .client
            .post(self.url("/order"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        json_of(response).await
    }

    pub async fn get(&self, path: &str) -> (u16, serde_json::Value) {
        json_of(self.client.get(self.url(path)).send().await.unwrap()).await
    }

    pub async fn post(&self, path: &str) -> (u16, serde_json::Value) {
        json_of(self.client.post(self.url(path)).send().await.unwrap()).await
    }

    /// Triggers the shutdown future and waits for `run` to return.
    pub async fn stop(mut self) -> std::io::Result<()> {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap()
    }
}

/// Status and JSON body; panics (failing the test) when the body is not JSON or the
/// Content-Type is not application/json.
pub async fn json_of(response: reqwest::Response) -> (u16, serde_json::Value) {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    assert_eq!(
        content_type.as_deref(),
        Some("application/json"),
        "{status} {text}"
    );
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status} {text:?}: {e}"));
    (status, value)
}

/// An order in the clients' exact format.
pub fn order(
    side: &str,
    symbol: u32,
    price: &str,
    quantity: u64,
    price_type: &str,
    tif: &str,
) -> String {
    format!(
        r#"{{"buy_sell":"{side}","symbol":{symbol},"price":{price},"quantity":{quantity},"market_type":"common","price_type":"{price_type}","time_in_force":"{tif}","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}}"#
    )
}

/// The hft-server binary started with `args` (stdout piped, stderr dropped) and its first
/// stdout line, the startup line: the tests that need the process itself (signals, its
/// /proc CPU time) rather than the library.
#[allow(dead_code)] // a test file that starts servers through the library does not use it
pub fn spawn_binary(args: &[&str]) -> (std::process::Child, String) {
    spawn_with_stderr(args, std::process::Stdio::null())
}

/// As spawn_binary, with stderr piped: for a test that reads the server's last words.
#[allow(dead_code)]
pub fn spawn_binary_piped(args: &[&str]) -> (std::process::Child, String) {
    spawn_with_stderr(args, std::process::Stdio::piped())
}

/// As spawn_binary, with the test's descriptor `fd` (a listening socket) left open in the
/// server under the same number: for `--listen-fd`.
#[allow(dead_code)]
pub fn spawn_binary_with_fd(
    args: &[&str],
    fd: std::os::fd::RawFd,
) -> (std::process::Child, String) {
    let mut command = binary_command(args);
    keep_open(&mut command, fd);
    read_startup_line(command.stderr(std::process::Stdio::null()))
}

/// The hft-server binary's command with `args`, stdout piped.
#[allow(dead_code)]
pub fn binary_command(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_hft-server"));
    command.args(args).stdout(std::process::Stdio::piped());
    command
}

/// Leaves `fd` open across `command`'s exec (std opens every descriptor close-on-exec),
/// in the child only: the test's other spawns do not inherit it.
#[allow(dead_code)]
pub fn keep_open(command: &mut std::process::Command, fd: std::os::fd::RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: fcntl is async-signal-safe; only the child's descriptor table changes.
    unsafe {
        command.pre_exec(move || {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn spawn_with_stderr(args: &[&str], stderr: std::process::Stdio) -> (std::process::Child, String) {
    read_startup_line(binary_command(args).stderr(stderr))
}

/// Spawns `command` and reads its first stdout line, the startup line.
fn read_startup_line(command: &mut std::process::Command) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

/// One raw keep-alive connection to a test server: for the tests that must know exactly how
/// many connections are open (a pooling client may open a second one between requests).
#[allow(dead_code)] // the tests that count their connections use it (contention, faults)
pub struct RawConnection(TcpStream);

#[allow(dead_code)]
impl RawConnection {
    pub async fn open(server: &TestServer) -> RawConnection {
        let addr = server.base.strip_prefix("http://").unwrap();
        let tcp = TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        RawConnection(tcp)
    }

    /// Sends one request; the status and the body of its answer.
    pub async fn ask(&mut self, request: &str) -> (u16, String) {
        self.0.write_all(request.as_bytes()).await.unwrap();
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let read = self.0.read(&mut chunk).await.unwrap();
            assert!(read > 0, "closed: {:?}", String::from_utf8_lossy(&bytes));
            bytes.extend_from_slice(&chunk[..read]);
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut head = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(size) = head.parse(&bytes).unwrap() {
                let length: usize = head
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
                    .unwrap();
                if bytes.len() >= size + length {
                    let body = String::from_utf8_lossy(&bytes[size..size + length]);
                    return (head.code.unwrap(), body.into_owned());
                }
            }
        }
    }

    /// Sends one valid order (an IOC on an empty book); the status and body of its answer.
    pub async fn order(&mut self) -> (u16, String) {
        let body = order("buy", 7, "10.00", 1, "limit", "ioc");
        let request = format!(
            "POST /order HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.ask(&request).await
    }

    /// `GET /stats`.
    pub async fn stats(&mut self) -> serde_json::Value {
        let (code, body) = self.ask("GET /stats HTTP/1.1\r\nHost: test\r\n\r\n").await;
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }
}
