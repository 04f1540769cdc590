//! The async BattlEye RCon client: a [`Session`] over a tokio `UdpSocket`, in a task.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::{sleep_until, Event, Session, MAX_DATAGRAM};
use crate::error::QueryError;
use crate::options::Options;

/// Server messages kept for the caller at most; past it, new ones are counted and dropped
/// (they are still acknowledged, so the server does not resend or cut the session).
pub const MESSAGE_BACKLOG: usize = 1024;

/// What the task is asked to do.
enum Request {
    Login(Vec<u8>),
    Command(Vec<u8>),
}

type Answer = oneshot::Sender<Result<Event, QueryError>>;

/// One logged-in BattlEye RCon session.
///
/// [`connect`](Client::connect) logs in within [`Options::deadline`], resending every
/// [`Options::timeout`]; each [`command`](Client::command) must be answered within the
/// deadline too, and its output may take at most [`Options::max_reply_bytes`]. Between
/// commands a task keeps the session: it acknowledges the server's messages (read them with
/// [`messages`](Client::messages)) and sends keep-alives. After the session failed,
/// [`reconnect`](Client::reconnect) logs in again.
///
/// ```no_run
/// use query_net::rcon::battleye::Client;
/// use query_net::Options;
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let target = "203.0.113.5:2306".parse().unwrap();
/// let mut rcon = Client::connect(target, "secret", &Options::default()).await?;
/// println!("{}", rcon.command("players").await?);
/// while let Ok(message) = rcon.messages().try_recv() {
///     println!("{}", String::from_utf8_lossy(&message));
/// }
/// # Ok(())
/// # }
/// ```
pub struct Client {
    target: SocketAddr,
    password: String,
    options: Options,
    requests: mpsc::Sender<(Request, Answer)>,
    messages: mpsc::Receiver<Vec<u8>>,
    task: JoinHandle<()>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("target", &self.target)
            .field("password", &"<redacted>")
            .field("connected", &self.is_connected())
            .finish()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Client {
    /// Logs in to the BattlEye server at `target` with `password`.
    ///
    /// A refused password is [`QueryError::AuthRequired`]; no answer within the deadline
    /// [`QueryError::Deadline`] (or [`QueryError::Timeout`] once every attempt went
    /// unanswered); every attempt refused with an ICMP "port unreachable"
    /// [`QueryError::NothingListens`].
    pub async fn connect(
        target: SocketAddr,
        password: &str,
        options: &Options,
    ) -> Result<Client, QueryError> {
        let (requests, messages, task) = start(target, options).await?;
        let mut client = Client {
            target,
            password: password.to_owned(),
            options: options.clone(),
            requests,
            messages,
            task,
        };
        client.login().await?;
        Ok(client)
    }

    /// The server's address.
    pub fn target(&self) -> SocketAddr {
        self.target
    }

    /// Whether the session is still kept (not after it failed, until
    /// [`reconnect`](Client::reconnect)).
    pub fn is_connected(&self) -> bool {
        !self.task.is_finished()
    }

    /// The server's messages, acknowledged, in the order they arrived: chat lines, admins
    /// logging in, kicks. The channel holds at most [`MESSAGE_BACKLOG`].
    pub fn messages(&mut self) -> &mut mpsc::Receiver<Vec<u8>> {
        &mut self.messages
    }

    /// Starts a new session and logs in again (the old one, if any, is left).
    pub async fn reconnect(&mut self) -> Result<(), QueryError> {
        self.task.abort();
        let (requests, messages, task) = start(self.target, &self.options).await?;
        self.requests = requests;
        self.messages = messages;
        self.task = task;
        self.login().await
    }

    async fn login(&mut self) -> Result<(), QueryError> {
        let password = self.password.as_bytes().to_vec();
        match self.ask(Request::Login(password)).await? {
            Event::LoggedIn => Ok(()),
            _ => Err(QueryError::protocol("BattlEye: no login answer")),
        }
    }

    /// Runs `command` and returns its output, the server's bytes read as UTF-8 (invalid
    /// sequences replaced).
    pub async fn command(&mut self, command: &str) -> Result<String, QueryError> {
        let output = self.command_bytes(command.as_bytes()).await?;
        Ok(crate::rcon::lossy_text(output))
    }

    /// Runs `command` and returns its output as the bytes the server sent, its parts joined.
    pub async fn command_bytes(&mut self, command: &[u8]) -> Result<Vec<u8>, QueryError> {
        match self.ask(Request::Command(command.to_vec())).await? {
            Event::Output(output) => Ok(output),
            _ => Err(QueryError::protocol("BattlEye: no command answer")),
        }
    }

    async fn ask(&mut self, request: Request) -> Result<Event, QueryError> {
        let (answer, reply) = oneshot::channel();
        let lost = || {
            QueryError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                "the BattlEye session was lost: reconnect first",
            ))
        };
        self.requests
            .send((request, answer))
            .await
            .map_err(|_| lost())?;
        reply.await.map_err(|_| lost())?
    }
}

