// Queries one server with gamedig and prints what gamedig reports, as JSON, on stdout.
//
//   node gamedig_query.mjs <gamedig game id> <host> <port>
//   node gamedig_query.mjs a2s <host> <port>
//   node gamedig_query.mjs teamspeak3 <host> <ServerQuery port> <voice port>
//
// The output is gamedig's own result object, untouched, plus `protocol`: the protocol gamedig
// resolved the game id to, so the caller can check it queried the protocol it meant to. Any
// failure (unknown game id, timeout, decode error) exits non-zero with gamedig's message.
//
// `a2s` queries with gamedig's generic Valve protocol (`protocol-valve`: no game's settings)
// and asks for everything A2S has: gamedig sends RULES only when `requestRules` is set, and
// skips a PLAYER or RULES reply that times out unless `requestPlayersRequired` and
// `requestRulesRequired` are set, so with them a missing reply fails instead of leaving a list
// out. `raw.rulesBytes`, the RULES reply after its kind byte as gamedig keeps it (a Buffer),
// comes out as JSON.stringify writes a Buffer: {"type": "Buffer", "data": [bytes]}.
import { GameDig, games } from 'gamedig'

const [type, host, port, voicePort] = process.argv.slice(2)
if (!type || !host || !port) {
  console.error('usage: node gamedig_query.mjs <game id>|a2s <host> <port>')
  process.exit(2)
}

// Each mode: the gamedig type it queries and the options it adds to the common ones.
const MODES = {
  a2s: {
    type: 'protocol-valve',
    options: { requestRules: true, requestPlayersRequired: true, requestRulesRequired: true }
  }
}
// gamedig's teamspeak3 takes the voice port as its port (it selects the virtual server with
// `use port=`) and the ServerQuery port as an option.
if (type === 'teamspeak3' && voicePort) {
  MODES.teamspeak3 = {
    type,
    port: Number(voicePort),
    options: { teamspeakQueryPort: Number(port) }
  }
}
const mode = MODES[type] ?? { type, options: {} }

// The protocol gamedig resolves a type to, as its lookup does: `protocol-<name>` is <name>.
const protocol = mode.type.startsWith('protocol-')
  ? mode.type.substring('protocol-'.length)
  : games[mode.type]?.options.protocol
if (!protocol) {
  console.error(`gamedig does not know the game id ${JSON.stringify(type)}`)
  process.exit(2)
}

try {
  const state = await GameDig.query({
    type: mode.type,
    host,
    port: mode.port ?? Number(port),
    // Query exactly this port: no game-specific query port offset, no port guessing.
    givenPortOnly: true,
    maxRetries: 2,
    socketTimeout: 2000,
    attemptTimeout: 8000,
    ...mode.options
  })
  process.stdout.write(JSON.stringify({ protocol, ...state }))
} catch (error) {
  console.error(`gamedig ${type} ${host}:${port} failed: ${error.stack || error}`)
  process.exit(1)
}
