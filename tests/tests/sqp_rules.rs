//! The SQP chunk rules of the protocol notes, on hand-built query responses: bytes left inside
//! a chunk are skipped as future fields, reading past a chunk is an error at the right offset
//! and field, a table with rows has at least one column, and Metrics holds at most 25 values.

use query_specs::sqp::{
    ChunkSet, Chunks, FieldHeader, Metrics, QueryResponse, Response, ServerInfo, Table, Value,
    MAX_METRICS,
};
use query_wire::{Decode, Encode, Error, ErrorKind};

/// Where the first chunk's body starts: type, challenge, version, current and last packet,
/// packet length (11 bytes), then the chunk's u32 length.
const FIRST_BODY: usize = 15;

/// A query response whose payload is `chunks`, each given as `(declared length, body)`.
fn response(chunks: &[(usize, Vec<u8>)]) -> Vec<u8> {
    let mut payload = Vec::new();
    for (declared, body) in chunks {
        payload.extend(u32::try_from(*declared).unwrap().to_be_bytes());
        payload.extend(body);
    }
    let mut out = vec![1, 0x12, 0x34, 0x56, 0x78, 0, 1, 0, 0];
    out.extend(u16::try_from(payload.len()).unwrap().to_be_bytes());
    out.extend(payload);
    out
}

/// A chunk declared with its own length.
fn chunk(body: Vec<u8>) -> (usize, Vec<u8>) {
    (body.len(), body)
}

fn decode(bytes: &[u8], requested: ChunkSet) -> query_wire::Result<Chunks<'_>> {
    match Response::from_bytes_with(bytes, requested)? {
        Response::Query(query) => Ok(query.chunks),
        other => panic!("expected a query response, got {other:?}"),
    }
}

fn check_error(err: &Error, kind: ErrorKind, offset: usize, path: &str) {
    assert_eq!(err.kind(), &kind, "{err}");
    assert_eq!(err.offset(), offset, "{err}");
    assert_eq!(err.path_string(), path, "{err}");
}

fn info() -> ServerInfo<'static> {
    ServerInfo {
        current_players: 3,
        max_players: 8,
        server_name: "rules",
        game_type: "ctf",
        build_id: "7",
        map: "dust",
        port: 7777,
    }
}

fn players() -> Table<'static> {
    Table {
        count: 2,
        fields: Some(vec![
            FieldHeader {
                name: "name",
                kind: 4,
            },
            FieldHeader {
                name: "score",
                kind: 1,
            },
        ]),
        values: vec![
            Value::Str("ann"),
            Value::U16(4),
            Value::Str("bo"),
            Value::U16(9),
        ],
    }
}

fn metrics(n: usize) -> Metrics {
    Metrics {
        values: (0..n).map(|i| i as f32 / 2.0).collect(),
    }
}

fn body<T: Encode<Ctx = ()>>(value: &T) -> Vec<u8> {
    value.to_vec().unwrap()
}

fn with_surplus(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.extend([0xde, 0xad, 0xbe, 0xef, 0x00]);
    bytes
}

#[test]
fn bytes_left_in_a_chunk_are_skipped_as_future_fields() {
    let requested =
        ChunkSet::SERVER_INFO | ChunkSet::PLAYER_INFO | ChunkSet::TEAM_INFO | ChunkSet::METRICS;
    let canonical = Chunks {
        server_info: Some(info()),
        server_rules: None,
        player_info: Some(players()),
        team_info: Some(Table::default()),
        metrics: Some(metrics(3)),
    };
    // Every chunk carries five unknown bytes after its known fields; the chunk after it is
    // still read from the right place.
    let bytes = response(&[
        chunk(with_surplus(body(&info()))),
        chunk(with_surplus(body(&players()))),
        chunk(with_surplus(body(&Table::default()))),
        chunk(with_surplus(body(&metrics(3)))),
    ]);
    let decoded = decode(&bytes, requested).unwrap();
    assert_eq!(decoded, canonical);

    // Re-encoding writes only the known fields.
    let expected = response(&[
        chunk(body(&info())),
        chunk(body(&players())),
        chunk(body(&Table::default())),
        chunk(body(&metrics(3))),
    ]);
    let packet = Response::Query(QueryResponse {
        challenge: 0x1234_5678,
        version: 1,
        current_packet: 0,
        last_packet: 0,
        chunks: decoded,
    });
    assert_eq!(packet.to_vec_with(requested).unwrap(), expected);
}

#[test]
fn an_empty_table_may_omit_the_rest_of_its_chunk() {
    let bytes = response(&[chunk(vec![0, 0])]);
    let chunks = decode(&bytes, ChunkSet::TEAM_INFO).unwrap();
    assert_eq!(chunks.team_info, Some(Table::default()));
    assert_eq!(chunks.team_info.unwrap().rows().count(), 0);
}

#[test]
fn reading_past_a_server_info_chunk_is_an_error() {
    // The chunk's length cuts the port in half; the byte after the chunk (still inside the
    // packet) must not be read as the port's second byte.
    let full = body(&info());
    let bytes = response(&[(full.len() - 1, full.clone())]);
    let err = decode(&bytes, ChunkSet::SERVER_INFO).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 2, have: 1 },
        FIRST_BODY + full.len() - 2,
        "Response.chunks.server_info.port",
    );
}

