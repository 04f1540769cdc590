//! `gsq rcon`: remote console commands, one and exit, or a shell.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::Path;

use query_net::rcon::{Client, Flavour};
use query_net::{Options, QueryError, RconCommand};
use serde_json::json;

use crate::cli::{RconArgs, RconProtocol};
use crate::commands::query::{resolve, samp_rcon_lines};
use crate::exit::{Failure, Outcome};
use crate::output::{print_line, sanitize, to_json};

/// The environment variable `gsq rcon` and `gsq serve --rcon` take the password from.
pub const PASSWORD_VARIABLE: &str = "GSQ_RCON_PASSWORD";

/// What `gsq rcon` tells a user who put the password on the command line.
const PASSWORD_ON_COMMAND_LINE: &str = "gsq: warning: other users can read a password given \
     on the command line; prefer --password-file or GSQ_RCON_PASSWORD";

/// Runs `gsq rcon`.
pub async fn run(args: RconArgs) -> Outcome {
    let password = password(&args)?;
    let default_port = match args.console {
        RconProtocol::Source => Flavour::Source.default_port(),
        RconProtocol::Minecraft => Flavour::Minecraft.default_port(),
        RconProtocol::Samp => query_net::Protocol::Samp.default_port(),
    };
    let target = resolve(&args.address, default_port).await?;
    let options = Options {
        timeout: args.timeout,
        deadline: args.deadline,
        max_reply_bytes: args.max_reply_bytes,
        ..Options::default()
    };
    let mut console = Console::open(args.console, target, password, options).await?;
    if args.command.is_empty() {
        return shell(&mut console, args.json).await;
    }
    let command = args.command.join(" ");
    let output = console.run(&command).await?;
    print_line(&render(&console, &command, &output, args.json)?)
}

/// The password: from the file, the command line (with a warning), the environment, or a
/// prompt without echo; never shown.
fn password(args: &RconArgs) -> Outcome<String> {
    if let Some(path) = &args.password_file {
        return password_from_file(path);
    }
    if let Some(password) = &args.password {
        eprintln!("{PASSWORD_ON_COMMAND_LINE}");
        return Ok(password.clone());
    }
    if let Ok(password) = std::env::var(PASSWORD_VARIABLE) {
        return Ok(password);
    }
    if !std::io::stdin().is_terminal() {
        return Err(Failure::usage("no RCON password").hint(
            "give --password-file FILE or set GSQ_RCON_PASSWORD (no terminal to prompt on)",
        ));
    }
    rpassword::prompt_password("RCON password: ")
        .map_err(|e| Failure::usage(format!("cannot read the password: {e}")))
}

/// The first line of `path`, without its line ending.
pub fn password_from_file(path: &Path) -> Outcome<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::usage(format!(
            "cannot read the password file {}: {e}",
            path.display()
        ))
    })?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(Failure::usage(format!(
            "the password file {} has an empty first line",
            path.display()
        )));
    }
    Ok(line.to_owned())
}

/// An open remote console.
enum Console {
    /// A TCP connection, authenticated.
    Stream(Box<Client>, Flavour),
    /// SA:MP: each command is a datagram exchange of its own, the password in each.
    Samp {
        target: SocketAddr,
        password: String,
        options: Box<Options>,
    },
}

impl Console {
    async fn open(
        protocol: RconProtocol,
        target: SocketAddr,
        password: String,
        options: Options,
    ) -> Outcome<Self> {
        let flavour = match protocol {
            RconProtocol::Source => Flavour::Source,
            RconProtocol::Minecraft => Flavour::Minecraft,
            RconProtocol::Samp => {
                return Ok(Console::Samp {
                    target,
                    password,
                    options: Box::new(options),
                })
            }
        };
        let client = Client::connect(target, flavour, &password, &options)
            .await
            .map_err(|e| failure(flavour.name(), target, &e))?;
        Ok(Console::Stream(Box::new(client), flavour))
    }

