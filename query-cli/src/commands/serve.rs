//! `gsq serve`: responders for a server state kept in a file.
//!
//! Each address gets its own socket and serve loop; all loops read one [`SharedState`], which
//! a watcher replaces when the file changes (an invalid file leaves the old state in place).
//! The loops are query-net's `driver::serve_with`, whose drop callback logs a misbehaving
//! source (once per interval).

use std::collections::HashMap;
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};
use query_games::plan::{game_named, Choice};
use query_games::Game;
use query_net::driver;
use query_net::engine::DropReason;
use query_net::engines::a2s::A2sConfig;
use query_net::limit::{ByteRate, RateLimit, ReplyBudget, Stats, StatsSnapshot};
use query_net::service::Service;
use query_net::state::{ServerState, SharedState};
use query_net::Protocol;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::address::parse_listen;
use crate::cli::ServeArgs;
use crate::exit::{Category, Failure, Outcome};
use crate::responders::{self, AnyResponder, Role, Settings};
use crate::state_file;
use crate::target::parse_choice;

/// How long the state file must stay unchanged before it is read: editors and `echo >`
/// write in several steps.
const SETTLE: Duration = Duration::from_millis(150);

/// How often the fallback watcher polls when the system's file events are unavailable.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Sources remembered for log rate limiting at most; beyond it, new sources go unlogged
/// until old ones age out (memory stays bounded under a flood from many addresses).
const MAX_LOGGED_SOURCES: usize = 4096;

