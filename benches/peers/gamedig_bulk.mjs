// Queries every target of a list with gamedig, `concurrency` at a time, and prints one JSON
// line per target: {"target": "host:port"} when gamedig answered, with "error" when it failed.
//
//   node gamedig_bulk.mjs <list> <concurrency> <timeout ms> <retries>
//
// The list has one `<protocol> <host:port>` per line; protocols samp, gamespy1 and minecraft. gamedig is
// used through its library, as a server-list backend would: a fixed pool of `concurrency`
// workers takes targets from the list in order. gamedig sends all queries from one shared
// socket. `retries` is turned into gamedig's `maxRetries`, which counts attempts (1 + retries);
// each attempt waits at most `timeout` for each reply (`socketTimeout`).
import { readFileSync } from 'node:fs'
import { GameDig } from 'gamedig'

const [list, concurrencyArg, timeoutArg, retriesArg] = process.argv.slice(2)
if (!list || !concurrencyArg || !timeoutArg || !retriesArg) {
  console.error('usage: node gamedig_bulk.mjs <list> <concurrency> <timeout ms> <retries>')
  process.exit(2)
}
const concurrency = Number(concurrencyArg)
const socketTimeout = Number(timeoutArg)
const attempts = Number(retriesArg) + 1

// gamedig knows games, not protocols: these game ids speak exactly the protocol named
// (Minecraft's Java status ping alone is gamedig's `minecraftvanilla` protocol; its game
// `minecraft` would also send a GameSpy 4 query and a Bedrock ping and wait for them).
const GAME_OF = { samp: 'gtasam', gamespy1: 'unrealtournament', minecraft: 'protocol-minecraftvanilla' }

const targets = readFileSync(list, 'utf8')
  .split('\n')
  .filter((line) => line.trim() && !line.startsWith('#'))
  .map((line) => {
    const [protocol, address] = line.trim().split(/\s+/)
    const colon = address.lastIndexOf(':')
    return { protocol, address, host: address.slice(0, colon), port: Number(address.slice(colon + 1)) }
  })

const out = []
function emit (record) {
  out.push(JSON.stringify(record))
  if (out.length >= 256) flush()
}
function flush () {
  if (out.length) process.stdout.write(out.join('\n') + '\n')
  out.length = 0
}

let next = 0
async function worker () {
  while (next < targets.length) {
    const target = targets[next++]
    const type = GAME_OF[target.protocol]
    if (!type) {
      emit({ target: target.address, error: `no gamedig game for ${target.protocol}` })
      continue
    }
    try {
      await GameDig.query({
        type,
        host: target.host,
        port: target.port,
        givenPortOnly: true,
        maxRetries: attempts,
        socketTimeout,
        // Each attempt may take several requests; only the per-request timeout should bind.
        attemptTimeout: socketTimeout * 10
      })
      emit({ target: target.address })
    } catch (error) {
      emit({ target: target.address, error: String(error.message || error).split('\n')[0] })
    }
  }
}

await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker))
flush()