type Started = (
    mpsc::Sender<(Request, Answer)>,
    mpsc::Receiver<Vec<u8>>,
    JoinHandle<()>,
);

async fn start(target: SocketAddr, options: &Options) -> Result<Started, QueryError> {
    let local: SocketAddr = if target.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(local).await?;
    socket.connect(target).await?;
    let (requests, incoming) = mpsc::channel(1);
    let (messages_in, messages) = mpsc::channel(MESSAGE_BACKLOG);
    let session = Session::new(options.timeout, options.attempts(), options.max_reply_bytes);
    let task = tokio::spawn(run(
        socket,
        target,
        session,
        options.deadline,
        incoming,
        messages_in,
    ));
    Ok((requests, messages, task))
}

/// The request waiting for its answer, and when it is given up on.
struct Pending {
    answer: Answer,
    ends_at: Instant,
    waiting_for: &'static str,
}

/// Keeps the session until the client is dropped or the session fails.
async fn run(
    socket: UdpSocket,
    target: SocketAddr,
    mut session: Session,
    deadline: Duration,
    mut requests: mpsc::Receiver<(Request, Answer)>,
    messages: mpsc::Sender<Vec<u8>>,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut pending: Option<Pending> = None;
    // ICMP "port unreachable" messages: anyone can forge one, so they end nothing by
    // themselves; an unanswered login with one for every attempt is NothingListens.
    let mut refused = 0u32;
    loop {
        let now = Instant::now();
        while let Some(datagram) = session.poll_transmit(now) {
            // A refusal reported by the send is the previous datagram's: send again once.
            let mut sent = socket.send(&datagram).await;
            if sent.as_ref().is_err_and(is_refusal) {
                refused += 1;
                sent = socket.send(&datagram).await;
            }
            match sent {
                Ok(_) => {}
                Err(error) if is_refusal(&error) => refused += 1,
                Err(error) => {
                    fail(pending.take(), lost(&error));
                    return;
                }
            }
        }
        while let Some(event) = session.poll_event() {
            match event {
                Ok(Event::Message(message)) => {
                    // A full backlog drops the message; it was acknowledged all the same.
                    let _ = messages.try_send(message);
                }
                Ok(event) => {
                    if let Some(p) = pending.take() {
                        let _ = p.answer.send(Ok(event));
                    }
                }
                Err(QueryError::Timeout { attempts, .. }) if refused >= attempts => {
                    fail(
                        pending.take(),
                        QueryError::NothingListens { target, attempts },
                    );
                }
                Err(error) => fail(pending.take(), error),
            }
        }
        if session.is_failed() {
            return;
        }
        let wake = [session.poll_timeout(), pending.as_ref().map(|p| p.ends_at)]
            .into_iter()
            .flatten()
            .min();
        tokio::select! {
            received = socket.recv(&mut buf) => match received {
                Ok(len) => session.handle_datagram(&buf[..len], Instant::now()),
                Err(error) if is_refusal(&error) => refused += 1,
                Err(error) => {
                    fail(pending.take(), lost(&error));
                    return;
                }
            },
            () = sleep_until(wake) => {
                let now = Instant::now();
                if let Some(p) = pending.take_if(|p| now >= p.ends_at) {
                    let _ = p.answer.send(Err(QueryError::Deadline {
                        waiting_for: p.waiting_for,
                        attempts: 1,
                        after: deadline,
                    }));
                    if session.waiting_for() == Some("BattlEye login answer") {
                        return;
                    }
                    session.abandon(now);
                }
                session.handle_timeout(now);
            },
            request = requests.recv(), if pending.is_none() => {
                let Some((request, answer)) = request else {
                    return;
                };
                let started = match request {
                    Request::Login(password) => session.login(&password),
                    Request::Command(command) => session.command(&command),
                };
                match started {
                    Ok(()) => {
                        pending = Some(Pending {
                            answer,
                            ends_at: Instant::now() + deadline,
                            waiting_for: session.waiting_for().unwrap_or("BattlEye answer"),
                        });
                    }
                    Err(error) => {
                        let _ = answer.send(Err(error));
                    }
                }
            }
        }
    }
}

fn fail(pending: Option<Pending>, error: QueryError) {
    if let Some(p) = pending {
        let _ = p.answer.send(Err(error));
    }
}

fn is_refusal(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::ConnectionRefused
}

fn lost(error: &io::Error) -> QueryError {
    QueryError::Io(io::Error::new(
        error.kind(),
        format!("the BattlEye session was lost: {error}"),
    ))
}
