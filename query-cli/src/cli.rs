//! The command line: every command, option and help text, declared with clap's derive.
//!
//! Values are parsed into typed forms here (protocols, addresses, durations, encodings), so
//! a malformed value is a usage error with a precise message before anything else runs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use query_net::engines::teamspeak3::{QueryLogin, VirtualServer};
use query_net::{Options, Protocol};
use query_wire::TextEncoding;

use crate::address::{parse_listen, HostPort, DEFAULT_PORTS_HELP};
use crate::exit::{exit_codes_help, BadValue, Category, Failure};
use crate::protocols;

const MAIN_EXAMPLES: &str = "\
Examples:
  gsq demo                                  run responders and query them, on loopback
  gsq query sqp 203.0.113.5:7779            one server, as a table
  gsq query auto 203.0.113.5 --json         find out which protocol it speaks
  gsq bulk servers.txt > results.ndjson     many servers, one JSON line each
  gsq serve state.toml --all 0.0.0.0:7779   answer queries for a server in any language
  gsq rcon minecraft 127.0.0.1 list         a remote console command
  gsq decode sqp --hex reply.hex            decode a captured packet
  gsq exporter --listen 127.0.0.1:9339      Prometheus metrics of game servers";

/// `gsq`: its headline names every protocol ([`protocols::headline`]).
#[derive(Debug, Parser)]
#[command(
    name = "gsq",
    version,
    about = protocols::headline(),
    propagate_version = true,
    after_help = format!("{MAIN_EXAMPLES}\n\n{}", exit_codes_help())
)]
pub struct Cli {
    /// More log output on stderr (-v: debug, -vv: trace). `GSQ_LOG` takes a tracing filter.
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,

    /// Only errors on stderr: no progress bar, summary or notes.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Query one server.
    Query(QueryArgs),
    /// Query many servers listed in a file or on stdin; one JSON line per server.
    Bulk(BulkArgs),
    /// Run remote console commands (Source, Minecraft, SA:MP, BattlEye and Quake 3 RCON), or
    /// open a shell.
    Rcon(RconArgs),
    /// Answer queries from a state file, for a game server written in any language.
    Serve(Box<ServeArgs>),
    /// Decode captured packets and print them as JSON.
    Decode(DecodeArgs),
    /// Start responders for every protocol on loopback, query each, and show the results.
    Demo(DemoArgs),
    /// Serve Prometheus metrics: probe a server per scrape (/probe), or poll a target list.
    Exporter(ExporterArgs),
    /// List the games gsq can query, with their protocol and ports.
    Games(GamesArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(CompletionsArgs),
    /// Print gsq's manual page (roff), or write one per command into a directory.
    Manpage(ManpageArgs),
}

const GAMES_HELP: &str = "\
Each word of TEXT must be in a game's id, a former id or its name (any letter case); a
protocol name lists that protocol's games. The ports: the game port players connect to, and
the query port (a number of its own, or the game port plus an offset). `gsq query ID HOST:PORT`
takes the game port and queries the query port.

Output: a table, or with --json one array of {id, aliases, name, protocol, port, query_port
(null where derived), query_port_offset (null where fixed), notes}; --markdown writes the
list of every game in the repository (GAMES.md).

Examples:
  gsq games                                 every game
  gsq games counter strike
  gsq games gamespy2
  gsq games --json | jq -r '.[].id'\n\nExit codes: 0 listed (even none), 2 bad arguments (all codes: 'gsq --help').";

/// `gsq games`.
#[derive(Debug, Args)]
#[command(after_help = GAMES_HELP)]
pub struct GamesArgs {
    /// Words to look for in the ids and names, or a protocol name.
    pub text: Vec<String>,

    /// One JSON array.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,

    /// Every game as a Markdown document (the repository's GAMES.md), with the games whose
    /// protocols gsq does not speak yet.
    #[arg(long, conflicts_with = "text")]
    pub markdown: bool,
}

/// `gsq completions`.
#[derive(Debug, Args)]
#[command(after_help = "\
Install (each shell's usual place):
  gsq completions bash > ~/.local/share/bash-completion/completions/gsq
  gsq completions zsh > ~/.zfunc/_gsq          (with fpath+=~/.zfunc before compinit)
  gsq completions fish > ~/.config/fish/completions/gsq.fish
  gsq completions powershell >> $PROFILE

Exit codes: 0 printed, 2 unknown shell (all codes: 'gsq --help').")]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `gsq manpage`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  gsq manpage > ~/.local/share/man/man1/gsq.1          then: man gsq
  gsq manpage --dir ~/.local/share/man/man1            gsq.1, gsq-query.1, gsq-bulk.1, ...

Exit codes: 0 written, 2 the directory cannot be written (all codes: 'gsq --help').")]
pub struct ManpageArgs {
    /// Write gsq.1 and a page per command (gsq-query.1, ...) into this directory instead of
    /// printing gsq.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

const QUERY_HELP: &str = "\
A game's HOST:PORT is the port players connect to: gsq queries the game's query port derived
from it and, where the two can differ, the port as given too; the first answer wins.
--query-port names the query port exactly. 'gsq games TEXT' lists the games and their ports.

With `auto`, the protocols of the games that use the port are tried first, then every
protocol (each on its default port when no port is given); the first to answer is shown, with
the game its answer names.

Output: a table when stdout is a terminal, one JSON object otherwise (or with --json). The JSON
fields: protocol, address, name, map, game_type, version, num_players, max_players, password,
players, teams (when any), rules, ping_ms, complete, raw, game and game_name (the game's id and
name, null when none is named), query_port (the port that answered).

Examples:
  gsq query rust 203.0.113.5:28015          a game, by the port players connect to
  gsq query sqp 203.0.113.5                 SQP on port 7779
  gsq query samp 203.0.113.5:7777 --json --pretty
  gsq query a2s 203.0.113.5:27016           Valve A2S (Source, GoldSrc, most Steam games)
  gsq query auto 203.0.113.5:27015          whichever protocol answers on that port
  gsq query gamespy1 ut.example.org:7778 --encoding latin1
  gsq query quake3 203.0.113.5:28960          Call of Duty (Quake 3 engine)
  gsq query quake2 203.0.113.5:27500          QuakeWorld (Quake 2's status)
  gsq query fivem 203.0.113.5                 FiveM/RedM: getinfo, then /players.json
  gsq query doom3 203.0.113.5:28004           Quake 4 (Doom 3 engine; ETQW: 27733)
  gsq query gamespy2 203.0.113.5:2302         Halo, ArmA (GameSpy 2)
  gsq query minecraft 203.0.113.5             Minecraft Java status over TCP (port 25565)
  gsq query minecraft-query 203.0.113.5       Minecraft's Query (enable-query, GameSpy 4)
  gsq query bedrock 203.0.113.5               Minecraft Bedrock (port 19132)
  gsq query teeworlds 203.0.113.5             Teeworlds, DDNet (port 8303)
  gsq query mumble voice.example.org          Mumble's ping (port 64738)
  gsq query eye 203.0.113.5:22126             Multi Theft Auto (All-Seeing Eye: game port + 123)
  gsq query unreal2 203.0.113.5:7778          UT2004, Killing Floor (Unreal 2: game port + 1)
  gsq query onequery hytale.example.org --token \"$ONEQUERY_TOKEN\"
  gsq query samp 203.0.113.5 --rcon-password secret --rcon players
  gsq query sqp 203.0.113.5 --fetch none --timeout 500ms --retries 0
  gsq query sqp 203.0.113.5 --chunks info,teams   exactly these chunks\n\nExit codes: 0 answered, 2 bad arguments, 3 unknown protocol, 4 malformed address,\n5 port out of range, 6 host does not resolve, 7 network error, 8 no reply,\n9 malformed reply, 11 authentication refused, 12 nothing listens at the port\n(all codes: 'gsq --help').";

/// `gsq query`.
#[derive(Debug, Args)]
#[command(after_help = format!(
    "Default ports, used when the address has none:\n  {DEFAULT_PORTS_HELP}.\n{QUERY_HELP}"
))]
pub struct QueryArgs {
    /// A game (`rust`, `csgo`; 'gsq games' lists them), a protocol (sqp, onequery, samp,
    /// gamespy1, a2s, quake3, quake2, fivem, doom3, gamespy2, gamespy3, minecraft,
    /// minecraft-query, bedrock, teeworlds, mumble, eye, unreal2, frostbite, teamspeak3), or auto (find out).
    #[arg(value_name = "GAME|PROTOCOL", value_parser = crate::target::parse_choice)]
    pub protocol: query_games::plan::Choice,

