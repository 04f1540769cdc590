// Queries one server with gamedig and prints what gamedig reports, as JSON, on stdout.
//
//   node gamedig_query.mjs <gamedig game id> <host> <port>
//
// The output is gamedig's own result object, untouched, plus `protocol`: the protocol gamedig
// resolved the game id to, so the caller can check it queried the protocol it meant to. Any
// failure (unknown game id, timeout, decode error) exits non-zero with gamedig's message.
import { GameDig, games } from 'gamedig'

const [type, host, port] = process.argv.slice(2)
if (!type || !host || !port) {
  console.error('usage: node gamedig_query.mjs <game id> <host> <port>')
  process.exit(2)
}

const game = games[type]
if (!game) {
  console.error(`gamedig does not know the game id ${JSON.stringify(type)}`)
  process.exit(2)
}

try {
  const state = await GameDig.query({
    type,
    host,
    port: Number(port),
    // Query exactly this port: no game-specific query port offset, no port guessing.
    givenPortOnly: true,
    maxRetries: 2,
    socketTimeout: 2000,
    attemptTimeout: 8000
  })
  process.stdout.write(JSON.stringify({ protocol: game.options.protocol, ...state }))
} catch (error) {
  console.error(`gamedig ${type} ${host}:${port} failed: ${error.stack || error}`)
  process.exit(1)
}
