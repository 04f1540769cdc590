// Runs RCON commands with rcon-client (npm) and prints what it returns, as JSON.
//
//     GSQ_RCON_PASSWORD=... node rcon_client.mjs <host> <port> <command>...
//
// The commands run in order on one connection; the output is {"outputs": [string, ...]}, or
// {"error": message} (exit 3) when connecting, authenticating or a command fails.
//
// rcon-client is written for Minecraft: it takes the first packet answering a request as the
// whole answer. For authentication, gsq sends the auth response alone (srcds's empty value
// before it, which would read as success, is off by default). For a command it is the first
// part of a split answer, so only short answers come through whole.
import { Rcon } from "rcon-client";

const [host, port, ...commands] = process.argv.slice(2);
try {
  const rcon = await Rcon.connect({
    host,
    port: Number(port),
    password: process.env.GSQ_RCON_PASSWORD,
    timeout: 30000,
  });
  const outputs = [];
  for (const command of commands) {
    outputs.push(await rcon.send(command));
  }
  await rcon.end();
  console.log(JSON.stringify({ outputs }));
} catch (error) {
  console.log(JSON.stringify({ error: String(error && error.message ? error.message : error) }));
  process.exit(3);
}