/// Runs `gsq serve` until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> Outcome {
    let game = served_game(&args)?;
    let roles = roles(&args, game)?;
    let state = state_file::load(&args.state)?;
    let shared = SharedState::new(state);
    let mut settings = Settings {
        encoding: args.encoding,
        onequery_public: args.onequery_public,
        onequery_secrets: args.onequery_secrets.clone(),
        samp_rcon_password: args.samp_rcon_password.clone(),
        gamespy1_game_name: args.gamespy1_game_name.clone(),
        game_name: String::new(),
        a2s: a2s_config(&args),
    };
    if let Some((game, _)) = game {
        as_game(&mut settings, game);
    }
    let rate_limit = (!args.no_rate_limit).then(|| RateLimit {
        per_second: NonZeroU32::new(args.rate_limit).unwrap_or(NonZeroU32::MIN),
        burst: NonZeroU32::new(args.burst).unwrap_or(NonZeroU32::MIN),
        ..RateLimit::default()
    });
    let reply_budget = (!args.no_byte_budget).then(|| reply_budget(&args));

    // Watch before announcing: a script that edits the file as soon as the ports are printed
    // must not go unnoticed.
    let shutdown = CancellationToken::new();
    let watcher = spawn_reloader(&args.state, shared.clone(), shutdown.clone());

    let mut bound = Vec::with_capacity(roles.len());
    for (role, address) in roles {
        let responder = responders::build(role, &shared, &settings)?;
        let socket = UdpSocket::bind(address).await.map_err(|e| {
            Failure::new(
                Category::Network,
                format!("cannot listen on {address} for {role}: {e}"),
            )
            .hint("pick another address or port (port 0 picks a free one)")
        })?;
        let local = socket.local_addr().map_err(|e| {
            Failure::new(
                Category::Network,
                format!("cannot read the bound address: {e}"),
            )
        })?;
        bound.push((role, local, socket, responder));
    }
    let mut streams = Vec::new();
    let mut http_streams = Vec::new();
    for (protocol, address) in [
        (Protocol::Minecraft, args.minecraft_java),
        (Protocol::Frostbite, args.frostbite),
        (Protocol::TeamSpeak3, args.teamspeak3),
    ] {
        if let Some(address) = address {
            streams.push((protocol, bind_tcp(address, protocol.name()).await?));
        }
    }
    // FiveM serves its player list over HTTP on the port of `getinfo`.
    for (role, local, _, _) in &bound {
        if *role == Role::One(Protocol::Fivem) {
            let (listener, _) = bind_tcp(*local, "fivem's /players.json").await?;
            http_streams.push((Protocol::Fivem, listener));
        }
    }
    let rcon = match args.rcon {
        Some(address) => {
            let password = rcon_password(&args)?;
            let (listener, local) = bind_tcp(address, "rcon").await?;
            Some((listener, local, password))
        }
        None => None,
    };
    let stop = stop_signal();
    announce(&bound)?;
    for (protocol, (listener, local)) in streams {
        announce_line(&format!("{protocol} {local}\n"))?;
        serve_stream(protocol, listener, &shared, &shutdown);
    }
    for (protocol, listener) in http_streams {
        serve_stream(protocol, listener, &shared, &shutdown);
    }
    if let Some((listener, local, password)) = rcon {
        announce_line(&format!("rcon {local}\n"))?;
        let config = query_net::rcon::server::ServerConfig::default();
        let gate = query_net::rcon::server::AuthGate::new(&password, config.lockout);
        tokio::spawn(query_net::rcon::server::serve(
            listener,
            Arc::new(gate),
            Arc::new(crate::rcon_console::StateConsole::new(shared.clone())),
            config,
            Arc::new(query_net::tcp::ListenerStats::default()),
            shutdown.clone(),
        ));
    }

    let stats = Arc::new(Stats::default());
    let source_log = Arc::new(Mutex::new(SourceLog::new(args.log_interval)));
    if !args.stats_interval.is_zero() {
        tokio::spawn(log_stats(
            Arc::clone(&stats),
            args.stats_interval,
            shutdown.clone(),
        ));
    }
    let mut loops = tokio::task::JoinSet::new();
    for (role, local, socket, responder) in bound {
        let mut service = Service::new(responder)
            .rate_limit(rate_limit)
            .reply_budget(reply_budget)
            .max_datagram(usize::from(args.max_datagram))
            .with_stats(Arc::clone(&stats));
        let shutdown = shutdown.clone();
        let source_log = Arc::clone(&source_log);
        let gso = args.gso;
        loops.spawn(async move {
            let on_drop = |from: SocketAddr, reason| log_drop(&source_log, from.ip(), reason);
            let result = match gso {
                #[cfg(target_os = "linux")]
                true => {
                    driver::serve_segmented_with(&socket, &mut service, &shutdown, on_drop).await
                }
                // Segmentation is Linux's: elsewhere `--gso` changes nothing.
                _ => driver::serve_with(&socket, &mut service, &shutdown, on_drop).await,
            };
            (role, local, result)
        });
    }

    tracing::info!(
        "serving {:?} from {}; Ctrl-C stops",
        crate::logging::cut(&shared.load().name),
        args.state.display()
    );
    let failed = tokio::select! {
        () = stop => None,
        Some(joined) = loops.join_next() => Some(joined),
    };
    shutdown.cancel();
    while loops.join_next().await.is_some() {}
    drop(watcher);
    tracing::info!("stopped: {}", describe_stats(&stats.snapshot()));
    match failed {
        Some(Ok((role, local, Err(e)))) => Err(Failure::new(
            Category::Network,
            format!("the {role} socket on {local} failed: {e}"),
        )),
        Some(Err(e)) => Err(Failure::internal(format!("a serve loop failed: {e}"))),
        _ => Ok(()),
    }
}

/// The counters in one line.
fn describe_stats(s: &StatsSnapshot) -> String {
    format!(
        "{} requests, {} answered ({} datagrams, {} bytes, {} of them to unproven sources); \
         dropped {} rate-limited, {} over a netblock's byte budget, {} over the total byte \
         budget, {} malformed, {} bad challenge, {} unsupported, {} declined; {} receive errors",
        s.received,
        s.answered,
        s.replies_sent,
        s.reply_bytes,
        s.unproven_reply_bytes,
        s.dropped_rate_limited,
        s.dropped_netblock_budget,
        s.dropped_total_budget,
        s.dropped_malformed,
        s.dropped_bad_challenge,
        s.dropped_unsupported,
        s.dropped_declined,
        s.recv_errors
    )
}

