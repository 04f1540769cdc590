//! SQP responders that behave like the servers people run, not like this crate's own
//! [`SqpResponder`](crate::engines::sqp::SqpResponder), which answers every chunk asked for.
//!
//! - [`RealSqpServer::unity_sdk`]: Unity's server SDK implements ServerInfo only; its reply is
//!   the SQP document's example.
//! - [`RealSqpServer::reference_sample`]: the reference client's sample server implements
//!   ServerInfo and Metrics only.
//! - [`RealSqpServer::fps_sample`]: Unity's FPSSample writes version 0 in its replies.
//!
//! Each answers a query with the chunks it implements among those asked for, leaving the
//! others out silently, as those servers do. Replies are encoded through the declared packets.

use std::net::SocketAddr;

use query_specs::sqp::{
    ChallengeResponse, ChunkSet, Chunks, Metrics, QueryResponse, Request, Response, ServerInfo,
};
use query_wire::Decode;

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};

/// A responder that implements only some chunks, with a fixed reply version.
#[derive(Debug, Clone)]
pub struct RealSqpServer {
    chunks: Chunks<'static>,
    implemented: ChunkSet,
    version: u16,
    issued: u32,
}

/// The ServerInfo of the SQP document's example reply.
pub fn document_server_info() -> ServerInfo<'static> {
    ServerInfo {
        current_players: 0,
        max_players: 16,
        server_name: "UE4 Dedicated Server",
        game_type: "/Script/ShooterGame.ShooterGame_TeamDeathMatch",
        build_id: "001",
        map: "Highrise",
        port: 7777,
    }
}

impl RealSqpServer {
    /// Unity's server SDK: ServerInfo only, the document's example, version 1.
    pub fn unity_sdk() -> Self {
        RealSqpServer {
            chunks: Chunks {
                server_info: Some(document_server_info()),
                ..Chunks::default()
            },
            implemented: ChunkSet::SERVER_INFO,
            version: 1,
            issued: 0x5eed_0001,
        }
    }

    /// The reference client's sample server: ServerInfo and Metrics, version 1.
    pub fn reference_sample() -> Self {
        RealSqpServer {
            chunks: Chunks {
                server_info: Some(ServerInfo {
                    current_players: 5,
                    max_players: 10,
                    server_name: "my server",
                    game_type: "ctf",
                    build_id: "1",
                    map: "map",
                    port: 1025,
                }),
                metrics: Some(Metrics {
                    values: vec![1.0, 0.0, 55.57, 438.2522],
                }),
                ..Chunks::default()
            },
            implemented: ChunkSet::SERVER_INFO | ChunkSet::METRICS,
            version: 1,
            issued: 0x5eed_0002,
        }
    }

    /// Unity's FPSSample: ServerInfo only, version 0 in its replies.
    pub fn fps_sample() -> Self {
        RealSqpServer {
            chunks: Chunks {
                server_info: Some(ServerInfo {
                    current_players: 3,
                    max_players: 8,
                    server_name: "FPS Sample",
                    game_type: "deathmatch",
                    build_id: "0.1",
                    map: "Level_01",
                    port: 7913,
                }),
                ..Chunks::default()
            },
            implemented: ChunkSet::SERVER_INFO,
            version: 0,
            issued: 0x5eed_0003,
        }
    }

    /// The same server, writing `version` in its replies (any other than 0 or 1 is one no
    /// client reads).
    pub fn with_version(mut self, version: u16) -> Self {
        self.version = version;
        self
    }

    /// The chunks this server sends when asked for everything.
    pub fn chunks(&self) -> &Chunks<'static> {
        &self.chunks
    }

    /// The chunks it implements.
    pub fn implemented(&self) -> ChunkSet {
        self.implemented
    }

    /// The version its replies carry.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// The chunks of `self.chunks` in `set`.
    fn only(&self, set: ChunkSet) -> Chunks<'static> {
        let all = &self.chunks;
        Chunks {
            server_info: all
                .server_info
                .clone()
                .filter(|_| set.contains(ChunkSet::SERVER_INFO)),
            server_rules: all
                .server_rules
                .clone()
                .filter(|_| set.contains(ChunkSet::SERVER_RULES)),
            player_info: all
                .player_info
                .clone()
                .filter(|_| set.contains(ChunkSet::PLAYER_INFO)),
            team_info: all
                .team_info
                .clone()
                .filter(|_| set.contains(ChunkSet::TEAM_INFO)),
            metrics: all
                .metrics
                .clone()
                .filter(|_| set.contains(ChunkSet::METRICS)),
        }
    }
}

impl Responder for RealSqpServer {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let sent = match Request::from_bytes(datagram) {
            Ok(Request::Challenge(_)) => {
                self.issued = self.issued.wrapping_add(0x0101);
                let reply = Response::Challenge(ChallengeResponse {
                    challenge: self.issued,
                });
                replies.push_encoded(&reply, ChunkSet::empty())
            }
            Ok(Request::Query(query)) if query.challenge == self.issued => {
                let present = query.requested & self.implemented;
                let reply = Response::Query(QueryResponse {
                    challenge: query.challenge,
                    version: self.version,
                    current_packet: 0,
                    last_packet: 0,
                    chunks: self.only(present),
                });
                replies.push_encoded(&reply, present)
            }
            Ok(Request::Query(_)) => return Verdict::Dropped(DropReason::BadChallenge),
            Err(_) => return Verdict::Dropped(DropReason::Malformed),
        };
        match sent {
            Ok(()) => Verdict::Answered,
            Err(_) => Verdict::Dropped(DropReason::Malformed),
        }
    }
}
