//! FiveM's HTTP endpoints, served from the server state over TCP on the game port, as a
//! CitizenFX server serves them beside `getinfo`: `/players.json` (the player list clients
//! read), `/dynamic.json` (the counts and names `getinfo` carries) and `/info.json` (the
//! server's variables).
//!
//! - One request a connection, `GET` or `HEAD`, HTTP/1.0 or 1.1; the answer says
//!   `Connection: close` and the connection closes once it is written. A query string is
//!   ignored; any other path is `404`, any other method `405`.
//! - Strict about the request: its head (request line and headers) may take at most
//!   [`MAX_REQUEST`] bytes and [`MAX_HEADERS`] headers (`431` past either), and bytes that are
//!   not HTTP get `400`; nothing is read after the head. A peer that sends the head slowly, or
//!   never finishes it, is cut by the listener's idle and session timeouts
//!   ([`ListenerLimits`](crate::tcp::ListenerLimits)), which also cap connections in total
//!   and per address.
//! - The JSON is built from the state snapshot when the request is whole: players get the
//!   state's id (else their place, from 1), name and ping; no identifiers or address.

use std::time::Instant;

use query_specs::fivem::{PlayerEntry, GAME_NAME};
use serde_json::{json, Map, Value};

use crate::state::{ServerState, SharedState};
use crate::stream::StreamResponder;

/// The most bytes a request's head may take.
pub const MAX_REQUEST: usize = 4096;
/// The most headers a request may carry.
pub const MAX_HEADERS: usize = 32;

/// Serves one HTTP connection of a FiveM server from a [`SharedState`]; see the
/// [module](self) docs.
///
/// ```
/// use std::time::Instant;
/// use query_net::engines::fivem::http::FivemHttpResponder;
/// use query_net::state::{PlayerState, ServerState, SharedState};
/// use query_net::stream::StreamResponder;
///
/// let state = SharedState::new(ServerState {
///     players: vec![PlayerState { name: "Zoë".into(), ping: 40, ..PlayerState::default() }],
///     ..ServerState::default()
/// });
/// let mut connection = FivemHttpResponder::new(state);
/// connection.handle_bytes(b"GET /players.json HTTP/1.1\r\nHost: x\r\n\r\n", Instant::now());
/// let answer = String::from_utf8(connection.poll_transmit().unwrap()).unwrap();
/// assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(answer.ends_with(r#"[{"id":1,"name":"Zoë","ping":40}]"#));
/// assert!(connection.is_closed());
/// ```
#[derive(Debug)]
pub struct FivemHttpResponder {
    state: SharedState,
    head: Vec<u8>,
    answer: Option<Vec<u8>>,
    answered: bool,
}

impl FivemHttpResponder {
    /// A connection answered from `state`.
    pub fn new(state: SharedState) -> Self {
        FivemHttpResponder {
            state,
            head: Vec::new(),
            answer: None,
            answered: false,
        }
    }

    fn answer(&mut self, answer: Vec<u8>) {
        self.answer = Some(answer);
        self.answered = true;
        self.head = Vec::new();
    }
}

impl StreamResponder for FivemHttpResponder {
    fn handle_bytes(&mut self, bytes: &[u8], _now: Instant) {
        if self.answered {
            return;
        }
        if self.head.len() + bytes.len() > MAX_REQUEST {
            // Only what fits is kept: a whole head within the cap is still answered.
            let room = MAX_REQUEST - self.head.len();
            self.head.extend_from_slice(&bytes[..room]);
            match parse(&self.head, &self.state.load()) {
                Parsed::Answer(answer) => self.answer(answer),
                Parsed::Partial => self.answer(error(431, "Request Header Fields Too Large")),
            }
            return;
        }
        self.head.extend_from_slice(bytes);
        if let Parsed::Answer(answer) = parse(&self.head, &self.state.load()) {
            self.answer(answer);
        }
    }

    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.answer.take()
    }

    fn is_closed(&self) -> bool {
        self.answered && self.answer.is_none()
    }
}

/// What the bytes of a request's head so far call for.
enum Parsed {
    /// The head is whole (or hopeless): this is the answer.
    Answer(Vec<u8>),
    /// More bytes are needed.
    Partial,
}

/// The answer to `head` from `state`, if the head is whole or cannot become a request.
fn parse(head: &[u8], state: &ServerState) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let (method, path) = match request.parse(head) {
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => {
            return Parsed::Answer(error(431, "Request Header Fields Too Large"))
        }
        Err(_) => return Parsed::Answer(error(400, "Bad Request")),
        Ok(httparse::Status::Complete(_)) => (
            request.method.unwrap_or_default(),
            request.path.unwrap_or_default(),
        ),
    };
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Parsed::Answer(error(405, "Method Not Allowed")),
    };
    let path = path.split('?').next().unwrap_or_default();
    let body = match path {
        "/players.json" => players_json(state),
        "/dynamic.json" => dynamic_json(state),
        "/info.json" => info_json(state),
        _ => return Parsed::Answer(error(404, "Not Found")),
    };
    let body = body.to_string();
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        answer.extend_from_slice(body.as_bytes());
    }
    Parsed::Answer(answer)
}