/// Logs the counters of each `interval` in which a request came in, until `shutdown`.
async fn log_stats(stats: Arc<Stats>, interval: Duration, shutdown: CancellationToken) {
    let mut last = stats.snapshot();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let now = stats.snapshot();
        if now.received != last.received {
            let delta = now.since(&last);
            tracing::info!(
                "last {}: {}",
                humantime::format_duration(interval),
                describe_stats(&delta)
            );
        }
        last = now;
    }
}

/// The byte budgets from the `--netblock-*`, `--total-*` and `--ipv*-prefix` options.
fn reply_budget(args: &ServeArgs) -> ReplyBudget {
    let rate = |per_second: u32, burst| ByteRate {
        per_second: NonZeroU32::new(per_second).unwrap_or(NonZeroU32::MIN),
        burst,
    };
    ReplyBudget {
        netblock: rate(args.netblock_bytes, args.netblock_burst),
        total: rate(args.total_bytes, args.total_burst),
        ipv4_prefix: args.ipv4_prefix,
        ipv6_prefix: args.ipv6_prefix,
        ..ReplyBudget::default()
    }
}

/// The game of `--game ID ADDR` and its address.
fn served_game(args: &ServeArgs) -> Outcome<Option<(&'static Game, SocketAddr)>> {
    let [id, address] = args.game.as_slice() else {
        return Ok(None);
    };
    let game = match game_named(id) {
        Ok(game) => game,
        Err(e) if e.waiting.is_some() => {
            return Err(Failure::new(Category::UnknownProtocol, e.to_string()))
        }
        Err(_) => {
            let hint = match parse_choice(id) {
                Ok(Choice::Protocol(protocol)) => {
                    format!("serve a protocol with --{protocol} ADDR")
                }
                _ => "'gsq games' lists the games".to_owned(),
            };
            return Err(Failure::new(
                Category::UnknownProtocol,
                format!("--game needs a game id, and {id:?} is not one"),
            )
            .hint(hint));
        }
    };
    let address = parse_listen(address).map_err(|bad| Failure::new(bad.category, bad.message))?;
    Ok(Some((game, address)))
}

/// Presents the server as `game`'s servers do, where the options left the defaults: A2S app
/// id (in INFO's 16-bit field when it fits, always in the 64-bit game id, as Steam servers
/// write it), folder and game name; `gamename`; the game's text encoding (where `--encoding`
/// kept its default).
fn as_game(settings: &mut Settings, game: &Game) {
    let a2s = &mut settings.a2s;
    if a2s.app_id == 0 {
        if let Some(app_id) = game.a2s_app_id {
            a2s.app_id = u16::try_from(app_id).unwrap_or(0);
            a2s.game_id = Some(u64::from(app_id));
        }
    }
    if a2s.folder.is_empty() {
        a2s.folder = game.a2s_folder.clone().unwrap_or_default();
    }
    if a2s.game.is_empty() {
        a2s.game = game.name.clone();
    }
    let gamename = game.gamename.first().cloned().unwrap_or_default();
    if settings.gamespy1_game_name.is_empty() {
        settings.gamespy1_game_name = gamename.clone();
    }
    settings.game_name = gamename;
    if let Some(encoding) = game.encoding {
        if settings.encoding == Settings::default().encoding {
            settings.encoding = encoding;
        }
    }
}

