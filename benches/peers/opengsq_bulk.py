"""Queries every target of a list with opengsq, `concurrency` at a time, and prints one JSON
line per target: {"target": "host:port"} when opengsq answered, with "error" when it failed.

    python opengsq_bulk.py <list> <concurrency> <timeout ms> <retries>

The list has one `<protocol> <host:port>` per line; protocols samp and gamespy1. Every target
is a task on one asyncio loop, and a semaphore lets `concurrency` of them query at once.
opengsq has no retries of its own, so each request is sent again after a timeout, `retries`
times at most, each attempt waiting `timeout` for the reply. A SA:MP query is what gsq and
gamedig fetch too: status (`i`), rules (`r`) and players (`d`); a GameSpy v1 query is
`\\status\\xserverquery`.
"""

import asyncio
import json
import sys

from opengsq.protocols import GameSpy1, Samp


async def with_retries(request, attempts: int):
    for attempt in range(attempts):
        try:
            return await request()
        except TimeoutError:
            if attempt + 1 == attempts:
                raise


async def query(protocol: str, host: str, port: int, timeout: float, attempts: int) -> None:
    if protocol == "samp":
        samp = Samp(host=host, port=port, timeout=timeout)
        await with_retries(samp.get_status, attempts)
        await with_retries(samp.get_rules, attempts)
        await with_retries(samp.get_players, attempts)
    elif protocol == "gamespy1":
        gamespy = GameSpy1(host=host, port=port, timeout=timeout)
        await with_retries(gamespy.get_status, attempts)
    else:
        raise ValueError(f"no opengsq query for {protocol}")


async def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__.splitlines()[3].strip(), file=sys.stderr)
        return 2
    path, concurrency, timeout_ms, retries = sys.argv[1:]
    timeout = int(timeout_ms) / 1000
    attempts = int(retries) + 1
    with open(path, encoding="utf-8") as listing:
        targets = [line.split() for line in listing if line.strip() and not line.startswith("#")]
    gate = asyncio.Semaphore(max(1, int(concurrency)))
    out = sys.stdout

    async def one(protocol: str, address: str) -> None:
        host, _, port = address.rpartition(":")
        async with gate:
            try:
                await query(protocol, host, int(port), timeout, attempts)
                record = {"target": address}
            except Exception as error:  # noqa: BLE001 - every failure is reported per target
                record = {"target": address, "error": f"{type(error).__name__}: {error}"}
        out.write(json.dumps(record) + "\n")

    await asyncio.gather(*(one(protocol, address) for protocol, address in targets))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