    /// The server: host, host:port, IPv4, or [IPv6]:port. For a game, the port players
    /// connect to (its query port follows from it); for a protocol, the query port. The port
    /// defaults per game or protocol.
    #[arg(value_parser = parse_host_port)]
    pub address: HostPort,

    /// Query exactly this port, not the ones a game's port leads to.
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub query_port: Option<u16>,

    #[command(flatten)]
    pub client: ClientArgs,

    /// SA:MP RCON password (needed by --rcon). Prefer the environment variable: command lines
    /// are visible to other users.
    #[arg(long, env = "GSQ_RCON_PASSWORD", hide_env_values = true)]
    pub rcon_password: Option<String>,

    /// SA:MP only: run this RCON console command (e.g. `players`) and print its output.
    #[arg(long, value_name = "COMMAND", requires = "rcon_password")]
    pub rcon: Option<String>,

    /// SQP only: ask for exactly these chunks, comma-separated: info, rules, players, teams,
    /// metrics (any subset, at least one; `all` for the five). Instead of --fetch, which
    /// always asks for info too. Servers that lack some answer with the rest; the JSON's
    /// raw.missing_chunks names what they left out.
    #[arg(long, value_name = "CHUNKS", value_parser = parse_query_chunks, conflicts_with = "fetch")]
    pub chunks: Option<query_specs::sqp::ChunkSet>,

    #[command(flatten)]
    pub output: OutputArgs,
}

const RCON_HELP: &str = "\
The password comes from --password-file (its first line), else the environment variable
GSQ_RCON_PASSWORD, else a prompt that does not echo; --password works too, with a warning
(other users can read a command line). It is never printed or logged.

With a COMMAND, gsq runs it, prints its output and exits; without one, it opens a shell with
line editing and history (kept in memory only: commands can hold secrets); Ctrl-D or 'exit'
leaves it. A shell whose connection was lost says so, connects and authenticates again.

Protocols: source (Source and Source 2 servers, and games with the same RCON: Rust, ARK,
Palworld, Squad, Factorio...; port 27015 unless given), minecraft (enable-rcon, port 25575;
commands of at most 1,446 bytes), samp (SA:MP and open.mp, over the query port 7777),
battleye (BattlEye RCon, UDP: Arma 2 and 3, DayZ; port 2302 unless given, BattlEye's default
RConPort, the game port; many Arma 3 hosts set RConPort 2306, so give the port your
beserver.cfg names) and quake3 (the rcon command of Quake 3 engines: ioquake3, OpenArena,
Urban Terror, Enemy Territory, Call of Duty 1-4; the game port, 27960 unless given). The
battleye shell prints the server's messages (chat, admins logging in) as they arrive.

Output: the console's text, control characters escaped; with --json one object per command
{protocol, address, command, output}, and one {protocol, address, message} per BattlEye
server message.

Examples:
  gsq rcon minecraft 127.0.0.1 list
  gsq rcon source 203.0.113.5:27015 --password-file ~/.config/rcon-pw status
  GSQ_RCON_PASSWORD=secret gsq rcon samp 203.0.113.5 players
  gsq rcon battleye 203.0.113.5:2306 --password-file ~/.config/be-pw players
  gsq rcon quake3 203.0.113.5 --password-file ~/.config/q3-pw status
  gsq rcon source 203.0.113.5                 an interactive shell

Exit codes: 0 ran, 2 bad arguments or no password, 4 malformed address, 5 port out of range,
6 host does not resolve, 7 network error or lost connection, 8 no answer, 9 malformed answer,
11 password refused, 12 nothing listens at the port (all codes: 'gsq --help').";

/// The remote consoles `gsq rcon` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RconProtocol {
    /// Source RCON (TCP; Source, Source 2 and the games that copied it).
    Source,
    /// Minecraft Java RCON (TCP, port 25575).
    Minecraft,
    /// SA:MP and open.mp RCON (UDP, the query port).
    Samp,
    /// BattlEye RCon (UDP; Arma 2 and 3, DayZ; port 2302, often 2306 on Arma 3 hosts).
    Battleye,
    /// Quake 3 engines' `rcon` (UDP, the game port 27960).
    Quake3,
}

/// `gsq rcon`. Its `Debug` leaves the password out.
#[derive(Args)]
#[command(after_help = RCON_HELP)]
pub struct RconArgs {
    /// source, minecraft, samp, battleye or quake3 (the remote consoles, not the query
    /// protocols).
    #[arg(value_enum, value_name = "PROTOCOL")]
    pub console: RconProtocol,

    /// The server: host, host:port, IPv4, or [IPv6]:port (the RCON port; defaults: source
    /// 27015, minecraft 25575, samp 7777, battleye 2302, quake3 27960).
    #[arg(value_parser = parse_host_port)]
    pub address: HostPort,

    /// The command to run, its words joined by spaces; none opens an interactive shell.
    /// Options go before it: every word from its first on is the command's.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,

    /// Read the password from the first line of this file.
    #[arg(long, value_name = "FILE", conflicts_with = "password")]
    pub password_file: Option<PathBuf>,

    /// The password, on the command line (other users can see it: prefer --password-file or
    /// GSQ_RCON_PASSWORD).
    #[arg(long, value_name = "PASSWORD")]
    pub password: Option<String>,

    /// How long to wait for the TCP connection (the UDP consoles: for each reply before
    /// resending).
    #[arg(short, long, default_value = "3s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// The most connecting and authenticating, or one command, may take.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub deadline: Duration,