    fn protocol(&self) -> &'static str {
        match self {
            Console::Stream(_, flavour) => flavour.name(),
            Console::Samp { .. } => "samp",
        }
    }

    fn target(&self) -> SocketAddr {
        match self {
            Console::Stream(client, _) => client.target(),
            Console::Samp { target, .. } => *target,
        }
    }

    async fn run(&mut self, command: &str) -> Outcome<String> {
        match self {
            Console::Stream(client, flavour) => client
                .command(command)
                .await
                .map_err(|e| failure(flavour.name(), client.target(), &e)),
            Console::Samp {
                target,
                password,
                options,
            } => {
                let rcon = RconCommand {
                    password: password.clone(),
                    command: command.to_owned(),
                };
                Ok(samp_rcon_lines(*target, &rcon, options).await?.join("\n"))
            }
        }
    }

    /// Whether a failed command left the connection closed (it was lost, or broken).
    fn lost(&self) -> bool {
        match self {
            Console::Stream(client, _) => !client.is_connected(),
            Console::Samp { .. } => false,
        }
    }

    async fn reconnect(&mut self) -> Outcome {
        match self {
            Console::Stream(client, flavour) => client
                .reconnect()
                .await
                .map_err(|e| failure(flavour.name(), client.target(), &e)),
            Console::Samp { .. } => Ok(()),
        }
    }
}

/// A failed RCON exchange, with the advice that fits RCON.
fn failure(protocol: &str, target: SocketAddr, error: &QueryError) -> Failure {
    let failure = Failure::from_query(&format!("{protocol} rcon {target}"), error);
    match error {
        QueryError::AuthRequired(_) => failure.hint(
            "check the password (--password-file, GSQ_RCON_PASSWORD); after repeated failures \
             servers lock the address out for a while",
        ),
        QueryError::Io(_) => failure.hint("the connection was lost; run the command again"),
        QueryError::ConnectionRefused { .. } => {
            failure.hint("nothing listens there: check the RCON port and that RCON is enabled")
        }
        _ => failure,
    }
}

/// The output as printed: the console's text with control characters escaped (a server
/// cannot drive the terminal), or one JSON object.
fn render(console: &Console, command: &str, output: &str, json: bool) -> Outcome<String> {
    if json {
        return to_json(
            &json!({
                "protocol": console.protocol(),
                "address": console.target(),
                "command": command,
                "output": output,
            }),
            false,
        );
    }
    Ok(console_text(output))
}

/// `output` line by line, each line's control characters escaped, without the final newline
/// most consoles end with.
fn console_text(output: &str) -> String {
    let output = output.strip_suffix('\n').unwrap_or(output);
    output
        .split('\n')
        .map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            sanitize(&line.replace('\t', "    "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The interactive shell: a line, its output, until Ctrl-D or `exit`.
async fn shell(console: &mut Console, json: bool) -> Outcome {
    let mut editor = rustyline::DefaultEditor::new()
        .map_err(|e| Failure::internal(format!("cannot open the line editor: {e}")))?;
    let prompt = format!("{} {}> ", console.protocol(), console.target());
    loop {
        let prompt_now = prompt.clone();
        let (back, line) = tokio::task::spawn_blocking(move || {
            let line = editor.readline(&prompt_now);
            (editor, line)
        })
        .await
        .map_err(|e| Failure::internal(format!("the line editor stopped: {e}")))?;
        editor = back;
        let line = match line {
            Ok(line) => line,
            // Ctrl-C drops the line, as shells do.
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => return Ok(()),
            Err(e) => return Err(Failure::internal(format!("cannot read a line: {e}"))),
        };
        let command = line.trim();
        if command.is_empty() {
            continue;
        }
        if matches!(command, "exit" | "quit") {
            return Ok(());
        }
        let _ = editor.add_history_entry(command);
        match console.run(command).await {
            Ok(output) => print_line(&render(console, command, &output, json)?)?,
            Err(failure) if console.lost() => {
                eprintln!(
                    "gsq: connection lost ({}); connecting again",
                    failure.message()
                );
                console.reconnect().await?;
            }
            Err(failure) => eprintln!("gsq: error: {failure}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Category;

    #[test]
    fn console_text_escapes_control_characters_and_keeps_lines() {
        assert_eq!(console_text("a\tb\r\nc\x1b[31m\n"), "a    b\nc\\u{1b}[31m");
        assert_eq!(console_text(""), "");
    }

    #[test]
    fn the_password_file_gives_its_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pw");
        std::fs::write(&path, "s3cret\nignored\n").unwrap();
        assert_eq!(password_from_file(&path).unwrap(), "s3cret");
        std::fs::write(&path, "\n").unwrap();
        assert_eq!(
            password_from_file(&path).unwrap_err().category(),
            Category::Usage
        );
    }
}
