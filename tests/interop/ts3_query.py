"""Queries a TeamSpeak 3 ServerQuery server with the `ts3` package (PyPI) and prints what it
reports, as JSON, on stdout.

    python ts3_query.py <host> <port> <voice port> [login name]

With a login name, the client logs in first, with the password in GSQ_RCON_PASSWORD. The
output holds ts3's parsed responses (its own unescaping), untouched: {"serverinfo": {...},
"clientlist": [...], "channellist": [...]}. A refused command exits 3 with the server's error
id and message on stderr; any other failure exits non-zero with ts3's message.
"""

import json
import os
import sys
import traceback

import ts3


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(f"usage: {sys.argv[0]} <host> <port> <voice port> [login name]", file=sys.stderr)
        return 2
    host, port, voice_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    try:
        with ts3.query.TS3Connection(host, port) as connection:
            if len(sys.argv) == 5:
                connection.login(
                    client_login_name=sys.argv[4],
                    client_login_password=os.environ.get("GSQ_RCON_PASSWORD", ""),
                )
            connection.use(port=voice_port)
            result = {
                "serverinfo": connection.serverinfo().parsed[0],
                "clientlist": connection.clientlist().parsed,
                "channellist": connection.channellist().parsed,
            }
            connection.quit()
    except ts3.query.TS3QueryError as error:
        print(f"ts3 refused: {error.resp.error['id']} {error.resp.error['msg']}", file=sys.stderr)
        return 3
    except Exception:  # noqa: BLE001 - report whatever ts3 raised, then fail
        print(f"ts3 {host}:{port} failed:", file=sys.stderr)
        traceback.print_exc()
        return 1
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