/// An error answer with an empty body.
fn error(code: u16, reason: &str) -> Vec<u8> {
    format!("HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .into_bytes()
}

/// `/players.json`: every player of the state.
fn players_json(state: &ServerState) -> Value {
    let players: Vec<PlayerEntry> = state
        .players
        .iter()
        .zip(1u32..)
        .map(|(p, place)| PlayerEntry {
            id: p.id.unwrap_or(place),
            name: p.name.clone(),
            ping: p.ping,
            endpoint: String::new(),
            identifiers: Vec::new(),
        })
        .collect();
    json!(players)
}

/// `/dynamic.json`: what changes while the server runs (the slots as text, as FiveM sends
/// them).
fn dynamic_json(state: &ServerState) -> Value {
    json!({
        "clients": state.num_players(),
        "gametype": state.game_type,
        "hostname": state.name,
        "iv": "0",
        "mapname": state.map,
        "sv_maxclients": state.max_players.to_string(),
    })
}

/// `/info.json`: the server's variables (the state's rules as text, then the slots and the
/// name), no resources.
fn info_json(state: &ServerState) -> Value {
    let mut vars = Map::new();
    for (key, value) in &state.rules {
        vars.insert(key.clone(), Value::String(value.as_text().into_owned()));
    }
    vars.insert(
        "sv_maxClients".to_owned(),
        Value::String(state.max_players.to_string()),
    );
    vars.insert(
        "sv_projectName".to_owned(),
        Value::String(state.name.clone()),
    );
    let server = if state.version.is_empty() {
        GAME_NAME.to_owned()
    } else {
        state.version.clone()
    };
    json!({
        "enhancedHostSupport": true,
        "resources": [],
        "server": server,
        "vars": vars,
        "version": 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::PlayerState;

    fn connection() -> FivemHttpResponder {
        FivemHttpResponder::new(SharedState::new(ServerState {
            name: "RP".to_owned(),
            max_players: 48,
            players: vec![PlayerState {
                name: "Ann".to_owned(),
                ping: 31,
                id: Some(7),
                ..PlayerState::default()
            }],
            ..ServerState::default()
        }))
    }

    fn answer_to(pieces: &[&[u8]]) -> Option<String> {
        let mut c = connection();
        for piece in pieces {
            c.handle_bytes(piece, Instant::now());
        }
        let answer = c.poll_transmit().map(|a| String::from_utf8(a).unwrap());
        assert_eq!(c.is_closed(), answer.is_some());
        answer
    }

    #[test]
    fn a_request_split_anywhere_is_answered_once_whole() {
        let request = b"GET /players.json?x=1 HTTP/1.0\r\nHost: a\r\n\r\n";
        for cut in 1..request.len() {
            let answer = answer_to(&[&request[..cut], &request[cut..]]).unwrap();
            assert!(
                answer.ends_with(r#"[{"id":7,"name":"Ann","ping":31}]"#),
                "{answer}"
            );
        }
        assert_eq!(answer_to(&[b"GET /players.json HTTP/1.0\r\n"]), None);
    }

    #[test]
    fn every_endpoint_and_every_refusal() {
        let get = |path: &str| answer_to(&[format!("GET {path} HTTP/1.1\r\n\r\n").as_bytes()]);
        let dynamic = get("/dynamic.json").unwrap();
        assert!(dynamic.contains(r#""clients":1"#), "{dynamic}");
        assert!(dynamic.contains(r#""sv_maxclients":"48""#), "{dynamic}");
        let info = get("/info.json").unwrap();
        assert!(info.contains(r#""sv_projectName":"RP""#), "{info}");
        assert!(get("/").unwrap().starts_with("HTTP/1.1 404 "));
        let head = answer_to(&[b"HEAD /players.json HTTP/1.1\r\n\r\n"]).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 ") && head.ends_with("\r\n\r\n"));
        let post = answer_to(&[b"POST /players.json HTTP/1.1\r\n\r\n"]).unwrap();
        assert!(post.starts_with("HTTP/1.1 405 "));
        let garbage = answer_to(&[b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"]).unwrap();
        assert!(garbage.starts_with("HTTP/1.1 400 "));
    }

    #[test]
    fn an_oversized_head_is_refused_without_buffering_it() {
        let mut c = connection();
        c.handle_bytes(b"GET /players.json HTTP/1.1\r\n", Instant::now());
        let header = format!("X-Pad: {}\r\n", "a".repeat(1000));
        for _ in 0..5 {
            c.handle_bytes(header.as_bytes(), Instant::now());
            assert!(c.head.len() <= MAX_REQUEST);
        }
        let answer = String::from_utf8(c.poll_transmit().unwrap()).unwrap();
        assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
        assert!(c.is_closed());
        let many: String = (0..=MAX_HEADERS).map(|i| format!("H{i}: v\r\n")).collect();
        let answer = answer_to(&[format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()]).unwrap();
        assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
    }
}
