//! The stream side of bulk runs: the bound on open connections holds, every target comes
//! back once, a mixed run sends each target to its engine, and the bound fits the open-file
//! limit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use query_net::bulk::BulkConfig;
use query_net::bulk_stream::{bulk_mixed, bulk_streams, connection_budget};
use query_net::QueryError;
use tokio_stream::StreamExt;

#[tokio::test]
async fn stream_queries_never_exceed_the_bound_and_all_come_back() {
    let open = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (open2, peak2) = (Arc::clone(&open), Arc::clone(&peak));
    let results = bulk_streams(
        tokio_stream::iter(0..100u32),
        move |&n| {
            let (open, peak) = (Arc::clone(&open2), Arc::clone(&peak2));
            async move {
                let now = open.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(u64::from(n % 7))).await;
                open.fetch_sub(1, Ordering::SeqCst);
                if n % 10 == 0 {
                    Err(QueryError::protocol("refused"))
                } else {
                    Ok(n)
                }
            }
        },
        8,
    );
    let stats_of = results.stats();
    assert_eq!(stats_of.sessions_started, 0);
    let done: Vec<_> = results.collect().await;
    assert_eq!(done.len(), 100);
    let mut seen: Vec<u32> = done.iter().map(|d| d.target).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..100).collect::<Vec<_>>());
    for d in &done {
        assert_eq!(d.result.is_err(), d.target % 10 == 0, "{}", d.target);
    }
    let peak = peak.load(Ordering::SeqCst);
    assert!((1..=8).contains(&peak), "peak {peak}");
}

#[tokio::test]
async fn a_mixed_run_sends_each_target_to_its_side() {
    use query_net::engine::ClientSession;
    // Datagram targets whose session fails at once; stream targets answer.
    struct Never;
    impl ClientSession for Never {
        type Output = String;
        fn target(&self) -> std::net::SocketAddr {
            ([127, 0, 0, 1], 9).into()
        }
        fn poll_transmit(&mut self, _: std::time::Instant) -> Option<&[u8]> {
            None
        }
        fn on_reply(&mut self, _: &[u8], _: std::time::Instant) {}
        fn handle_timeout(&mut self, _: std::time::Instant) {}
        fn poll_timeout(&self) -> Option<std::time::Instant> {
            None
        }
        fn poll_result(&mut self) -> Option<Result<String, QueryError>> {
            None
        }
    }
    let results = bulk_mixed(
        tokio_stream::iter(0..50u32),
        |n| n % 2 == 0,
        |_: &u32| Err::<Never, _>(QueryError::protocol("datagram side")),
        |&n: &u32| async move { Ok(format!("stream {n}")) },
        BulkConfig {
            connections: 4,
            ..BulkConfig::default()
        },
    );
    assert_eq!(results.connections(), 4);
    let done: Vec<_> = results.collect().await;
    assert_eq!(done.len(), 50);
    for d in done {
        match (d.target % 2 == 0, d.result) {
            (true, Ok(text)) => assert_eq!(text, format!("stream {}", d.target)),
            (false, Err(e)) => assert!(e.to_string().contains("datagram side"), "{e}"),
            (_, other) => panic!("{}: {other:?}", d.target),
        }
    }
}

#[test]
fn the_budget_fits_the_open_file_limit() {
    assert_eq!(connection_budget(0, 8), 1);
    assert!(connection_budget(16, 8) <= 16);
    // A bound no system allows is lowered to what fits, leaving room for the rest.
    let huge = connection_budget(usize::MAX / 2, 8);
    if cfg!(target_os = "linux") {
        assert!(huge < usize::MAX / 2, "{huge}");
    }
    assert!(huge >= 1);
}
