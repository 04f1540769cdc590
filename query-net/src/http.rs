//! A small HTTP/1.0 GET, for the protocols that keep part of their answer behind HTTP on the
//! game port (FiveM's `/players.json`): a [`StreamSession`] run by
//! [`run_stream`](crate::tcp::run_stream), so that it has the connect timeout, the deadline
//! and the byte cap of every TCP exchange.
//!
//! The response's status line and headers are parsed by `httparse`; the body ends at its
//! `Content-Length`, at the end of its chunks (`Transfer-Encoding: chunked`), or at the end of
//! the stream. Strict: any status but 200, a body longer than the cap, and a stream that ends
//! inside the headers, a chunk or the declared length are errors, never a shorter body.

use std::net::SocketAddr;
use std::time::Instant;

use crate::error::QueryError;
use crate::options::Options;
use crate::stream::StreamSession;
use crate::tcp::{run_stream, StreamLimits};

/// The most headers a response may carry.
const MAX_HEADERS: usize = 64;

/// `GET path` as a sans-I/O session; its output is the body.
#[derive(Debug)]
pub struct HttpGet {
    request: Vec<u8>,
    sent: bool,
    received: Vec<u8>,
    max_body: usize,
    result: Option<Result<Vec<u8>, QueryError>>,
    finished: bool,
}

impl HttpGet {
    /// A GET of `path` from `host` (the `Host` header), whose body may take `max_body` bytes.
    pub fn new(host: &str, path: &str, max_body: usize) -> Self {
        let request = format!(
            "GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\nUser-Agent: gsq\r\n\r\n"
        )
        .into_bytes();
        HttpGet {
            request,
            sent: false,
            received: Vec::new(),
            max_body,
            result: None,
            finished: false,
        }
    }

    fn finish(&mut self, result: Result<Vec<u8>, QueryError>) {
        if !self.finished {
            self.finished = true;
            self.result = Some(result);
        }
    }

    /// Finishes when the body is whole; `eof` says the stream ended.
    fn try_finish(&mut self, eof: bool) {
        if self.finished {
            return;
        }
        match body(&self.received, eof, self.max_body) {
            Ok(Some(body)) => self.finish(Ok(body)),
            Ok(None) if eof => self.finish(Err(QueryError::protocol(
                "the HTTP response ended before its body did",
            ))),
            Ok(None) => {}
            Err(error) => self.finish(Err(error)),
        }
    }
}

/// The body of the response in `bytes`, once it is whole; `None` while more is needed.
fn body(bytes: &[u8], eof: bool, max_body: usize) -> Result<Option<Vec<u8>>, QueryError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(QueryError::protocol(format!("not an HTTP response: {e}"))),
    };
    match response.code {
        Some(200) => {}
        code => {
            return Err(QueryError::protocol(format!(
                "the server answered HTTP {} {}",
                code.unwrap_or_default(),
                response.reason.unwrap_or_default()
            )))
        }
    }
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
    };
    let rest = &bytes[head_len..];
    let too_long = |len: usize| {
        QueryError::protocol(format!(
            "the HTTP body takes {len} bytes, over the {max_body} allowed"
        ))
    };
    if header("transfer-encoding").is_some_and(|te| te.ends_with("chunked")) {
        return chunked(rest, max_body);
    }
    if let Some(length) = header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| QueryError::protocol(format!("a bad Content-Length: {length}")))?;
        if length > max_body {
            return Err(too_long(length));
        }
        return Ok((rest.len() >= length).then(|| rest[..length].to_vec()));
    }
    if rest.len() > max_body {
        return Err(too_long(rest.len()));
    }
    Ok(eof.then(|| rest.to_vec()))
}

