// Queries one Minecraft server with minecraft-server-util and prints its result as JSON.
//
//   node mcutil_query.mjs java|legacy|bedrock <host> <port>
//
// java: status() (the 1.7+ status ping); legacy: statusLegacy() (the 1.6 legacy ping);
// bedrock: statusBedrock() (RakNet unconnected ping). SRV lookups are off: the port given is
// the port queried. Any failure exits non-zero with the library's message.
import util from 'minecraft-server-util'

const [kind, host, port] = process.argv.slice(2)
const CALLS = {
  java: (h, p, o) => util.status(h, p, o),
  legacy: (h, p, o) => util.statusLegacy(h, p, o),
  bedrock: (h, p, o) => util.statusBedrock(h, p, o)
}
if (!CALLS[kind] || !host || !port) {
  console.error('usage: node mcutil_query.mjs java|legacy|bedrock <host> <port>')
  process.exit(2)
}
try {
  const result = await CALLS[kind](host, Number(port), { timeout: 5000, enableSRV: false })
  // The server GUID is a 64-bit BigInt, which JSON has no number for: written as text.
  process.stdout.write(JSON.stringify(result, (_, v) => (typeof v === 'bigint' ? v.toString() : v)))
} catch (error) {
  console.error(`minecraft-server-util ${kind} ${host}:${port} failed: ${error.stack || error}`)
  process.exit(1)
}
