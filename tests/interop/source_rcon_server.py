"""A Source RCON server built on the `rcon_server` package (PyPI), for `gsq rcon` to talk to.

    GSQ_RCON_PASSWORD=... python source_rcon_server.py

Listens on 127.0.0.1 at a port the system picks and prints `port N` once it listens. The
package handles the framing, the password (srcds's empty value before the auth response,
id -1 when refused) and the end marker (its echo, then srcds's `00 01 00 00` packet); this
script supplies the commands:

- `echo TEXT` answers TEXT;
- `lines N` answers N numbered lines, split into packets of at most 4,086 body bytes as
  srcds splits a long answer;
- anything else answers `Unknown command "..."`.

The package reads one packet per chunk of bytes the socket delivers and leaves the rest of
that chunk until more bytes come, so a client that writes two packets at once waits for
the second's answer.
"""

import asyncio
import os

from rcon_server.rcon_packet import RCONPacket
from rcon_server.rcon_server import RCONServer

SRCDS_MAX_BODY = 4096 - 10


class Commands(RCONServer):
    def handle_execcommand(self, packet, connection):
        name, _, argument = packet.body.partition(" ")
        if name == "echo":
            answer = argument
        elif name == "lines":
            answer = "".join(f"line {i:05}\n" for i in range(int(argument)))
        else:
            answer = f'Unknown command "{name}"'
        parts = [answer[i : i + SRCDS_MAX_BODY] for i in range(0, len(answer), SRCDS_MAX_BODY)]
        for part in parts or [""]:
            connection.send_packet(
                RCONPacket(packet.id, RCONPacket.SERVERDATA_RESPONSE_VALUE, part)
            )


async def main() -> None:
    server = Commands(password=os.environ["GSQ_RCON_PASSWORD"])
    loop = asyncio.get_running_loop()
    listener = await loop.create_server(server.connection_factory, "127.0.0.1", 0)
    print("port", listener.sockets[0].getsockname()[1], flush=True)
    async with listener:
        await listener.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