    /// The most bytes one command's output may take.
    #[arg(long, default_value_t = 4 * 1024 * 1024, value_name = "BYTES")]
    pub max_reply_bytes: usize,

    /// One JSON object per command instead of the console's text.
    #[arg(long)]
    pub json: bool,
}

impl std::fmt::Debug for RconArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RconArgs")
            .field("console", &self.console)
            .field("address", &self.address)
            .field("command", &self.command)
            .field("password_file", &self.password_file)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("json", &self.json)
            .finish()
    }
}

/// How a query is made: shared by `query` and `bulk`.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// Wait this long for each reply before resending: `1.5s`, `500ms`, or seconds as a number.
    #[arg(short, long, default_value = "1.5s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Resend an unanswered request this many times.
    #[arg(short, long, default_value_t = 2)]
    pub retries: u32,

    /// The most one query may take from its first send, whatever the server does (a server
    /// dripping reply parts or pages cannot hold it longer): it then ends with what arrived,
    /// marked incomplete, or a timeout.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub deadline: Duration,

    /// The most reply bytes one query accepts from its server; past it the query ends with
    /// what arrived, marked incomplete, or an error.
    #[arg(long, default_value_t = query_net::Options::DEFAULT_MAX_REPLY_BYTES, value_name = "BYTES")]
    pub max_reply_bytes: usize,

    /// Minecraft Java: read the status without the ping that follows it (one round trip
    /// instead of two); ping_ms is then the status request's round trip.
    #[arg(long)]
    pub no_ping: bool,

    /// What to fetch besides the server info, comma-separated: players, rules, teams,
    /// metrics, all, none.
    #[arg(long, value_delimiter = ',', default_value = "all", value_enum)]
    pub fetch: Vec<Fetch>,

    /// Text encoding for protocols that declare none (SA:MP, GameSpy): utf8, latin1,
    /// windows-1252, windows-1251. Default: windows-1252 for those two.
    #[arg(short, long, value_parser = parse_encoding)]
    pub encoding: Option<TextEncoding>,

    /// OneQuery only: the auth token, for servers that are not public. The environment
    /// variable GSQ_ONEQUERY_TOKEN, if set, is used when this is not given (and, unlike the
    /// option, is not refused for other protocols).
    #[arg(long)]
    pub token: Option<String>,

    /// GameSpy v1 only: the request to send, e.g. `\info\` or `\status\xserverquery`
    /// (default `\status\`).
    #[arg(long, value_name = "REQUEST", value_parser = parse_gamespy_request)]
    pub gamespy_request: Option<String>,

    /// TeamSpeak 3 only: the virtual server to read, by its voice port (default 9987).
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub voice_port: Option<u16>,

    /// TeamSpeak 3 only: log in with this ServerQuery account first (for servers whose guest
    /// query group may not read), its password from --password-file or GSQ_RCON_PASSWORD.
    #[arg(long, value_name = "NAME")]
    pub login: Option<String>,

    /// The password of --login: the file's first line.
    #[arg(long, value_name = "FILE", requires = "login")]
    pub password_file: Option<PathBuf>,
}

/// The environment variable that holds an account's password (`--login`, as `gsq rcon`
/// takes it).
const PASSWORD_VARIABLE: &str = "GSQ_RCON_PASSWORD";

/// The environment variable that holds the OneQuery auth token.
const TOKEN_VARIABLE: &str = "GSQ_ONEQUERY_TOKEN";

/// Parts of a status a query can fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fetch {
    /// The player list.
    Players,
    /// The rules.
    Rules,
    /// Teams (SQP, GameSpy).
    Teams,
    /// Metrics (SQP).
    Metrics,
    /// Everything.
    All,
    /// Only the server info.
    None,
}

impl ClientArgs {
    /// The query-net options; a `--fetch` list that contradicts itself (`none,players`) is a
    /// usage error.
    pub fn options(&self) -> Result<Options, Failure> {
        use query_specs::sqp::ChunkSet;
        if self.fetch.contains(&Fetch::None) && self.fetch.len() > 1 {
            return Err(Failure::usage(
                "--fetch none means the server info alone and cannot be combined with other parts",
            )
            .hint("write --fetch none, or list the parts to fetch"));
        }
        let wants = |part: Fetch| {
            self.fetch.contains(&Fetch::All)
                || (self.fetch.contains(&part) && !self.fetch.contains(&Fetch::None))
        };
        let mut sqp_chunks = ChunkSet::SERVER_INFO;
        sqp_chunks.set(ChunkSet::SERVER_RULES, wants(Fetch::Rules));
        sqp_chunks.set(ChunkSet::PLAYER_INFO, wants(Fetch::Players));
        sqp_chunks.set(ChunkSet::TEAM_INFO, wants(Fetch::Teams));
        sqp_chunks.set(ChunkSet::METRICS, wants(Fetch::Metrics));
        let defaults = Options::default();
        Ok(Options {
            timeout: self.timeout,
            retries: self.retries,
            players: wants(Fetch::Players),
            rules: wants(Fetch::Rules),
            sqp_chunks,
            encoding: self.encoding,
            auth_token: self
                .token
                .clone()
                .or_else(|| std::env::var(TOKEN_VARIABLE).ok()),
            gamespy_request: self
                .gamespy_request
                .clone()
                .unwrap_or(defaults.gamespy_request),
            deadline: self.deadline,
            max_reply_bytes: self.max_reply_bytes,
            virtual_server: self
                .voice_port
                .map_or(defaults.virtual_server, VirtualServer::Port),
            query_login: self.query_login()?,
            minecraft_ping: !self.no_ping,
        })
    }

    /// The `--login` account with its password: from `--password-file`, else
    /// `GSQ_RCON_PASSWORD`; a login without either is a usage error.
    fn query_login(&self) -> Result<Option<QueryLogin>, Failure> {
        let Some(name) = &self.login else {
            return Ok(None);
        };
        let password = match &self.password_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    Failure::usage(format!(
                        "cannot read the password file {}: {e}",
                        path.display()
                    ))
                })?;
                text.lines().next().unwrap_or_default().to_owned()
            }
            None => std::env::var(PASSWORD_VARIABLE).map_err(|_| {
                Failure::usage("--login needs a password")
                    .hint("give --password-file FILE, or set GSQ_RCON_PASSWORD")
            })?,
        };
        Ok(Some(QueryLogin {
            name: name.clone(),
            password,
        }))
    }

    /// Refuses an option given for a protocol it does not apply to, as `--chunks` is refused
    /// for anything but SQP: silently ignoring it would hide a mistake.
    pub fn check_applies_to(&self, protocol: Protocol) -> Result<(), Failure> {
        let given = [
            ("--token", Protocol::OneQuery, self.token.is_some()),
            (
                "--gamespy-request",
                Protocol::GameSpy1,
                self.gamespy_request.is_some(),
            ),
            (
                "--voice-port",
                Protocol::TeamSpeak3,
                self.voice_port.is_some(),
            ),
            ("--login", Protocol::TeamSpeak3, self.login.is_some()),
        ];
        for (option, owner, is_given) in given {
            if is_given && protocol != owner {
                return Err(Failure::usage(format!(
                    "{option} is a {owner} option, not available with {protocol}"
                )));
            }
        }
        Ok(())
    }
}

