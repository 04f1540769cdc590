"""Runs RCON commands with the `mcrcon` package (PyPI) and prints what it returns, as JSON.

    GSQ_RCON_PASSWORD=... python mcrcon_client.py <host> <port> <command>...

The commands run in order on one connection (`MCRcon` as a context manager logs in); the
output is {"outputs": [str, ...]}, one per command. A refused password prints
{"error": "Login failed"} and exits 3.

mcrcon takes an answer as complete once no more bytes are waiting on the socket, so a split
answer is joined only if all its packets arrived before it looks: it is given short answers.
"""

import json
import os
import sys

from mcrcon import MCRcon, MCRconException


def main() -> int:
    host, port, *commands = sys.argv[1:]
    password = os.environ["GSQ_RCON_PASSWORD"]
    try:
        with MCRcon(host, password, port=int(port), timeout=30) as client:
            outputs = [client.command(command) for command in commands]
    except MCRconException as error:
        print(json.dumps({"error": str(error)}))
        return 3
    print(json.dumps({"outputs": outputs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
