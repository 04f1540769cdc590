// A Minecraft Java server from minecraft-protocol's createServer, on loopback, for gsq to
// query: it answers the status ping (and the legacy ping) from the library's own code.
//
//   node mc_server.mjs <motd> <max players>
//
// Listens on 127.0.0.1, a free port, prints `minecraft 127.0.0.1:<port>` once listening,
// and runs until stdin closes.
import mc from 'minecraft-protocol'

const [motd, maxPlayers] = process.argv.slice(2)
const server = mc.createServer({
  host: '127.0.0.1',
  port: 0,
  'online-mode': false,
  motd,
  maxPlayers: Number(maxPlayers),
  version: '1.20.1'
})
server.on('listening', () => {
  process.stdout.write(`minecraft 127.0.0.1:${server.socketServer.address().port}\n`)
})
server.on('error', (error) => {
  console.error(`minecraft-protocol server failed: ${error.stack || error}`)
  process.exit(1)
})
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
