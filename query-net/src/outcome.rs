//! The bookkeeping every client session keeps besides its protocol, in one place.
//!
//! Whatever the protocol, a [`ClientSession`](crate::engine::ClientSession) ends once, hands its
//! result out once, stops sending and waking once it has ended, reports a datagram that made no
//! sense rather than a bare timeout when nothing better came, and measures its round trip. An
//! engine holds an [`Outcome`] for this and its own [`Retry`] (or several) for the sending.

use std::time::{Duration, Instant};

use crate::engine::Retry;
use crate::error::QueryError;

/// How a client session ends, and what it noted on the way.
///
/// Whatever the protocol, a [`ClientSession`](crate::engine::ClientSession) ends once, hands
/// its result out once, stops sending and waking once it has ended, reports a datagram that
/// made no sense rather than a bare timeout when nothing better came, and measures its round
/// trip. An engine holds an `Outcome` for this and its own [`Retry`] (or several) for the
/// sending.
///
/// ```
/// use std::time::{Duration, Instant};
/// use query_net::engine::{Outcome, Retry};
/// use query_net::QueryError;
///
/// let mut retry = Retry::new(Duration::from_secs(1), 1);
/// retry.start("status request", b"?");
/// let mut outcome: Outcome<u32> = Outcome::new();
/// let t0 = Instant::now();
/// assert!(outcome.poll_transmit(&mut retry, t0).is_some());
/// // A datagram that made no sense, then silence: the error names the datagram.
/// outcome.note_malformed(QueryError::protocol("not a status reply"));
/// let wake = outcome.poll_timeout(&retry).unwrap();
/// outcome.handle_timeout(&mut retry, wake);
/// let error = outcome.poll_result().unwrap().unwrap_err();
/// assert!(error.to_string().contains("not a status reply"));
/// assert!(outcome.is_finished() && outcome.poll_result().is_none());
/// assert_eq!(outcome.poll_transmit(&mut retry, wake), None);
/// ```
#[derive(Debug)]
pub struct Outcome<T> {
    result: Option<Result<T, QueryError>>,
    finished: bool,
    /// The latest datagram from the target that made no sense (it may have been forged).
    malformed: Option<QueryError>,
    /// The shortest round trip of a request the target answered.
    best_rtt: Option<Duration>,
}

impl<T> Default for Outcome<T> {
    fn default() -> Self {
        Outcome {
            result: None,
            finished: false,
            malformed: None,
            best_rtt: None,
        }
    }
}

impl<T> Outcome<T> {
    /// A session under way.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the session has ended: it sends nothing more and wants no wake-up.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Ends the session with `result`. The first end wins; later calls change nothing.
    pub fn finish(&mut self, result: Result<T, QueryError>) {
        if !self.finished {
            self.finished = true;
            self.result = Some(result);
        }
    }

    /// [`ClientSession::poll_result`](crate::engine::ClientSession::poll_result): the result,
    /// once.
    pub fn poll_result(&mut self) -> Option<Result<T, QueryError>> {
        self.result.take()
    }