/// Output format of `query` and `demo`.
#[derive(Debug, Clone, Copy, Args)]
pub struct OutputArgs {
    /// Print JSON (the default when stdout is not a terminal).
    #[arg(long, conflicts_with = "table")]
    pub json: bool,

    /// Print indented JSON (implies --json).
    #[arg(long, conflicts_with = "table")]
    pub pretty: bool,

    /// Print a table (the default on a terminal).
    #[arg(long)]
    pub table: bool,
}

const BULK_HELP: &str = "\
Input: one target per line, `<game|protocol|auto> <host[:port]>` (a game as in `gsq query`:
its port is the game port, its query port derived; auto tries the games of the port, then
every protocol), or `<host[:port]>` with --protocol. Blank lines and lines starting with `#`
are skipped; a line that does not parse becomes an error object in the output and the run goes
on. Hosts without a port use the game's or the protocol's default port (sqp 7779, onequery
5520, samp 7777, gamespy1 23000, a2s 27015, quake3 27960, gamespy2 2302, gamespy3 29900,
minecraft and minecraft-query 25565, bedrock 19132, quake2 27910, fivem 30120, doom3 27666,
teeworlds 8303, mumble 64738, eye 22126, unreal2 7778). A line's attempts (a game's ports, auto's protocols) run at once; the
first answer is its result. Datagram attempts share a few sockets (--sockets); Minecraft Java
attempts are TCP, a connection each, at most --connections open at once.

Output: one JSON object per line (NDJSON), in completion order. An answer is the ServerStatus
object of `gsq query --json` (with game, game_name, query_port) plus `target` (as written in
the input) and `line`; a failure is
{\"target\", \"line\", \"protocol\", \"address\", \"error\", \"error_kind\"} (target and
protocol as the line writes them, an unknown protocol too), error_kind being one of
timeout, unreachable, resolve, network, malformed, auth, unknown_protocol, bad_address,
port_out_of_range, usage, internal. A progress bar (when stderr is a
terminal) and a summary go to stderr. The exit code is 0 once every target has its line,
whatever the servers answered.

Examples:
  gsq bulk servers.txt > results.ndjson
  printf 'sqp 203.0.113.5:7779\\nrust 203.0.113.6:28015\\nauto 203.0.113.7\\n' | gsq bulk
  gsq bulk --protocol samp hosts.txt --concurrency 1000 --rate 5000
  gsq bulk servers.txt | jq -r 'select(.error == null) | \"\\(.name)\\t\\(.num_players)\"'\n\nExit codes: 0 every target got its line, 2 unreadable list or bad arguments,\n3 unknown --protocol, 130 interrupted (all codes: 'gsq --help').";

/// `gsq bulk`.
#[derive(Debug, Args)]
#[command(after_help = BULK_HELP)]
pub struct BulkArgs {
    /// The target list; `-` or nothing reads stdin.
    pub input: Option<PathBuf>,

    /// The game, protocol or auto of lines that name none.
    #[arg(short, long, value_name = "GAME|PROTOCOL", value_parser = crate::target::parse_choice)]
    pub protocol: Option<query_games::plan::Choice>,

    #[command(flatten)]
    pub client: ClientArgs,

    /// Queries in flight at once.
    #[arg(short, long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: u32,

    /// Datagrams per second at most, over all targets (no limit by default).
    #[arg(long, value_name = "PER_SECOND", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: Option<u32>,

    /// UDP sockets per address family.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub sockets: u32,

    /// TCP connections open at once (Minecraft Java), each a file descriptor: lowered to
    /// what the open-file limit allows once it is raised as far as it may be.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub connections: u32,
}

