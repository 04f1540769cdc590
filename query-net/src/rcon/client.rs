//! The async RCON client: a [`Session`] over a tokio `TcpStream`.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Flavour, Reply, Session};
use crate::error::QueryError;
use crate::options::Options;
use crate::tcp::{CONNECTING, READ_CHUNK};

/// One authenticated RCON connection.
///
/// [`connect`](Client::connect) opens it and sends the password, within
/// [`Options::timeout`] for the TCP handshake and [`Options::deadline`] for the whole; each
/// [`command`](Client::command) must be answered within [`Options::deadline`] too, and its
/// output may take at most [`Options::max_reply_bytes`]. After an error the connection is
/// closed; [`reconnect`](Client::reconnect) opens a new one and authenticates again.
///
/// ```no_run
/// use query_net::rcon::{Client, Flavour};
/// use query_net::Options;
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let target = "203.0.113.5:25575".parse().unwrap();
/// let mut rcon = Client::connect(target, Flavour::Minecraft, "secret", &Options::default()).await?;
/// println!("{}", rcon.command("list").await?);
/// # Ok(())
/// # }
/// ```
pub struct Client {
    target: SocketAddr,
    flavour: Flavour,
    password: String,
    options: Options,
    connection: Option<(TcpStream, Session)>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("target", &self.target)
            .field("flavour", &self.flavour)
            .field("password", &"<redacted>")
            .field("connected", &self.connection.is_some())
            .finish()
    }
}

impl Client {
    /// Connects to the `flavour` server at `target` and authenticates with `password`.
    ///
    /// A refused password is [`QueryError::AuthRequired`]; a port where nothing listens
    /// [`QueryError::ConnectionRefused`].
    pub async fn connect(
        target: SocketAddr,
        flavour: Flavour,
        password: &str,
        options: &Options,
    ) -> Result<Client, QueryError> {
        let mut client = Client {
            target,
            flavour,
            password: password.to_owned(),
            options: options.clone(),
            connection: None,
        };
        client.reconnect().await?;
        Ok(client)
    }

    /// The server's address.
    pub fn target(&self) -> SocketAddr {
        self.target
    }

    /// Whether a connection is open (none after an error, until [`reconnect`](Client::reconnect)).
    pub fn is_connected(&self) -> bool {
        self.connection.is_some()
    }

    /// Closes the connection, if one is open, then connects and authenticates again.
    pub async fn reconnect(&mut self) -> Result<(), QueryError> {
        self.connection = None;
        let started = Instant::now();
        let ends_at = started + self.options.deadline;
        let mut stream = connect(self.target, &self.options, started, ends_at).await?;
        let mut session = Session::new(self.flavour, self.options.max_reply_bytes);
        session.authenticate(self.password.as_bytes())?;
        match exchange(&mut stream, &mut session, ends_at, self.options.deadline).await? {
            Reply::Authenticated => {
                self.connection = Some((stream, session));
                Ok(())
            }
            Reply::Output(_) => Err(QueryError::protocol(
                "RCON: an answer to a command never sent",
            )),
        }
    }

    /// Runs `command` and returns its output, the server's bytes read as UTF-8 (invalid
    /// sequences replaced).
    pub async fn command(&mut self, command: &str) -> Result<String, QueryError> {
        let output = self.command_bytes(command.as_bytes()).await?;
        Ok(super::lossy_text(output))
    }

    /// Runs `command` and returns its output as the bytes the server sent.
    ///
    /// A command the flavour does not allow (too long, holding a NUL) is refused before
    /// anything is sent and leaves the connection open; any other error closes it.
    pub async fn command_bytes(&mut self, command: &[u8]) -> Result<Vec<u8>, QueryError> {
        let (stream, session) = self.connection.as_mut().ok_or_else(|| {
            QueryError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                "the RCON connection is closed: reconnect first",
            ))
        })?;
        if let Err(error) = session.command(command) {
            if session.is_failed() {
                self.connection = None;
            }
            return Err(error);
        }
        let ends_at = Instant::now() + self.options.deadline;
        match exchange(stream, session, ends_at, self.options.deadline).await {
            Ok(Reply::Output(output)) => Ok(output),
            Ok(Reply::Authenticated) => {
                self.connection = None;
                Err(QueryError::protocol("RCON: a second auth response"))
            }
            Err(error) => {
                self.connection = None;
                Err(error)
            }
        }
    }
}

async fn connect(
    target: SocketAddr,
    options: &Options,
    started: Instant,
    ends_at: Instant,
) -> Result<TcpStream, QueryError> {
    let connect_by = ends_at.min(started + options.timeout);
    match tokio::time::timeout_at(connect_by.into(), TcpStream::connect(target)).await {
        Ok(Ok(stream)) => {
            stream.set_nodelay(true)?;
            Ok(stream)
        }
        Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
            Err(QueryError::ConnectionRefused { target })
        }
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(QueryError::Timeout {
            waiting_for: CONNECTING,
            attempts: 1,
            after: started.elapsed(),
        }),
    }
}

/// Writes what the session has to send and reads until it has the reply to its request, or
/// `ends_at` passes.
async fn exchange(
    stream: &mut TcpStream,
    session: &mut Session,
    ends_at: Instant,
    deadline: Duration,
) -> Result<Reply, QueryError> {
    let waiting_for = session.waiting_for().unwrap_or("request");
    let work = async {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            if let Some(bytes) = session.poll_transmit() {
                stream.write_all(&bytes).await?;
            }
            if let Some(reply) = session.poll_reply() {
                return reply;
            }
            match stream.read(&mut buf).await {
                Ok(0) => session.handle_eof(),
                Ok(len) => session.handle_bytes(&buf[..len]),
                Err(e) => {
                    return Err(QueryError::Io(io::Error::new(
                        e.kind(),
                        format!("the RCON connection was lost: {e}"),
                    )))
                }
            }
        }
    };
    tokio::time::timeout_at(ends_at.into(), work)
        .await
        .unwrap_or(Err(QueryError::Deadline {
            waiting_for,
            attempts: 1,
            after: deadline,
        }))
}
