"""Queries every Minecraft Java target of a list with mcstatus (async), `concurrency` at a
time, and prints one JSON line per target: {"target": "host:port"} when mcstatus answered,
with "error" when it failed.

    python mcstatus_bulk.py <list> <concurrency> <timeout ms> <retries>

The list has one `minecraft <host:port>` per line. mcstatus is used through its asyncio API,
as a server-list backend would: a fixed pool of `concurrency` tasks takes targets in order;
each runs `JavaServer(host, port, timeout).async_status(tries=1 + retries)` (the status
request and its ping round trip, over a connection of its own).
"""

import asyncio
import json
import sys

from mcstatus import JavaServer


async def main(path: str, concurrency: int, timeout: float, tries: int) -> None:
    with open(path, encoding="utf-8") as listing:
        targets = [
            line.split()[1]
            for line in listing
            if line.strip() and not line.startswith("#")
        ]
    out: list[str] = []
    queue = iter(targets)

    async def worker() -> None:
        for address in queue:
            host, _, port = address.rpartition(":")
            try:
                await JavaServer(host, int(port), timeout=timeout).async_status(tries=tries)
                out.append(json.dumps({"target": address}))
            except Exception as error:  # noqa: BLE001 - every failure is a result
                first = str(error).split("\n")[0] or type(error).__name__
                out.append(json.dumps({"target": address, "error": first}))
            if len(out) >= 256:
                sys.stdout.write("\n".join(out) + "\n")
                out.clear()

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    if out:
        sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print("usage: python mcstatus_bulk.py <list> <concurrency> <timeout ms> <retries>", file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1000, int(sys.argv[4]) + 1))