const SERVE_HELP: &str = "\
The state file is TOML (.toml) or JSON (.json). Every key is optional; unknown keys are errors:
  name, map, game_type, version,   text
    language, motd, protocol_hash
  host                             text, the address OneQuery advertises
  max_players, port,               whole numbers
    protocol_version
  player_count                     whole number, reported instead of the players' count
  password, is_network             true or false
  players                          list of {name: text, score: integer, ping: whole
                                   number, id: whole number, uuid: UUID text, team: a
                                   number or a name}
  teams                            list of {name: text, score: integer}
  rules                            table of key = text, number, or true/false
  metrics                          list of up to 25 numbers (SQP's Metrics chunk)
The file is reloaded when it changes; if the new content is invalid, the old state keeps
being served and one log line says why.

On startup one line per protocol goes to stdout, `<protocol> <bound address>`, so port 0
(any free port) works in scripts. Logs go to stderr. Ctrl-C (or SIGTERM) stops cleanly.

A2S answers PLAYER and RULES only to a client that proved its address with a challenge, and
INFO too unless --a2s-no-info-challenge: a forged request gets 9 bytes back, never more than
it sent. game_type is sent as the game's name unless --a2s-game gives one.

Amplification: SA:MP, GameSpy v1, GameSpy 2, Quake 3, Quake 2, FiveM and Doom 3 have no handshake,
so any datagram, forged or not, gets the full reply. Measured (query-bench reflection; 100
players and 300 rules of 255-byte strings) for the first request from an unknown address:
GameSpy v1 `\\status\\` 41,963 B for 8 (5,245x), Quake 3 `getstatus` 8,234 B for 14 (588x),
Quake 2 `status` 1,367 B for 11 (124x), SA:MP `d` 1,338 B for 11 (122x), GameSpy 2 1,225 B
for 10 (122x), Doom 3 `getInfo` 1,396 B for 14 (99.7x), FiveM `getinfo` 149 B for 13 (11.5x); SQP, OneQuery, A2S and GameSpy 3
answer it with a challenge (at most 5x). Sustained, from one netblock at the request limit,
the defaults hold every protocol to 8.6-16.4x (about 40 KB/s). Besides the requests per
address (--rate-limit, --burst), the bytes sent to sources that have not proved their address
(every SA:MP, GameSpy v1, GameSpy 2, Quake 3, Quake 2, FiveM and Doom 3 client; SQP, OneQuery, A2S and GameSpy 3
clients until they echo a challenge) are counted per netblock (--ipv4-prefix,
--ipv6-prefix): a netblock gets --netblock-bytes per second plus --netblock-burst, and all of
them together --total-bytes plus --total-burst. With the defaults, no netblock receives more
than 64 KiB/s over two seconds or more, and a client polling every few seconds is never
refused. Each reply datagram is at most --max-datagram bytes (split where the protocol
splits, lists cut where it cannot), so replies are not fragmented. The counts of what was
answered, what was dropped and why are logged every --stats-interval (0s: only on exit) and
on exit.

Example state.toml:
  name = \"My Server\"
  map = \"Highrise\"
  max_players = 16
  [rules]
  round_time = 300
  [[players]]
  name = \"Zoë\"
  score = 10

Examples:
  gsq serve state.toml --sqp 0.0.0.0:7779 --onequery 0.0.0.0:5520
  gsq serve state.json --all 127.0.0.1:0
  gsq serve state.toml --a2s 27015 --a2s-folder cstrike --a2s-app-id 240
  gsq serve state.toml --samp 7777 --rate-limit 5 --burst 10\n\nExit codes: 0 stopped by Ctrl-C or SIGTERM, 2 bad arguments, 4 malformed listen address,\n5 port out of range, 7 cannot listen, 10 missing or invalid state file\n(all codes: 'gsq --help').";

/// `gsq serve`.
#[derive(Debug, Args)]
#[command(after_help = SERVE_HELP)]
pub struct ServeArgs {
    /// The server state, TOML or JSON by extension.
    pub state: PathBuf,

    /// Answer SQP on this address (`ip:port`, `[ipv6]:port` or a port).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub sqp: Option<SocketAddr>,

    /// Answer OneQuery on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub onequery: Option<SocketAddr>,

    /// Answer SA:MP queries on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub samp: Option<SocketAddr>,

    /// Answer GameSpy v1 queries on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub gamespy1: Option<SocketAddr>,

    /// Answer Valve A2S queries (INFO, PLAYER, RULES) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub a2s: Option<SocketAddr>,

    /// Answer Quake 3 queries (getstatus, getinfo) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub quake3: Option<SocketAddr>,

    /// Answer Quake 2 queries (status) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub quake2: Option<SocketAddr>,

    /// Answer FiveM getinfo queries on this address, and /players.json, /dynamic.json and
    /// /info.json over TCP on the same port, as FiveM serves them.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub fivem: Option<SocketAddr>,

    /// Answer Doom 3 engine getInfo queries on this address (Doom 3's reply; --game quake4
    /// or etqw sends that game's).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub doom3: Option<SocketAddr>,

    /// Answer GameSpy 2 queries (details, players, teams) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub gamespy2: Option<SocketAddr>,

    /// Answer GameSpy 3/4 queries (challenge required) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub gamespy3: Option<SocketAddr>,

    /// Answer Minecraft "Query" (GameSpy 4, gamename MINECRAFT) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub minecraft_query: Option<SocketAddr>,

    /// Answer Minecraft Java status pings (TCP: status, ping, legacy ping) on this address.
    /// Connections are capped (1,024 in all, 8 per address) and cut after 2 s of silence or
    /// 5 s in all.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub minecraft_java: Option<SocketAddr>,

    /// Answer Minecraft Bedrock pings (RakNet unconnected ping) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub bedrock: Option<SocketAddr>,

    /// Answer Teeworlds 0.6, 0.7 and DDNet server info requests (`gie3`, DDNet's extended
    /// form and 0.7's token exchange too) on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub teeworlds: Option<SocketAddr>,

    /// Answer Mumble pings on this address.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub mumble: Option<SocketAddr>,

    /// Answer All-Seeing Eye queries (Multi Theft Auto, Far Cry) on this address: by
    /// convention the game port + 123.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub eye: Option<SocketAddr>,

    /// Answer Unreal 2 queries (UT2003, UT2004, Killing Floor) on this address: by convention
    /// the game port + 1. --all answers them too.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub unreal2: Option<SocketAddr>,

    /// Answer Frostbite queries (TCP: serverInfo, version, listPlayers) on this address, as
    /// a Battlefield 4 server answers a client that has not logged in. Same connection caps
    /// as --minecraft-java.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub frostbite: Option<SocketAddr>,

    /// Answer TeamSpeak 3 ServerQuery (TCP: use, serverinfo, clientlist, channellist) on this
    /// address; `login` is accepted with the password in GSQ_RCON_PASSWORD when it is set.
    /// Same connection caps as --minecraft-java.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub teamspeak3: Option<SocketAddr>,

    /// Answer SQP, OneQuery, SA:MP, GameSpy v1, A2S, Quake 3, Quake 2, Doom 3, GameSpy 2, GameSpy 3/4,
    /// Teeworlds, Bedrock and Unreal 2 on this one address (--minecraft-query answers as a Minecraft server, on a port of its own).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub all: Option<SocketAddr>,

    /// Answer as this game's servers do (`--game rust 0.0.0.0:28016`; 'gsq games' lists the
    /// ids): its protocol on ADDR, its A2S app id, folder and name, its `gamename` and text
    /// encoding, unless the options of those say otherwise.
    #[arg(long, num_args = 2, value_names = ["ID", "ADDR"])]
    pub game: Vec<String>,

    /// Requests per second each source address may send.
    #[arg(long, default_value_t = 10, value_name = "PER_SECOND", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: u32,

    /// Requests a quiet source may send at once.
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: u32,

    /// Answer every request, however many (trusted networks only).
    #[arg(long, conflicts_with_all = ["rate_limit", "burst"])]
    pub no_rate_limit: bool,

    /// Reply bytes per second each netblock may receive before proving its address.
    #[arg(long, default_value_t = 32 * 1024, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(1..))]
    pub netblock_bytes: u32,

    /// Reply bytes a quiet netblock may receive at once beyond --netblock-bytes.
    #[arg(long, default_value_t = 16 * 1024, value_name = "BYTES")]
    pub netblock_burst: u32,

    /// Reply bytes per second to all unproven sources together, per listening address.
    #[arg(long, default_value_t = 2 * 1024 * 1024, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(1..))]
    pub total_bytes: u32,

    /// Reply bytes all unproven sources may receive at once beyond --total-bytes.
    #[arg(long, default_value_t = 256 * 1024, value_name = "BYTES")]
    pub total_burst: u32,

    /// Leading bits of an IPv4 source that name its netblock.
    #[arg(long, default_value_t = 24, value_name = "BITS", value_parser = clap::value_parser!(u8).range(0..=32))]
    pub ipv4_prefix: u8,

    /// Leading bits of an IPv6 source that name its netblock.
    #[arg(long, default_value_t = 56, value_name = "BITS", value_parser = clap::value_parser!(u8).range(0..=128))]
    pub ipv6_prefix: u8,

    /// Send unproven sources whatever their request rate allows (trusted networks only).
    #[arg(long, conflicts_with_all = ["netblock_bytes", "netblock_burst", "total_bytes", "total_burst", "ipv4_prefix", "ipv6_prefix"])]
    pub no_byte_budget: bool,

    /// Send a run of reply datagrams to one client as one segmented message (UDP GSO, Linux):
    /// less CPU per datagram under load, but a packet capture on this host (loopback, or a
    /// network card that segments) shows each run as one datagram.
    #[arg(long)]
    pub gso: bool,

    /// The largest reply datagram, in bytes (UDP payload).
    #[arg(long, default_value_t = 1400, value_name = "BYTES", value_parser = clap::value_parser!(u16).range(512..=65507))]
    pub max_datagram: u16,

    /// Log a rejected or rate-limited source at most once per this interval.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub log_interval: Duration,

    /// Log the counters (answered, bytes, drops by reason) once per this interval when a
    /// request came in it; 0s logs them only on exit.
    #[arg(long, default_value = "60s", value_parser = parse_duration_or_zero, value_name = "DURATION")]
    pub stats_interval: Duration,

    /// Text encoding of SA:MP and GameSpy replies (A2S is always UTF-8).
    #[arg(short, long, default_value = "windows-1252", value_parser = parse_encoding)]
    pub encoding: TextEncoding,

    /// OneQuery: what clients without a valid auth token may ask for.
    #[arg(long, value_enum, default_value = "all", value_name = "ACCESS")]
    pub onequery_public: PublicAccess,

    /// OneQuery: an auth token that grants everything (repeatable; comma-separated in the
    /// environment variable).
    #[arg(
        long = "onequery-secret",
        value_name = "SECRET",
        env = "GSQ_ONEQUERY_SECRETS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub onequery_secrets: Vec<String>,

    /// SA:MP: answer RCON with this password (commands: players, hostname, echo <text>).
    /// Without it RCON requests are ignored.
    #[arg(
        long,
        value_name = "PASSWORD",
        env = "GSQ_SAMP_RCON_PASSWORD",
        hide_env_values = true
    )]
    pub samp_rcon_password: Option<String>,

    /// Serve Source RCON (TCP) on this address, with a console over the state: status,
    /// players, hostname [NAME], map NAME, kick NAME, echo TEXT, help. Needs a password
    /// (--rcon-password-file or GSQ_RCON_PASSWORD). Bind it to loopback or a VPN.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_arg)]
    pub rcon: Option<SocketAddr>,

    /// The RCON password: the first line of this file (else GSQ_RCON_PASSWORD).
    #[arg(long, value_name = "FILE", requires = "rcon")]
    pub rcon_password_file: Option<PathBuf>,

    /// GameSpy v1: the `gamename` to report (e.g. `ut`, `bfield1942`); none by default.
    #[arg(long, value_name = "NAME", default_value = "")]
    pub gamespy1_game_name: String,

    /// A2S: answer INFO without a challenge, as servers before December 2020 did (for old
    /// clients; the port then answers a forged INFO with a few hundred bytes).
    #[arg(long)]
    pub a2s_no_info_challenge: bool,

    /// A2S: the Steam app id INFO reports (2400, The Ship, changes the reply layout).
    #[arg(long, value_name = "ID", default_value_t = 0)]
    pub a2s_app_id: u16,

    /// A2S: the game folder INFO reports (e.g. `cstrike`, `tf`); none by default.
    #[arg(long, value_name = "NAME", default_value = "")]
    pub a2s_folder: String,

    /// A2S: the game name INFO reports; the state's game_type by default.
    #[arg(long, value_name = "NAME", default_value = "")]
    pub a2s_game: String,

    /// A2S: comma-separated keywords (tags) INFO reports; none by default.
    #[arg(long, value_name = "TAGS", default_value = "")]
    pub a2s_keywords: String,
}