/// The addresses asked for, each with what it answers.
fn roles(
    args: &ServeArgs,
    game: Option<(&'static Game, SocketAddr)>,
) -> Outcome<Vec<(Role, SocketAddr)>> {
    let roles: Vec<(Role, SocketAddr)> = [
        (
            Role::One(game.map_or(Protocol::Sqp, |(g, _)| g.protocol)),
            game.map(|(_, address)| address),
        ),
        (Role::One(Protocol::Sqp), args.sqp),
        (Role::One(Protocol::OneQuery), args.onequery),
        (Role::One(Protocol::Samp), args.samp),
        (Role::One(Protocol::GameSpy1), args.gamespy1),
        (Role::One(Protocol::A2s), args.a2s),
        (Role::One(Protocol::Quake3), args.quake3),
        (Role::One(Protocol::Quake2), args.quake2),
        (Role::One(Protocol::Fivem), args.fivem),
        (Role::One(Protocol::Doom3), args.doom3),
        (Role::One(Protocol::GameSpy2), args.gamespy2),
        (Role::One(Protocol::GameSpy3), args.gamespy3),
        (Role::One(Protocol::MinecraftQuery), args.minecraft_query),
        (Role::One(Protocol::Bedrock), args.bedrock),
        (Role::One(Protocol::Teeworlds), args.teeworlds),
        (Role::One(Protocol::Mumble), args.mumble),
        (Role::One(Protocol::Ase), args.eye),
        (Role::One(Protocol::Unreal2), args.unreal2),
        (Role::All, args.all),
    ]
    .into_iter()
    .filter_map(|(role, address)| address.map(|a| (role, a)))
    .collect();
    let no_stream = [
        args.minecraft_java,
        args.frostbite,
        args.teamspeak3,
        args.rcon,
    ]
    .iter()
    .all(Option::is_none);
    if roles.is_empty() && no_stream {
        return Err(Failure::usage("nothing to serve").hint(
            "give at least one of --game ID, --sqp, --onequery, --samp, --gamespy1, --a2s, --quake3, --quake2, --fivem, --doom3, --gamespy2, --gamespy3, --minecraft-query, --bedrock, --teeworlds, --mumble, --eye, --unreal2, --minecraft-java, --frostbite, --teamspeak3, --rcon or --all with an address",
        ));
    }
    // Two sockets on one fixed port would fail to bind; say which options clash instead.
    let mut by_address = roles.clone();
    by_address.sort_by_key(|(_, a)| *a);
    for pair in by_address.windows(2) {
        let ((first, a), (second, b)) = (pair[0], pair[1]);
        if a == b && a.port() != 0 {
            return Err(
                Failure::usage(format!("--{first} and --{second} both ask for {a}"))
                    .hint("use --all to serve every protocol on one port"),
            );
        }
    }
    Ok(roles)
}

/// The A2S responder's configuration from the `--a2s-*` options.
fn a2s_config(args: &ServeArgs) -> A2sConfig {
    A2sConfig {
        info_challenge: !args.a2s_no_info_challenge,
        app_id: args.a2s_app_id,
        folder: args.a2s_folder.clone(),
        game: args.a2s_game.clone(),
        keywords: args.a2s_keywords.clone(),
        ..A2sConfig::default()
    }
}

/// The password of `--rcon`: the first line of `--rcon-password-file`, else
/// `GSQ_RCON_PASSWORD`; there is no default.
fn rcon_password(args: &ServeArgs) -> Outcome<String> {
    if let Some(path) = &args.rcon_password_file {
        return crate::commands::rcon::password_from_file(path);
    }
    match std::env::var(crate::commands::rcon::PASSWORD_VARIABLE) {
        Ok(password) if !password.is_empty() => Ok(password),
        _ => Err(Failure::usage("--rcon needs a password")
            .hint("give --rcon-password-file FILE or set GSQ_RCON_PASSWORD")),
    }
}

/// Prints `<protocol> <address>` per protocol on stdout, so scripts can find the ports.
/// A TCP listener on `address`, and the address it got.
/// Answers `protocol`'s TCP queries on `listener` from `shared` until `shutdown`.
fn serve_stream(
    protocol: Protocol,
    listener: tokio::net::TcpListener,
    shared: &SharedState,
    shutdown: &CancellationToken,
) {
    use query_net::engines::{fivem, frostbite, minecraft, teamspeak3};
    use query_net::tcp::{serve_stream, ListenerLimits, ListenerStats};
    let state = shared.clone();
    let (limits, stats) = (
        ListenerLimits::default(),
        Arc::new(ListenerStats::default()),
    );
    let stop = shutdown.clone();
    match protocol {
        Protocol::Fivem => tokio::spawn(serve_stream(
            listener,
            move || fivem::FivemHttpResponder::new(state.clone()),
            limits,
            stats,
            stop,
        )),
        Protocol::Frostbite => tokio::spawn(serve_stream(
            listener,
            move || frostbite::FrostbiteResponder::new(state.clone()),
            limits,
            stats,
            stop,
        )),
        Protocol::TeamSpeak3 => {
            let password = std::env::var("GSQ_RCON_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty());
            tokio::spawn(serve_stream(
                listener,
                move || teamspeak3::Ts3Responder::new(state.clone(), password.clone()),
                limits,
                stats,
                stop,
            ))
        }
        _ => tokio::spawn(serve_stream(
            listener,
            move || minecraft::JavaResponder::new(state.clone()),
            limits,
            stats,
            stop,
        )),
    };
}

async fn bind_tcp(
    address: SocketAddr,
    what: &str,
) -> Outcome<(tokio::net::TcpListener, SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(address).await.map_err(|e| {
        Failure::new(
            Category::Network,
            format!("cannot listen on {address} for {what} (TCP): {e}"),
        )
        .hint("pick another address or port (port 0 picks a free one)")
    })?;
    let local = listener.local_addr().map_err(|e| {
        Failure::new(
            Category::Network,
            format!("cannot read the bound address: {e}"),
        )
    })?;
    Ok((listener, local))
}

fn announce_line(line: &str) -> Outcome {
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::internal(format!("cannot write to stdout: {e}")))
}

fn announce(bound: &[(Role, SocketAddr, UdpSocket, AnyResponder)]) -> Outcome {
    let mut out = std::io::stdout().lock();
    let mut lines = String::new();
    for (role, local, _, _) in bound {
        match role {
            Role::One(protocol) => lines.push_str(&format!("{protocol} {local}\n")),
            Role::All => {
                for protocol in query_net::engines::all::ROUTED {
                    lines.push_str(&format!("{protocol} {local}\n"));
                }
            }
        }
    }
    out.write_all(lines.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::internal(format!("cannot write to stdout: {e}")))
}

/// A future that resolves on Ctrl-C or, on Unix, SIGTERM. The handlers are installed here,
/// before the future is first polled, so a signal sent right after the startup lines is
/// caught rather than ending the process uncleanly.
fn stop_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            match (interrupt, terminate) {
                (Ok(mut interrupt), Ok(mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Logs a dropped request, at most once per interval for each source.
fn log_drop(source_log: &Mutex<SourceLog>, source: IpAddr, reason: DropReason) {
    // Declining is the protocol's normal answer (SA:MP `o` on a SA:MP server): counted only.
    if reason == DropReason::Declined {
        return;
    }
    let report = source_log
        .lock()
        .ok()
        .and_then(|mut log| log.record(source, Instant::now()));
    if let Some(suppressed) = report {
        let more = if suppressed > 0 {
            format!(" ({suppressed} more dropped since the last report)")
        } else {
            String::new()
        };
        tracing::warn!(
            "dropped a request from {source}: {}{more}",
            describe(reason)
        );
    }
}

fn describe(reason: DropReason) -> &'static str {
    match reason {
        DropReason::RateLimited => "rate-limited",
        DropReason::Malformed => "malformed request",
        DropReason::BadChallenge => "missing, wrong or expired challenge or token",
        DropReason::Unsupported => "request not answered by this responder",
        DropReason::OverByteBudget => "over the byte budget of its netblock or of the server",
        _ => "dropped",
    }
}

/// Decides which dropped requests get a log line: the first from a source, then at most one
/// per interval, counting the ones in between.
#[derive(Debug)]
struct SourceLog {
    interval: Duration,
    /// Per source: when it was last logged, and drops since.
    sources: HashMap<IpAddr, (Instant, u64)>,
}

impl SourceLog {
    fn new(interval: Duration) -> Self {
        SourceLog {
            interval,
            sources: HashMap::new(),
        }
    }

    /// A drop from `source`: `Some(drops suppressed since the last line)` if it should be
    /// logged now.
    fn record(&mut self, source: IpAddr, now: Instant) -> Option<u64> {
        let source = source.to_canonical();
        if let Some((logged, suppressed)) = self.sources.get_mut(&source) {
            if now.saturating_duration_since(*logged) < self.interval {
                *suppressed += 1;
                return None;
            }
            let count = *suppressed;
            *logged = now;
            *suppressed = 0;
            return Some(count);
        }
        if self.sources.len() >= MAX_LOGGED_SOURCES {
            let interval = self.interval;
            self.sources
                .retain(|_, (logged, _)| now.saturating_duration_since(*logged) < interval);
            if self.sources.len() >= MAX_LOGGED_SOURCES {
                return None;
            }
        }
        self.sources.insert(source, (now, 0));
        Some(0)
    }
}

/// Watches the state file and publishes each valid new content. The returned watcher must be
/// kept alive for events to flow.
fn spawn_reloader(
    path: &Path,
    shared: SharedState,
    shutdown: CancellationToken,
) -> Option<Box<dyn Watcher + Send>> {
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let watched = WatchedFile::new(path);
    // One read once the watch is in place catches a change made since the first load.
    let _ = tx.send(());
    let watcher = watched.watch(tx);
    if watcher.is_none() {
        tracing::warn!(
            "cannot watch {}: the state will not be reloaded",
            path.display()
        );
        return None;
    }
    let path = path.to_path_buf();
    tokio::spawn(async move {
        let mut last_error: Option<String> = None;
        // What the file held last: the state is replaced only when the file changes, so
        // edits made through RCON stay until it does.
        let mut from_file = shared.snapshot();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                event = rx.recv() => if event.is_none() { return },
            }
            // Wait until the writes settle.
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    event = rx.recv() => if event.is_none() { return },
                    () = tokio::time::sleep(SETTLE) => break,
                }
            }
            reload(&path, &shared, &mut from_file, &mut last_error).await;
        }
    });
    watcher
}