/// A chunked body, once its last chunk has arrived.
fn chunked(mut rest: &[u8], max_body: usize) -> Result<Option<Vec<u8>>, QueryError> {
    let mut body = Vec::new();
    loop {
        let (start, size) = match httparse::parse_chunk_size(rest) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(QueryError::protocol("a bad HTTP chunk size")),
        };
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        if size > max_body.saturating_sub(body.len()) {
            return Err(QueryError::protocol(format!(
                "the HTTP body takes over the {max_body} bytes allowed"
            )));
        }
        if size == 0 {
            return Ok(Some(body));
        }
        let chunk = &rest[start..];
        // The chunk, then its CRLF.
        if chunk.len() < size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&chunk[..size]);
        rest = &chunk[size + 2..];
    }
}

impl StreamSession for HttpGet {
    type Output = Vec<u8>;

    fn poll_transmit(&mut self, _now: Instant) -> Option<&[u8]> {
        if self.sent || self.finished {
            return None;
        }
        self.sent = true;
        Some(&self.request)
    }

    fn handle_bytes(&mut self, bytes: &[u8], _now: Instant) {
        self.received.extend_from_slice(bytes);
        self.try_finish(false);
    }

    fn handle_eof(&mut self, _now: Instant) {
        self.try_finish(true);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_result(&mut self) -> Option<Result<Vec<u8>, QueryError>> {
        self.result.take()
    }
}

/// `GET path` from `address` over TCP, within `options`' connect timeout and `deadline`; the
/// body may take `max_body` bytes (and the whole response [`Options::max_reply_bytes`]).
pub async fn get(
    address: SocketAddr,
    path: &str,
    options: &Options,
    deadline: std::time::Duration,
    max_body: usize,
) -> Result<Vec<u8>, QueryError> {
    let limits = StreamLimits {
        deadline,
        ..StreamLimits::from_options(options)
    };
    let session = HttpGet::new(&address.to_string(), path, max_body);
    run_stream(address, session, limits).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]], eof: bool) -> Option<Result<Vec<u8>, QueryError>> {
        let now = Instant::now();
        let mut get = HttpGet::new("127.0.0.1:30120", "/players.json", 64);
        assert!(get
            .poll_transmit(now)
            .unwrap()
            .starts_with(b"GET /players.json HTTP/1.0\r\n"));
        assert!(get.poll_transmit(now).is_none());
        for chunk in chunks {
            get.handle_bytes(chunk, now);
        }
        if eof {
            get.handle_eof(now);
        }
        get.poll_result()
    }

    #[test]
    fn bodies_end_at_their_length_their_last_chunk_or_the_stream() {
        let sized = run(
            &[b"HTTP/1.1 200 OK\r\nContent-Le", b"ngth: 2\r\n\r\n[", b"]"],
            false,
        );
        assert_eq!(sized.unwrap().unwrap(), b"[]");
        let chunks = run(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[1\r\n1\r\n]\r\n0\r\n\r\n"], false);
        assert_eq!(chunks.unwrap().unwrap(), b"[1]");
        assert!(
            run(&[b"HTTP/1.0 200 OK\r\n\r\n[2]"], false).is_none(),
            "waits for the end"
        );
        assert_eq!(
            run(&[b"HTTP/1.0 200 OK\r\n\r\n[2]"], true)
                .unwrap()
                .unwrap(),
            b"[2]"
        );
    }

    #[test]
    fn errors_and_cuts_are_errors_never_a_shorter_body() {
        let not_found = run(&[b"HTTP/1.1 404 Not Found\r\n\r\n"], false).unwrap();
        assert!(not_found.unwrap_err().to_string().contains("404"));
        assert!(
            run(&[b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n[]"], true)
                .unwrap()
                .is_err()
        );
        assert!(
            run(&[b"HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n"], false)
                .unwrap()
                .is_err()
        );
        assert!(run(
            &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nff\r\n"],
            false
        )
        .unwrap()
        .is_err());
        assert!(run(&[b"HTTP/1.0 200 OK\r\n\r\n", &[b'x'; 65]], false)
            .unwrap()
            .is_err());
        assert!(run(&[b"HTTP/1.1 200 OK\r\nContent-Le"], true)
            .unwrap()
            .is_err());
        assert!(run(&[b"SSH-2.0-OpenSSH\r\n"], false).unwrap().is_err());
    }
}