/// What a OneQuery client without a valid auth token gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PublicAccess {
    /// The server info and the player list.
    All,
    /// The server info only.
    Basic,
    /// Nothing: every query needs a secret.
    None,
}

const DECODE_HELP: &str = "\
Each FILE is one datagram, raw bytes or, with --hex, hex text (white space ignored). Several
files are several datagrams of one reply (SQP split replies, GameSpy parts, SA:MP RCON
lines), in any order. `-` reads stdin.

Whether the bytes are a request or a reply is found by trying both; --as decides when both
fit. An SQP query response needs the chunk set it holds: --chunks names it, otherwise it is
found as the client finds it (all chunks, or the one subset of them whose chunks explain every
byte) and a note says which. On malformed input the byte offset and field path of the error
are printed and the exit code is 9.

Output: {\"protocol\", \"type\" (request or reply), \"packet\"}, plus \"chunks\" for SQP query
responses and \"datagrams\" when several files were given.

--status prints instead the status the client would return had these reply datagrams arrived,
in any order: the real client session is run, each request it sends answered with the files
that answer it (their echo of the request written in, as a server echoes it). Missing
datagrams give what the client gives on a lossy network: a status with complete: false, or
the error. Its address is 0.0.0.0 for files, the server's for a capture.

A pcap or pcapng file (tcpdump -w; Ethernet, loopback, raw IP or Linux cooked v1 and v2 link
types, as `tcpdump -i any` writes, IPv4 and IPv6) is read as the UDP datagrams to and from the
protocol's port (--port to choose): each is decoded (the split parts of an A2S reply joined),
or with --status, the replies of each server to each client make one status, one JSON line
each. A capture cut inside a packet (a tcpdump killed while writing) gives the packets before
it, and a note says where it ends.

Examples:
  gsq decode sqp --hex reply.hex
  gsq decode sqp --chunks info,rules reply.bin
  gsq decode gamespy1 part1.bin part2.bin part3.bin --encoding latin1 --pretty
  xxd -p capture.bin | gsq decode samp --hex -
  gsq decode gamespy1 --status part1.bin part3.bin
  gsq decode samp --status capture.pcap
  gsq decode a2s --status info.bin players-part0.bin players-part1.bin rules.bin\n\nExit codes: 0 decoded, 2 unreadable file or bad arguments, 3 unknown protocol,\n9 malformed bytes (all codes: 'gsq --help').";

/// `gsq decode`.
#[derive(Debug, Clone, Args)]
#[command(after_help = DECODE_HELP)]
pub struct DecodeArgs {
    /// Protocol: sqp, onequery, samp, gamespy1, a2s, quake3, gamespy2, gamespy3, minecraft
    /// (the server's or the client's TCP bytes), minecraft-query, bedrock, quake2, fivem, doom3, teeworlds,
    /// mumble, eye, unreal2, frostbite (packets of either side), teamspeak3 (lines of either side).
    #[arg(value_parser = parse_protocol)]
    pub protocol: Protocol,

    /// The captured datagrams.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The files hold hex text, not raw bytes.
    #[arg(long)]
    pub hex: bool,

    /// SQP: the chunks the reply holds, comma-separated (info, rules, players, teams,
    /// metrics, all) or a number like 0x1f; found from the bytes when not given.
    #[arg(long, value_parser = parse_chunks)]
    pub chunks: Option<query_specs::sqp::ChunkSet>,

    /// Text encoding: default windows-1252 for SA:MP and GameSpy, utf-8 for A2S.
    #[arg(short, long, value_parser = parse_encoding)]
    pub encoding: Option<TextEncoding>,

    /// Read the bytes as this kind of packet when both would fit.
    #[arg(long = "as", value_enum, value_name = "KIND")]
    pub as_kind: Option<PacketKind>,

    /// Print the status the client would return had these reply datagrams arrived (the
    /// object `gsq query --json` prints), instead of each packet.
    #[arg(long, conflicts_with = "as_kind")]
    pub status: bool,

    /// In a capture file: the server's port, whose datagrams are decoded (default: the
    /// protocol's port).
    #[arg(long, value_parser = parse_port)]
    pub port: Option<u16>,

    /// Indented JSON (the default when stdout is a terminal).
    #[arg(long)]
    pub pretty: bool,
}

/// A request or a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PacketKind {
    /// What a client sends.
    Request,
    /// What a server answers.
    Reply,
}