/// Reads the file again; publishes it if valid and different from what the file held last
/// (`from_file`), else logs once why not.
async fn reload(
    path: &Path,
    shared: &SharedState,
    from_file: &mut Arc<ServerState>,
    last_error: &mut Option<String>,
) {
    let path_buf = path.to_path_buf();
    let loaded = tokio::task::spawn_blocking(move || state_file::load(&path_buf))
        .await
        .unwrap_or_else(|e| Err(Failure::internal(format!("the reload task failed: {e}"))));
    match loaded {
        Ok(state) => {
            *last_error = None;
            if **from_file != state {
                log_reload(path, &state);
                *from_file = Arc::new(state.clone());
                shared.store(state);
            }
        }
        Err(failure) => {
            let message = failure.message().to_owned();
            if last_error.as_deref() != Some(message.as_str()) {
                tracing::warn!("keeping the previous state: {message}");
                *last_error = Some(message);
            }
        }
    }
}

fn log_reload(path: &Path, state: &ServerState) {
    tracing::info!(
        "reloaded {}: {:?}, {} players, {} rules",
        path.display(),
        crate::logging::cut(&state.name),
        state.num_players(),
        state.rules.len()
    );
}

/// The state file and the directory it is in. Editors often save by writing a new file and
/// renaming it over the old one, which a watch on the file itself would lose; so the
/// directory is watched and events are filtered by file name.
struct WatchedFile {
    directory: PathBuf,
    name: Option<std::ffi::OsString>,
}