    /// `retry`'s next datagram, unless the session has ended.
    pub fn poll_transmit<'r>(&self, retry: &'r mut Retry, now: Instant) -> Option<&'r [u8]> {
        if self.finished {
            return None;
        }
        retry.poll_transmit(now)
    }

    /// When `retry` wants a wake-up, unless the session has ended.
    pub fn poll_timeout(&self, retry: &Retry) -> Option<Instant> {
        if self.finished {
            return None;
        }
        retry.poll_timeout()
    }

    /// Passes a wake-up to `retry`; when its attempts have run out, ends the session with
    /// [`unanswered`](Outcome::unanswered). Returns whether the attempts ran out (for an
    /// engine that moves on to another step instead, see [`Retry::handle_timeout`]).
    pub fn handle_timeout(&mut self, retry: &mut Retry, now: Instant) -> bool {
        if self.finished {
            return false;
        }
        match retry.handle_timeout(now) {
            Ok(()) => false,
            Err(timeout) => {
                let error = self.unanswered(timeout);
                self.finish(Err(error));
                true
            }
        }
    }

    /// Notes a datagram from the target that made no sense. Anyone can forge one, so it ends
    /// nothing; it only names the failure if no answer comes.
    pub fn note_malformed(&mut self, error: impl Into<QueryError>) {
        self.malformed = Some(error.into());
    }

    /// The datagram noted by [`note_malformed`](Outcome::note_malformed), if any.
    pub fn malformed(&self) -> Option<&QueryError> {
        self.malformed.as_ref()
    }

    /// Forgets the datagram noted by [`note_malformed`](Outcome::note_malformed) (a new step
    /// begins, to which it does not belong).
    pub fn forget_malformed(&mut self) {
        self.malformed = None;
    }

    /// The error of a request that went unanswered: the latest datagram that made no sense,
    /// as [`QueryError::Malformed`] (a server that answers garbage is worth reporting as such),
    /// else `timeout`.
    pub fn unanswered(&mut self, timeout: QueryError) -> QueryError {
        self.malformed.take().unwrap_or(timeout)
    }

    /// `retry`'s request was answered at `now`: stops resending it and keeps the shortest
    /// round trip seen. Returns this one.
    pub fn answered(&mut self, retry: &mut Retry, now: Instant) -> Option<Duration> {
        let rtt = retry.finish(now);
        if let Some(rtt) = rtt {
            self.best_rtt = Some(self.best_rtt.map_or(rtt, |best| best.min(rtt)));
        }
        rtt
    }

    /// The shortest round trip of an answered request; zero before any.
    pub fn best_rtt(&self) -> Duration {
        self.best_rtt.unwrap_or_default()
    }

    /// [`ClientSession::give_up`](crate::engine::ClientSession::give_up) of a session that has
    /// nothing to return but a whole answer: how it ended if it had, else `why` or the latest
    /// datagram that made no sense ([`unanswered`](Outcome::unanswered)).
    pub fn give_up(&mut self, why: QueryError) -> Result<T, QueryError> {
        match self.end() {
            Some(ended) => ended,
            None => Err(self.unanswered(why)),
        }
    }

    /// For [`ClientSession::give_up`](crate::engine::ClientSession::give_up): marks the session
    /// ended and, if it had ended already, returns how (a result not yet collected, or an
    /// error saying so). `None`: it was under way, and the caller returns what arrived.
    pub fn end(&mut self) -> Option<Result<T, QueryError>> {
        let was_finished = std::mem::replace(&mut self.finished, true);
        match self.result.take() {
            Some(result) => Some(result),
            None if was_finished => Some(Err(QueryError::protocol("the query has ended"))),
            None => None,
        }
    }
}

/// Writes the [`ClientSession`](crate::engine::ClientSession) methods that are bookkeeping
/// only, the same in every protocol, for a session whose fields are `target: SocketAddr`,
/// `retry: Retry` and `outcome: Outcome<Self::Output>`. Name the methods to write; a session
/// whose step differs (several requests at once, a wait for the rest of a reply) writes that
/// one itself.
///
/// - `target`: the `target` field.
/// - `waiting_for`: the request `retry` sends.
/// - `poll_transmit`, `poll_timeout`, `handle_timeout`: `retry`'s, until the session ends
///   ([`Outcome::poll_transmit`], [`Outcome::poll_timeout`], [`Outcome::handle_timeout`]);
///   `sending` writes the three.
/// - `poll_result`: [`Outcome::poll_result`].
/// - `give_up`: nothing but a whole answer counts ([`Outcome::give_up`]).
macro_rules! bookkeeping {
    ($($method:ident),+ $(,)?) => {
        $($crate::outcome::bookkeeping!(@ $method);)+
    };
    (@ target) => {
        fn target(&self) -> ::std::net::SocketAddr {
            self.target
        }
    };
    (@ waiting_for) => {
        fn waiting_for(&self) -> ::core::option::Option<&'static str> {
            self.retry.waiting_for()
        }
    };
    (@ sending) => {
        $crate::outcome::bookkeeping!(poll_transmit, poll_timeout, handle_timeout);
    };
    (@ poll_transmit) => {
        fn poll_transmit(&mut self, now: ::std::time::Instant) -> ::core::option::Option<&[u8]> {
            self.outcome.poll_transmit(&mut self.retry, now)
        }
    };
    (@ poll_timeout) => {
        fn poll_timeout(&self) -> ::core::option::Option<::std::time::Instant> {
            self.outcome.poll_timeout(&self.retry)
        }
    };
    (@ handle_timeout) => {
        fn handle_timeout(&mut self, now: ::std::time::Instant) {
            self.outcome.handle_timeout(&mut self.retry, now);
        }
    };
    (@ poll_result) => {
        fn poll_result(
            &mut self,
        ) -> ::core::option::Option<::core::result::Result<Self::Output, $crate::error::QueryError>>
        {
            self.outcome.poll_result()
        }
    };
    (@ give_up) => {
        fn give_up(
            &mut self,
            why: $crate::error::QueryError,
            _now: ::std::time::Instant,
        ) -> ::core::result::Result<Self::Output, $crate::error::QueryError> {
            self.outcome.give_up(why)
        }
    };
}