impl PacketKind {
    /// `request` or `reply`.
    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Request => "request",
            PacketKind::Reply => "reply",
        }
    }
}

const DEMO_HELP: &str = "\
Starts a responder of every protocol on 127.0.0.1 (free ports), with a sample server state
(players with accented names, rules, teams), queries each with the real client, and prints
what came back. Nothing leaves the machine.

Examples:
  gsq demo
  gsq demo --json | jq .name\n\nExit codes: 0 every protocol answered, else the code of the failed query\n(all codes: 'gsq --help').";

/// `gsq demo`.
#[derive(Debug, Args)]
#[command(after_help = format!("Protocols: {}.\n\n{DEMO_HELP}", protocols::titles()))]
pub struct DemoArgs {
    #[command(flatten)]
    pub output: OutputArgs,
}

const EXPORTER_HELP: &str = "\
Endpoints:
  /probe?protocol=P&target=HOST[:PORT]   query one server now; its metrics (blackbox style);
                                         P is a protocol, a game id or auto; or game=ID
                                         (HOST:PORT then the game port), query_port=N
  /metrics                               the exporter's own metrics, and with --targets the
                                         latest result of every listed target

A probe never outlasts the scrape: it ends by the X-Prometheus-Scrape-Timeout-Seconds header
(less half a second), or by --probe-timeout without one, with gsq_up 0. An unknown protocol or
a malformed target is answered 400, a target outside --allow 403, each with a one-line reason.
With --allow, /probe queries only those addresses (host names are checked once resolved), so
an exposed exporter cannot be turned into a scanner.

Prometheus scrape configuration (one job per protocol):
  - job_name: gsq_sqp
    metrics_path: /probe
    params: {protocol: [sqp]}
    static_configs: [{targets: ['203.0.113.5:7779']}]
    relabel_configs:
      - {source_labels: [__address__], target_label: __param_target}
      - {source_labels: [__param_target], target_label: instance}
      - {target_label: __address__, replacement: '127.0.0.1:9339'}

Examples:
  gsq exporter --listen 127.0.0.1:9339 --allow 203.0.113.0/24
  gsq exporter --targets servers.txt --interval 15s\n\nExit codes: 0 stopped by a signal, 2 bad arguments or target file, 7 cannot listen\n(all codes: 'gsq --help').";

/// `gsq exporter`.
#[derive(Debug, Args)]
#[command(after_help = EXPORTER_HELP)]
pub struct ExporterArgs {
    /// Where the HTTP server listens. Port 0 picks a free one; the address goes to stdout.
    #[arg(long, default_value = "127.0.0.1:9339", value_parser = parse_listen)]
    pub listen: SocketAddr,

    /// Targets to poll in the background, in `gsq bulk`'s format ("<game|protocol|auto>
    /// <host[:port]>" per line); their latest results are on /metrics.
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,

    /// How long between the end of one poll of the target list and the start of the next.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub interval: Duration,

    /// Addresses /probe may query: an IP address or a network (CIDR), repeatable. Any
    /// address when not given.
    #[arg(long = "allow", value_name = "NET", value_parser = parse_allowed)]
    pub allow: Vec<ipnet::IpNet>,

    /// Probes in flight at most; the others wait for a slot until their deadline.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_probes: u32,

    /// The longest a probe may take when the scrape says no timeout.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub probe_timeout: Duration,

    #[command(flatten)]
    pub client: ClientArgs,
}

/// An IP address (a network of one) or a CIDR network.
fn parse_allowed(text: &str) -> Result<ipnet::IpNet, String> {
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("'{text}' is neither an IP address nor a network like 10.0.0.0/8"))
}

/// A protocol name; an unknown one is [`Category::UnknownProtocol`] (exit code 3).
fn parse_protocol(text: &str) -> Result<Protocol, BadValue> {
    Protocol::from_str(text).map_err(|e| BadValue::new(Category::UnknownProtocol, e.to_string()))
}

/// A server address; [`Category::PortOutOfRange`] or [`Category::BadAddress`] when refused.
fn parse_host_port(text: &str) -> Result<HostPort, BadValue> {
    text.parse::<HostPort>()
        .map_err(|e| BadValue::new(crate::address::category(&e), e.reason()))
}

/// A port number, 1-65535; anything else numeric is [`Category::PortOutOfRange`] (exit 5)
/// as in addresses.
fn parse_port(text: &str) -> Result<u16, BadValue> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BadValue::new(
            Category::Usage,
            format!("{text:?} is not a port number"),
        ));
    }
    match text.parse::<u16>() {
        Ok(port) if port != 0 => Ok(port),
        _ => Err(BadValue::new(
            Category::PortOutOfRange,
            format!("port {text} is out of range (1-65535)"),
        )),
    }
}

fn parse_listen_arg(text: &str) -> Result<SocketAddr, BadValue> {
    parse_listen(text)
}

fn parse_encoding(text: &str) -> Result<TextEncoding, String> {
    text.parse()
}

/// A GameSpy v1 request: backslash-delimited queries such as `\status\` or `\info\\rules\`.
fn parse_gamespy_request(text: &str) -> Result<String, String> {
    let valid = text.starts_with('\\')
        && query_specs::gamespy1::Request::decode_all(text.as_bytes())
            .is_ok_and(|queries| !queries.is_empty());
    if valid {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text:?} is not a GameSpy v1 request: write queries between backslashes, e.g. \\status\\ or \\info\\"
        ))
    }
}

/// A duration: `1.5s`, `500ms`, `2m`, or a number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let duration = match text.parse::<f64>() {
        Ok(seconds) if (0.0..1e9).contains(&seconds) => Duration::from_secs_f64(seconds),
        Ok(_) => return Err(format!("{text:?} is not a usable number of seconds")),
        Err(_) => humantime::parse_duration(text)
            .map_err(|e| format!("{text:?} is not a duration ({e}); write e.g. 1.5s or 500ms"))?,
    };
    if duration.is_zero() {
        return Err("the duration must be more than zero".into());
    }
    Ok(duration)
}

/// As [`parse_duration`], but `0` (or `0s`) is allowed: an interval that never elapses.
pub fn parse_duration_or_zero(text: &str) -> Result<Duration, String> {
    match text.trim().trim_end_matches('s').parse::<f64>() {
        Ok(0.0) => Ok(Duration::ZERO),
        _ => parse_duration(text),
    }
}