impl WatchedFile {
    fn new(path: &Path) -> Self {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let directory = absolute
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        WatchedFile {
            directory,
            name: absolute.file_name().map(ToOwned::to_owned),
        }
    }

    fn concerns(&self, event: &notify::Event) -> bool {
        event
            .paths
            .iter()
            .any(|p| p.file_name() == self.name.as_deref())
    }

    /// Starts the system's file-event watcher, or a polling one where that is unavailable.
    fn watch(self, tx: mpsc::UnboundedSender<()>) -> Option<Box<dyn Watcher + Send>> {
        let directory = self.directory.clone();
        let filter = Arc::new(self);
        let handler = {
            let filter = Arc::clone(&filter);
            let tx = tx.clone();
            move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event {
                    if filter.concerns(&event) {
                        let _ = tx.send(());
                    }
                }
            }
        };
        let native = notify::recommended_watcher(handler).and_then(|mut w| {
            w.watch(&directory, RecursiveMode::NonRecursive)?;
            Ok(w)
        });
        match native {
            Ok(w) => Some(Box::new(w)),
            Err(e) => {
                tracing::debug!("file events unavailable ({e}); polling the state file");
                let handler = move |event: notify::Result<notify::Event>| {
                    if let Ok(event) = event {
                        if filter.concerns(&event) {
                            let _ = tx.send(());
                        }
                    }
                };
                let config = notify::Config::default().with_poll_interval(POLL_INTERVAL);
                let mut poller = notify::PollWatcher::new(handler, config).ok()?;
                poller.watch(&directory, RecursiveMode::NonRecursive).ok()?;
                Some(Box::new(poller))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_logged_once_per_interval_with_the_count_in_between() {
        let t0 = Instant::now();
        let mut log = SourceLog::new(Duration::from_secs(10));
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(log.record(a, t0), Some(0));
        assert_eq!(log.record(a, t0 + Duration::from_secs(1)), None);
        assert_eq!(log.record(a, t0 + Duration::from_secs(2)), None);
        assert_eq!(log.record(b, t0 + Duration::from_secs(2)), Some(0));
        assert_eq!(log.record(a, t0 + Duration::from_secs(10)), Some(2));
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(log.record(mapped, t0 + Duration::from_secs(11)), None);
    }

    #[test]
    fn the_source_table_stays_bounded() {
        let t0 = Instant::now();
        let mut log = SourceLog::new(Duration::from_secs(10));
        for i in 0..(MAX_LOGGED_SOURCES as u32 + 100) {
            log.record(IpAddr::from(i.to_be_bytes()), t0);
        }
        assert_eq!(log.sources.len(), MAX_LOGGED_SOURCES);
        // Once the old entries have aged out, new sources are logged again.
        let later = t0 + Duration::from_secs(11);
        assert_eq!(log.record("198.51.100.1".parse().unwrap(), later), Some(0));
        assert_eq!(log.sources.len(), 1);
    }

    #[test]
    fn clashing_fixed_addresses_are_a_usage_error() {
        use clap::Parser;
        let cli = crate::cli::Cli::parse_from([
            "gsq",
            "serve",
            "s.toml",
            "--sqp",
            "127.0.0.1:7000",
            "--samp",
            "127.0.0.1:7000",
        ]);
        let crate::cli::Command::Serve(args) = cli.command else {
            panic!("not serve")
        };
        let err = roles(&args, None).unwrap_err();
        assert_eq!(err.category(), Category::Usage);
        assert!(err.message().contains("127.0.0.1:7000"), "{err}");

        let cli = crate::cli::Cli::parse_from([
            "gsq",
            "serve",
            "s.toml",
            "--sqp",
            "127.0.0.1:0",
            "--samp",
            "127.0.0.1:0",
        ]);
        let crate::cli::Command::Serve(args) = cli.command else {
            panic!("not serve")
        };
        assert_eq!(roles(&args, None).unwrap().len(), 2);
    }
}
