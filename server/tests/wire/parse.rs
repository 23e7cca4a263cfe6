//! A strict reader of the server's answers: every byte must belong to a well-formed
//! HTTP/1.x answer (httparse for the head, content-length or chunked for the body).

/// Final answers complete in `bytes` so far (for `End::Answers`); a malformed one ends
/// the count (the caller's parse reports it).
pub(super) fn finals(bytes: &[u8], bodies: Bodies<'_>) -> usize {
    let mut count = 0;
    let mut at = 0;
    while at < bytes.len() {
        let head = bodies.head(count, &bytes[at..]);
        let Ok(Some((response, used))) = parse_one(&bytes[at..], head) else {
            break;
        };
        at += used;
        if response.status >= 200 {
            count += 1;
        }
    }
    count
}

/// One answer as read off the wire.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Lower-cased names.
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    /// 1xx answers (100 Continue) that came before it.
    pub interim: Vec<u16>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The server says it closes the connection after this answer.
    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"close"))
    }

    pub fn json(&self) -> Result<serde_json::Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| {
            format!(
                "{} body is not JSON ({e}): {:?}",
                self.status,
                self.body.escape_ascii().to_string()
            )
        })
    }
}

/// Which answers carry no body although they say a length: those to HEAD requests.
#[derive(Clone, Copy, Debug)]
pub enum Bodies<'a> {
    /// No HEAD was sent: every answer is framed by its headers.
    Framed,
    /// The i-th final answer answers a HEAD request when `heads[i]`.
    Heads(&'a [bool]),
    /// Unknown requests (fuzz bytes): an answer whose announced body is not there but the
    /// next answer's status line is, is taken as an answer to HEAD.
    Guess,
}

/// Splits `bytes` into answers, strictly: every byte must belong to a well-formed answer.
pub fn parse_responses(bytes: &[u8], bodies: Bodies<'_>) -> Result<Vec<Response>, String> {
    let mut responses = Vec::new();
    let mut interim = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let head = bodies.head(responses.len(), &bytes[at..]);
        match parse_one(&bytes[at..], head)? {
            Some((mut response, used)) => {
                at += used;
                if response.status < 200 {
                    interim.push(response.status);
                } else {
                    response.interim = std::mem::take(&mut interim);
                    responses.push(response);
                }
            }
            None => {
                return Err(format!(
                    "a truncated answer after {} complete ones: {:?}",
                    responses.len(),
                    bytes[at..].escape_ascii().to_string()
                ))
            }
        }
    }
    if !interim.is_empty() {
        return Err(format!("interim answers {interim:?} without a final one"));
    }
    Ok(responses)
}

impl Bodies<'_> {
    /// Whether the answer at the start of `bytes`, the `index`-th final one, has no body.
    fn head(self, index: usize, bytes: &[u8]) -> bool {
        match self {
            Bodies::Framed => false,
            Bodies::Heads(heads) => heads.get(index).copied().unwrap_or(false),
            // The server's bodies (JSON, metrics text) never start with a status line.
            Bodies::Guess => match parse_one(bytes, true) {
                Ok(Some((_, used))) => {
                    let rest = &bytes[used..];
                    rest.is_empty() || rest.starts_with(b"HTTP/1.")
                }
                _ => false,
            },
        }
    }
}

/// One answer from the start of `bytes`: `None` if incomplete, `Err` if malformed.
fn parse_one(bytes: &[u8], head_request: bool) -> Result<Option<(Response, usize)>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Response::new(&mut headers);
    let head_len = match parsed.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(err) => {
            return Err(format!(
                "not an HTTP answer ({err}): {:?}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ))
        }
    };
    let status = parsed.code.ok_or("no status code")?;
    let headers: Vec<(String, Vec<u8>)> = parsed
        .headers
        .iter()
        .map(|h| (h.name.to_ascii_lowercase(), h.value.to_vec()))
        .collect();
    let value = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let rest = &bytes[head_len..];
    let no_body = head_request || status < 200 || status == 204 || status == 304;
    let (body, used) = if no_body {
        (Vec::new(), 0)
    } else if let Some(te) = value("transfer-encoding") {
        if !te.eq_ignore_ascii_case(b"chunked") {
            return Err(format!(
                "transfer-encoding {:?}",
                te.escape_ascii().to_string()
            ));
        }
        match dechunk(rest)? {
            Some(found) => found,
            None => return Ok(None),
        }
    } else if let Some(length) = value("content-length") {
        let length: usize = std::str::from_utf8(length)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("content-length {:?}", length.escape_ascii().to_string()))?;
        if rest.len() < length {
            return Ok(None);
        }
        (rest[..length].to_vec(), length)
    } else {
        return Err(format!(
            "a {status} answer without content-length or chunked"
        ));
    };
    let response = Response {
        status,
        headers,
        body,
        interim: Vec::new(),
    };
    Ok(Some((response, head_len + used)))
}

/// A chunked body: its bytes and the length it took, `None` if incomplete.
fn dechunk(mut rest: &[u8]) -> Result<Option<(Vec<u8>, usize)>, String> {
    let start = rest.len();
    let mut body = Vec::new();
    loop {
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let size = std::str::from_utf8(&rest[..line_end])
            .ok()
            .and_then(|line| usize::from_str_radix(line.split(';').next()?.trim(), 16).ok())
            .ok_or("a bad chunk size line")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            // No trailers in the server's answers: the body ends with an empty line.
            return Ok(rest
                .starts_with(b"\r\n")
                .then(|| (body, start - rest.len() + 2)));
        }
        if rest.len() < size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}