pub(crate) use bookkeeping;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_end_wins_and_is_handed_out_once() {
        let mut outcome: Outcome<u8> = Outcome::new();
        assert!(!outcome.is_finished());
        outcome.finish(Ok(1));
        outcome.finish(Ok(2));
        assert!(outcome.is_finished());
        assert_eq!(outcome.poll_result().unwrap().unwrap(), 1);
        assert!(outcome.poll_result().is_none());
    }

    #[test]
    fn an_ended_session_neither_sends_nor_wakes() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(100), 3);
        retry.start("request", b"q");
        let mut outcome: Outcome<u8> = Outcome::new();
        assert!(outcome.poll_transmit(&mut retry, t0).is_some());
        assert!(outcome.poll_timeout(&retry).is_some());
        outcome.finish(Ok(0));
        assert_eq!(outcome.poll_timeout(&retry), None);
        let later = t0 + Duration::from_millis(100);
        assert!(!outcome.handle_timeout(&mut retry, later));
        assert_eq!(outcome.poll_transmit(&mut retry, later), None);
    }

    #[test]
    fn running_out_of_attempts_ends_with_the_timeout_or_the_malformed_datagram() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(100), 1);
        retry.start("request", b"q");
        let mut outcome: Outcome<u8> = Outcome::new();
        outcome.poll_transmit(&mut retry, t0);
        assert!(outcome.handle_timeout(&mut retry, t0 + Duration::from_millis(100)));
        assert!(matches!(
            outcome.poll_result(),
            Some(Err(QueryError::Timeout { attempts: 1, .. }))
        ));

        let mut retry = Retry::new(Duration::from_millis(100), 1);
        retry.start("request", b"q");
        let mut outcome: Outcome<u8> = Outcome::new();
        outcome.poll_transmit(&mut retry, t0);
        let bad = query_wire::Error::new(query_wire::ErrorKind::Invalid("garbage"), 0);
        outcome.note_malformed(bad.clone());
        outcome.forget_malformed();
        outcome.note_malformed(bad);
        assert!(outcome.handle_timeout(&mut retry, t0 + Duration::from_millis(100)));
        assert!(matches!(
            outcome.poll_result(),
            Some(Err(QueryError::Malformed(_)))
        ));
    }

    #[test]
    fn the_best_round_trip_is_kept() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_secs(1), 1);
        let mut outcome: Outcome<u8> = Outcome::new();
        assert_eq!(outcome.best_rtt(), Duration::ZERO);
        for rtt in [30, 10, 20] {
            retry.start("request", b"q");
            outcome.poll_transmit(&mut retry, t0);
            let measured = outcome.answered(&mut retry, t0 + Duration::from_millis(rtt));
            assert_eq!(measured, Some(Duration::from_millis(rtt)));
        }
        assert_eq!(outcome.best_rtt(), Duration::from_millis(10));
    }

    #[test]
    fn ending_a_session_under_way_leaves_the_answer_to_the_caller() {
        let mut outcome: Outcome<u8> = Outcome::new();
        assert!(outcome.end().is_none());
        assert!(outcome.is_finished());
        assert!(outcome.end().unwrap().is_err(), "ended already");

        let mut outcome: Outcome<u8> = Outcome::new();
        outcome.finish(Ok(7));
        assert_eq!(outcome.end().unwrap().unwrap(), 7, "not yet collected");
    }
}
