"""Queries one server with opengsq and prints what opengsq reports, as JSON, on stdout.

    python opengsq_query.py samp|gamespy1 <host> <port>

The output holds opengsq's own results, converted to JSON without interpretation:
- samp: {"status": Status, "rules": ..., "players": [Player]} from get_status, get_rules and
  get_players. opengsq's get_rules returns a set of (key, value) pairs (a set comprehension
  where a dict was meant), so its pairs are printed as a list, sorted, as opengsq gives no order.
- gamespy1: {"info": ..., "players": [...], "teams": [...]} from get_status().

Any failure exits non-zero with opengsq's message.
"""

import asyncio
import dataclasses
import json
import sys
import traceback

from opengsq.protocols import GameSpy1, Samp

TIMEOUT_SECONDS = 5.0


async def query_samp(host: str, port: int) -> dict:
    samp = Samp(host=host, port=port, timeout=TIMEOUT_SECONDS)
    status = await samp.get_status()
    rules = await samp.get_rules()
    players = await samp.get_players()
    return {
        "status": dataclasses.asdict(status),
        "rules": sorted([key, value] for key, value in rules),
        "players": [dataclasses.asdict(player) for player in players],
    }


async def query_gamespy1(host: str, port: int) -> dict:
    gamespy = GameSpy1(host=host, port=port, timeout=TIMEOUT_SECONDS)
    status = await gamespy.get_status()
    return {"info": status.info, "players": status.players, "teams": status.teams}


QUERIES = {"samp": query_samp, "gamespy1": query_gamespy1}


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in QUERIES:
        print(f"usage: {sys.argv[0]} {'|'.join(QUERIES)} <host> <port>", file=sys.stderr)
        return 2
    protocol, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    try:
        result = asyncio.run(QUERIES[protocol](host, port))
    except Exception:  # noqa: BLE001 - report whatever opengsq raised, then fail
        print(f"opengsq {protocol} {host}:{port} failed:", file=sys.stderr)
        traceback.print_exc()
        return 1
    # ASCII JSON: the output survives any locale the test runs under.
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