/// The chunks `gsq query sqp --chunks` asks for: as [`parse_chunks`], but at least one.
fn parse_query_chunks(text: &str) -> Result<query_specs::sqp::ChunkSet, String> {
    let chunks = parse_chunks(text)?;
    if chunks.is_empty() {
        return Err(
            "no chunk named: ask for at least one of info, rules, players, teams, metrics"
                .to_owned(),
        );
    }
    Ok(chunks)
}

/// An SQP chunk set: names (`info,rules`), `all`, or a number (`0x03`, `3`).
pub fn parse_chunks(text: &str) -> Result<query_specs::sqp::ChunkSet, String> {
    use query_specs::sqp::ChunkSet;
    let text = text.trim();
    let number = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16).ok(),
        None => text.parse::<u8>().ok(),
    };
    if let Some(bits) = number {
        return ChunkSet::from_bits(bits)
            .ok_or_else(|| format!("{text}: unknown chunk bits (known: 0x01 to 0x10, all 0x1f)"));
    }
    let mut set = ChunkSet::empty();
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        set |= match name.to_ascii_lowercase().as_str() {
            "info" | "server_info" => ChunkSet::SERVER_INFO,
            "rules" | "server_rules" => ChunkSet::SERVER_RULES,
            "players" | "player_info" => ChunkSet::PLAYER_INFO,
            "teams" | "team_info" => ChunkSet::TEAM_INFO,
            "metrics" => ChunkSet::METRICS,
            "all" => ChunkSet::all(),
            "none" => ChunkSet::empty(),
            _ => {
                return Err(format!(
                    "unknown chunk {name:?}: expected info, rules, players, teams, metrics, all or a number"
                ))
            }
        };
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use query_specs::sqp::ChunkSet;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn serve_help_names_every_state_file_key() {
        use query_net::state::{PlayerState, ServerState, TeamState};
        let keys = |value: serde_json::Value| -> Vec<String> {
            value.as_object().unwrap().keys().cloned().collect()
        };
        let state = ServerState {
            players: vec![PlayerState::default()],
            teams: vec![TeamState::default()],
            ..ServerState::default()
        };
        let mut all = keys(serde_json::to_value(&state).unwrap());
        all.extend(keys(serde_json::to_value(PlayerState::default()).unwrap()));
        all.extend(keys(serde_json::to_value(TeamState::default()).unwrap()));
        let readme = include_str!("../../README.md");
        for key in all {
            assert!(
                SERVE_HELP.contains(&key),
                "{key} missing from gsq serve --help"
            );
            assert!(
                readme.contains(&format!("`{key}`")) || readme.contains(&format!("{key}, ")),
                "{key} missing from the README's state file table"
            );
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.25"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").unwrap_err().contains("1.5s"));
        assert!(parse_duration("inf").is_err());
        assert_eq!(parse_duration_or_zero("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration_or_zero("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration_or_zero("2s"), Ok(Duration::from_secs(2)));
        assert!(parse_duration_or_zero("-1").is_err());
    }

    #[test]
    fn gamespy_requests() {
        assert!(parse_gamespy_request("\\status\\").is_ok());
        assert!(parse_gamespy_request("\\info\\\\rules\\").is_ok());
        assert!(parse_gamespy_request("\\echo\\hello").is_ok());
        assert!(parse_gamespy_request("status")
            .unwrap_err()
            .contains("backslashes"));
        assert!(parse_gamespy_request("").is_err());
    }

    #[test]
    fn chunk_sets() {
        assert_eq!(
            parse_chunks("info,rules"),
            Ok(ChunkSet::SERVER_INFO | ChunkSet::SERVER_RULES)
        );
        assert_eq!(parse_chunks("all"), Ok(ChunkSet::all()));
        assert_eq!(parse_chunks("0x1f"), Ok(ChunkSet::all()));
        assert_eq!(parse_chunks("4"), Ok(ChunkSet::PLAYER_INFO));
        assert!(parse_chunks("0x20").is_err());
        assert!(parse_chunks("info,bogus").unwrap_err().contains("bogus"));
    }

    #[test]
    fn query_chunk_sets_name_at_least_one_chunk() {
        assert_eq!(parse_query_chunks("rules"), Ok(ChunkSet::SERVER_RULES));
        assert_eq!(
            parse_query_chunks("teams,metrics"),
            Ok(ChunkSet::TEAM_INFO | ChunkSet::METRICS)
        );
        assert!(parse_query_chunks("none")
            .unwrap_err()
            .contains("at least one"));
        assert!(parse_query_chunks("").unwrap_err().contains("at least one"));
        assert!(parse_query_chunks("0").is_err());
        let cli = Cli::parse_from(["gsq", "query", "sqp", "h", "--chunks", "players,info"]);
        let Command::Query(args) = cli.command else {
            panic!("not a query")
        };
        assert_eq!(
            args.chunks,
            Some(ChunkSet::SERVER_INFO | ChunkSet::PLAYER_INFO)
        );
        assert!(
            Cli::try_parse_from(["gsq", "query", "sqp", "h", "--chunks", "info", "--fetch", "all"])
                .is_err(),
            "--chunks and --fetch conflict"
        );
    }

    #[test]
    fn fetch_lists_map_to_options() {
        use query_specs::sqp::ChunkSet;
        let cli = Cli::parse_from(["gsq", "query", "sqp", "h", "--fetch", "players,metrics"]);
        let Command::Query(args) = cli.command else {
            panic!("not a query")
        };
        let o = args.client.options().unwrap();
        assert!(o.players && !o.rules);
        assert_eq!(
            o.sqp_chunks,
            ChunkSet::SERVER_INFO | ChunkSet::PLAYER_INFO | ChunkSet::METRICS
        );
        let cli = Cli::parse_from(["gsq", "query", "samp", "h", "--fetch", "none"]);
        let Command::Query(args) = cli.command else {
            panic!("not a query")
        };
        let o = args.client.options().unwrap();
        assert!(!o.players && !o.rules);
        assert_eq!(o.sqp_chunks, ChunkSet::SERVER_INFO);
        assert_eq!(o.encoding, None);
    }

    #[test]
    fn protocol_choice() {
        use crate::target::parse_choice;
        use query_games::plan::Choice;
        assert_eq!(parse_choice("AUTO"), Ok(Choice::Auto));
        assert_eq!(parse_choice("samp"), Ok(Choice::Protocol(Protocol::Samp)));
        assert_eq!(parse_choice("rust").unwrap().to_string(), "rust");
        let err = parse_choice("quake9").unwrap_err();
        assert!(err.message.contains("auto"), "{err}");
        assert_eq!(err.category, Category::UnknownProtocol);
        assert_eq!(
            parse_protocol("doom").unwrap_err().category,
            Category::UnknownProtocol
        );
    }

    #[test]
    fn address_values_carry_their_category() {
        assert_eq!(
            parse_host_port("h:70000").unwrap_err().category,
            Category::PortOutOfRange
        );
        assert_eq!(
            parse_host_port("h:x").unwrap_err().category,
            Category::BadAddress
        );
    }
}