#[test]
fn reading_past_a_metrics_chunk_is_an_error() {
    // The count says 3, the chunk holds 2 values; 4 more bytes follow inside the packet.
    let mut values = body(&metrics(2));
    values[0] = 3;
    let declared = values.len();
    values.extend([0x3f, 0x80, 0, 0]);
    let bytes = response(&[(declared, values)]);
    let err = decode(&bytes, ChunkSet::METRICS).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 4, have: 0 },
        FIRST_BODY + 1 + 8,
        "Response.chunks.metrics.values[2]",
    );
}

#[test]
fn reading_past_a_player_chunk_is_an_error() {
    // The table's last value (u16 9) is cut by the chunk's length.
    let full = body(&players());
    let bytes = response(&[(full.len() - 1, full.clone())]);
    let err = decode(&bytes, ChunkSet::PLAYER_INFO).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 2, have: 1 },
        FIRST_BODY + full.len() - 2,
        "Response.chunks.player_info.values[3]",
    );
}

#[test]
fn a_chunk_longer_than_the_packet_is_an_error() {
    let full = body(&info());
    let bytes = response(&[(full.len() + 1, full)]);
    let err = decode(&bytes, ChunkSet::SERVER_INFO).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd {
            need: bytes.len() - FIRST_BODY + 1,
            have: bytes.len() - FIRST_BODY,
        },
        FIRST_BODY,
        "Response.chunks.server_info",
    );
}

#[test]
fn twenty_five_metrics_are_the_most() {
    let requested = ChunkSet::METRICS;
    let most = Chunks {
        metrics: Some(metrics(MAX_METRICS)),
        ..Chunks::default()
    };
    let bytes = most.to_vec_with(requested).unwrap();
    assert_eq!(bytes[4], 25);
    assert_eq!(Chunks::from_bytes_with(&bytes, requested).unwrap(), most);

    // Decoding: a count of 26 is refused at the count byte, before any value is read.
    let mut values = body(&metrics(MAX_METRICS));
    values[0] = 26;
    values.extend([0; 4]);
    let bytes = response(&[chunk(values)]);
    let err = decode(&bytes, requested).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooLong { len: 26, max: 25 },
        FIRST_BODY,
        "Response.chunks.metrics.values",
    );

    // Encoding: 26 values are refused rather than written.
    let too_many = Chunks {
        metrics: Some(metrics(MAX_METRICS + 1)),
        ..Chunks::default()
    };
    let err = too_many.to_vec_with(requested).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 26, max: 25 });
    assert_eq!(err.path_string(), "metrics.values");
    let err = metrics(MAX_METRICS + 1).to_vec().unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 26, max: 25 });
    assert_eq!(err.path_string(), "values");
}

#[test]
fn a_table_with_rows_and_no_columns_is_refused_on_decode() {
    // One row, a field count of 0, nothing else.
    for (requested, path) in [
        (ChunkSet::PLAYER_INFO, "Response.chunks.player_info.fields"),
        (ChunkSet::TEAM_INFO, "Response.chunks.team_info.fields"),
    ] {
        let bytes = response(&[chunk(vec![0, 1, 0])]);
        let err = decode(&bytes, requested).unwrap_err();
        check_error(
            &err,
            ErrorKind::TooFew { len: 0, min: 1 },
            FIRST_BODY + 2,
            path,
        );
    }
    // The same with the rest of a chunk after it: the count is refused where it stands.
    let bytes = response(&[chunk(vec![0, 3, 0, 1, 2, 3, 4])]);
    let err = decode(&bytes, ChunkSet::PLAYER_INFO).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooFew { len: 0, min: 1 });
    assert_eq!(err.offset(), FIRST_BODY + 2);
}

#[test]
fn a_table_with_rows_and_no_columns_is_refused_on_encode() {
    // The row count is computed from the values and the columns: values without columns make
    // no rows, so columns given anyway (even none) contradict the count.
    let table = Table {
        count: 1,
        fields: Some(Vec::new()),
        values: vec![Value::U16(1)],
    };
    let presence = ErrorKind::Invalid("field presence does not match its condition");
    let err = table.to_vec().unwrap_err();
    check_error(&err, presence.clone(), 2, "fields");
    let chunks = Chunks {
        team_info: Some(table),
        ..Chunks::default()
    };
    let err = chunks.to_vec_with(ChunkSet::TEAM_INFO).unwrap_err();
    assert_eq!(err.kind(), &presence);
    assert_eq!(err.path_string(), "team_info.fields");
    // Values without columns are refused too: no count can describe them.
    let orphans = Table {
        count: 0,
        fields: None,
        values: vec![Value::U16(1)],
    };
    let err = orphans.to_vec().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthMismatch {
            declared: 0,
            actual: 1
        }
    );
    assert_eq!(err.path_string(), "values");
    // An empty table has no columns at all, and that is how it is written.
    assert_eq!(Table::default().to_vec().unwrap(), [0, 0]);
}
