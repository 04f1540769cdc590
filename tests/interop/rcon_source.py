"""Runs RCON commands with the `rcon` package (PyPI) and prints what it returns, as JSON.

    GSQ_RCON_PASSWORD=... python rcon_source.py <host> <port> <command>...

The commands run in order on one connection (rcon.source.Client, logged in by its context
manager, which reads each packet through a buffered file it then throws away: gsq sends the
auth response alone, as Minecraft does, not after srcds's empty value, which that buffer
would swallow with it); the output is {"outputs": [str, ...]}, one per command. A refused password prints
{"error": "WrongPassword"} and exits 3.

`rcon` joins a split answer only when its first packet is at least `frag_threshold` bytes
long (Minecraft's fragments are 4,096 bytes; srcds's packets at most 4,096 bytes with the id,
type and NULs, so 4,086 of body): the threshold is set to srcds's, as a user of `rcon`
against a Source server must. It then sends an empty response value and reads parts until
the id changes, which leaves the packet srcds sends after the end marker's echo unread: a
long answer is therefore last on its connection.
"""

import json
import os
import sys

from rcon.exceptions import WrongPassword
from rcon.source import Client

SRCDS_MAX_BODY = 4096 - 10


def main() -> int:
    host, port, *commands = sys.argv[1:]
    password = os.environ["GSQ_RCON_PASSWORD"]
    try:
        with Client(
            host, int(port), passwd=password, timeout=30, frag_threshold=SRCDS_MAX_BODY
        ) as client:
            outputs = [client.run(command) for command in commands]
    except WrongPassword:
        print(json.dumps({"error": "WrongPassword"}))
        return 3
    print(json.dumps({"outputs": outputs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
