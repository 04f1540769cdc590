"""Runs BattlEye RCon commands with the `rcon` package (PyPI) and prints what it returns, as JSON.

    GSQ_RCON_PASSWORD=... python rcon_battleye.py <host> <port> <command>...

The commands run in order in one session (rcon.battleye.Client, logged in by its context
manager); the output is {"outputs": [str, ...], "messages": [str, ...]}, one output per
command and the server messages received. A refused password would print
{"error": "WrongPassword"} and exit 3, but rcon 2.4.9 waits for a server message after the
login answer, which a server sends only to admins: it times out instead.

Two habits of rcon 2.4.9's BattlEye client shape what the server must do and what this
script prints: it returns from the login, and from each command, only once a server message
follows the answer (a real server announces each login to the admins; the test's server
sends a message after each command); and it joins a split answer's parts with their
headers (0x00, the count, the index) in arrival order, so the output is printed as
received and the test takes the headers apart.
"""

import json
import os
import sys

from rcon.battleye import Client
from rcon.exceptions import WrongPassword


def main() -> int:
    host, port, *commands = sys.argv[1:]
    password = os.environ["GSQ_RCON_PASSWORD"]
    messages = []
    try:
        with Client(
            host,
            int(port),
            passwd=password,
            timeout=30,
            max_length=65507,
            message_handler=lambda message: messages.append(message.message),
        ) as client:
            outputs = [client.run(command) for command in commands]
    except WrongPassword:
        print(json.dumps({"error": "WrongPassword"}))
        return 3
    print(json.dumps({"outputs": outputs, "messages": messages}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
