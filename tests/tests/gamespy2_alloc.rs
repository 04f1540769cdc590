//! GameSpy 2 replies encode into the caller's buffer without touching the heap, the promise a
//! responder builds on: the NUL key/values (`KvBlock`) and the row tables (`RowTable`) write
//! straight into the `Writer`. The one exception is text outside ASCII, which is transcoded to
//! Windows-1252 on the way out (an allocation each time the value is read, as in GameSpy v1). Decoding a real tables reply allocates only the vectors it
//! returns (one per table and its column names), never per cell: the names borrow.

use query_specs::gamespy2::{Reply, Requested};
use query_tests::read_capture;
use query_wire::{Decode, Encode};

fn count_allocations<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut result = None;
    let info = allocation_counter::measure(|| result = Some(std::hint::black_box(f())));
    (result.expect("measure runs the closure"), info.count_total)
}

#[test]
fn the_counter_sees_allocations() {
    let (boxed, count) = count_allocations(|| Box::new(std::hint::black_box(7u64)));
    assert_eq!(*boxed, 7);
    assert_eq!(count, 1);
}

#[test]
fn encoding_real_replies_into_a_buffer_allocates_only_to_transcode() {
    for name in ["arma_1", "had2_1", "halo_1"] {
        let Some(datagrams) = read_capture(&format!("gameq/gamespy2/{name}_response.txt")) else {
            return;
        };
        for (bytes, requested) in [
            (&datagrams[0], Requested::DETAILS),
            (&datagrams[1], Requested::TABLES),
        ] {
            let reply = Reply::from_bytes_with(bytes, requested).unwrap();
            let mut buf = [0u8; 1400];
            let (written, count) = count_allocations(|| {
                let len = reply.encoded_len(requested);
                let written = reply.encode_into_with(&mut buf, requested).unwrap();
                assert_eq!(len, written);
                written
            });
            // ASCII text is written as it is held: nothing allocated. Text outside ASCII is
            // transcoded each time a pass reads its row: two passes (length, then bytes), and a
            // table reads a row once per column plus once to check its keys.
            let not_ascii = non_ascii_values(&reply);
            if not_ascii == 0 {
                assert_eq!(count, 0, "{name}: encoding allocated {count} times");
            } else {
                let reads_per_value = 1 + 8; // at most 8 columns in these captures
                assert!(
                    count <= 2 * reads_per_value * not_ascii,
                    "{name}: {count} allocations"
                );
            }
            assert_eq!(written, bytes.len());
        }
    }
}

/// How many keys, values and cells of `reply` hold text outside ASCII.
fn non_ascii_values(reply: &Reply<'_>) -> u64 {
    let mut texts: Vec<&str> = Vec::new();
    if let Some(details) = &reply.details {
        let d = &details.0;
        for field in [
            &d.hostname,
            &d.game_name,
            &d.game_version,
            &d.map_name,
            &d.game_type,
            &d.game_mode,
        ] {
            texts.extend(field.as_deref());
        }
        for (k, v) in &d.rules {
            texts.push(k);
            texts.push(v);
        }
    }
    if let Some(players) = &reply.players {
        for row in &players.table.rows {
            for field in [&row.name, &row.score, &row.ping, &row.team] {
                texts.extend(field.as_deref());
            }
        }
    }
    if let Some(teams) = &reply.teams {
        for row in &teams.table.rows {
            texts.extend(row.name.as_deref());
            texts.extend(row.score.as_deref());
        }
    }
    texts.iter().filter(|t| !t.is_ascii()).count() as u64
}

#[test]
fn decoding_a_tables_reply_allocates_per_table_not_per_cell() {
    let Some(datagrams) = read_capture("gameq/gamespy2/halo_1_response.txt") else {
        return;
    };
    let (reply, count) =
        count_allocations(|| Reply::from_bytes_with(&datagrams[1], Requested::TABLES).unwrap());
    let players = &reply.players.as_ref().unwrap().table;
    let cells = players.rows.len() * players.columns.len();
    assert_eq!(cells, 13 * 4);
    // Per table: columns, raw names, the cell buffer, the rows (each may grow once or twice).
    assert!(count <= 16, "{count} allocations for {cells} cells");
}
