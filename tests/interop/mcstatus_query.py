"""Queries one Minecraft server with mcstatus and prints what mcstatus reports, as JSON.

    python mcstatus_query.py java|legacy|bedrock <host> <port>

- java: JavaServer.async_status (the 1.7+ status ping, with its ping round trip);
- legacy: LegacyServer.async_status (the 1.6 legacy ping, `FE 01 FA`);
- bedrock: BedrockServer.async_status (RakNet unconnected ping).

The output is mcstatus's own response as its `as_dict()` gives it, plus `motd_plain`: the
MOTD as mcstatus flattens it to plain text (`Motd.to_plain()`). Any failure exits non-zero
with mcstatus's message.
"""

import asyncio
import json
import sys
import traceback

from mcstatus import BedrockServer, JavaServer, LegacyServer

SERVERS = {"java": JavaServer, "legacy": LegacyServer, "bedrock": BedrockServer}


async def main(kind: str, host: str, port: int) -> dict:
    server = SERVERS[kind](host, port, timeout=5)
    response = await server.async_status(tries=1)
    out = response.as_dict()
    out["motd_plain"] = response.motd.to_plain()
    return out


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in SERVERS:
        print("usage: python mcstatus_query.py java|legacy|bedrock <host> <port>", file=sys.stderr)
        sys.exit(2)
    try:
        result = asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    except Exception:  # noqa: BLE001 - any failure is the test's to report
        print(f"mcstatus {sys.argv[1]} failed:\n{traceback.format_exc()}", file=sys.stderr)
        sys.exit(1)
    sys.stdout.write(json.dumps(result, default=str))
