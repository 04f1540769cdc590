"""Queries one server with opengsq and prints what opengsq reports, as JSON, on stdout.

    python opengsq_query.py samp|gamespy1|a2s|quake3|gamespy2|gamespy3|gamespy4|ase|doom3|unreal2|battlefield|teamspeak3 <host> <port>

The output holds opengsq's own results, converted to JSON without interpretation:
- samp: {"status": Status, "rules": ..., "players": [Player]} from get_status, get_rules and
  get_players. opengsq's get_rules returns a set of (key, value) pairs (a set comprehension
  where a dict was meant), so its pairs are printed as a list, sorted, as opengsq gives no order.
- gamespy1: {"info": ..., "players": [...], "teams": [...]} from get_status().
- a2s: {"info": SourceInfo, "players": [Player], "rules": ...} from the Source protocol's
  get_info, get_players and get_rules, in that order (each on a socket of its own, so each
  goes through the challenge exchange). get_rules returns a set of (name, value) pairs like
  Samp's, printed the same way. opengsq's enums (ServerType, Environment, Visibility, VAC) are
  IntEnums, which json would print as bare numbers; they are printed as "Class.Member" (for
  example "ServerType.Dedicated"), so what opengsq made of the byte shows. The extra data
  flag (edf), an int subclass, is printed as its number.
- quake3: {"info": ..., "status": {"info": ..., "players": [Player]}} from Quake3's get_info
  (opengsq sends `getinfo opengsq`) and get_status, both with colour codes kept, and
  "status_stripped" from get_status with opengsq's own colour stripping.
- gamespy2: {"info": ..., "players": [...], "teams": [...]} from GameSpy2's get_status with
  its default request (details, players and teams in one request).
- gamespy3: the same from GameSpy3's get_status with its `challenge_required` set: a class
  attribute (False on GameSpy3, True on its GameSpy4 subclass), not a constructor argument,
  so it is set on the instance. Without it opengsq sends the query with no challenge, which
  a server that requires one (as `gsq serve --gamespy3` does) answers with the challenge.
- gamespy4: {"info": ..., "players": [...], "teams": [...]} from GameSpy4's get_status
  (GameSpy 3 with the challenge, as Minecraft's query).
- ase: the Status dataclass from ASE's get_status (the All-Seeing Eye), players included.
- doom3: {"info": ..., "players": [...]} from Doom3's get_status (colour codes stripped, its
  default): the pairs plus its "version", and each player's fields in the first layout
  opengsq manages to read (Doom 3's, Quake 4's, then ETQW's).
- unreal2: {"details": ..., "rules": ..., "players": ...} from Unreal2's get_details (the
  Status dataclass), get_rules and get_players, each with opengsq's default colour stripping.
  Each is {"value": what opengsq returned} or, where opengsq raised, {"error": "Type: message"}:
  opengsq misreads some replies (a UTF-16 server name), and the test says which.
- battlefield: {"info": Info, "version": VersionInfo, "players": [...]} from Battlefield's
  get_info, get_version and get_players (Frostbite over TCP).
- teamspeak3: {"info": ..., "clients": [...], "channels": [...]} from TeamSpeak3's get_info,
  get_clients and get_channels, each on a connection of its own that first selects the virtual
  server on the voice port in the environment variable VOICE_PORT (9987 when unset).

Any failure exits non-zero with opengsq's message.
"""

import asyncio
import dataclasses
import enum
import json
import sys
import traceback

import os

from opengsq.protocols import (
    ASE,
    Battlefield,
    Doom3,
    GameSpy1,
    GameSpy2,
    GameSpy3,
    GameSpy4,
    Quake3,
    Samp,
    Source,
    TeamSpeak3,
    Unreal2,
)

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


def enum_members_named(value):
    """`value` with every Enum member in it replaced by "Class.Member"."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, dict):
        return {key: enum_members_named(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [enum_members_named(item) for item in value]
    return value


async def query_a2s(host: str, port: int) -> dict:
    source = Source(host=host, port=port, timeout=TIMEOUT_SECONDS)
    info = await source.get_info()
    players = await source.get_players()
    rules = await source.get_rules()
    return {
        "info": enum_members_named(dataclasses.asdict(info)),
        "players": [dataclasses.asdict(player) for player in players],
        "rules": sorted([name, value] for name, value in rules),
    }


async def query_quake3(host: str, port: int) -> dict:
    quake3 = Quake3(host=host, port=port, timeout=TIMEOUT_SECONDS)
    info = await quake3.get_info(strip_color=False)
    status = await quake3.get_status(strip_color=False)
    stripped = await quake3.get_status()
    return {
        "info": info,
        "status": dataclasses.asdict(status),
        "status_stripped": dataclasses.asdict(stripped),
    }


async def query_gamespy2(host: str, port: int) -> dict:
    gamespy = GameSpy2(host=host, port=port, timeout=TIMEOUT_SECONDS)
    status = await gamespy.get_status()
    return {"info": status.info, "players": status.players, "teams": status.teams}


async def query_gamespy3(host: str, port: int) -> dict:
    gamespy = GameSpy3(host=host, port=port, timeout=TIMEOUT_SECONDS)
    gamespy.challenge_required = True
    status = await gamespy.get_status()
    return {"info": status.info, "players": status.players, "teams": status.teams}


async def query_gamespy4(host: str, port: int) -> dict:
    gamespy = GameSpy4(host=host, port=port, timeout=TIMEOUT_SECONDS)
    status = await gamespy.get_status()
    return {"info": status.info, "players": status.players, "teams": status.teams}


async def query_ase(host: str, port: int) -> dict:
    eye = ASE(host=host, port=port, timeout=TIMEOUT_SECONDS)
    return dataclasses.asdict(await eye.get_status())


async def query_doom3(host: str, port: int) -> dict:
    doom3 = Doom3(host=host, port=port, timeout=TIMEOUT_SECONDS)
    status = await doom3.get_status()
    return {"info": status.info, "players": status.players}


async def query_unreal2(host: str, port: int) -> dict:
    unreal2 = Unreal2(host=host, port=port, timeout=TIMEOUT_SECONDS)

    async def outcome(call, convert):
        try:
            return {"value": convert(await call())}
        except Exception as error:  # noqa: BLE001 - the test checks what opengsq raised
            return {"error": f"{type(error).__name__}: {error}"}

    return {
        "details": await outcome(unreal2.get_details, dataclasses.asdict),
        "rules": await outcome(unreal2.get_rules, lambda rules: rules),
        "players": await outcome(
            unreal2.get_players,
            lambda players: [dataclasses.asdict(player) for player in players],
        ),
    }


async def query_battlefield(host: str, port: int) -> dict:
    battlefield = Battlefield(host=host, port=port, timeout=TIMEOUT_SECONDS)
    info = await battlefield.get_info()
    version = await battlefield.get_version()
    players = await battlefield.get_players()
    return {
        "info": dataclasses.asdict(info),
        "version": dataclasses.asdict(version),
        "players": players,
    }


async def query_teamspeak3(host: str, port: int) -> dict:
    voice_port = int(os.environ.get("VOICE_PORT", "9987"))
    teamspeak = TeamSpeak3(host=host, port=port, voice_port=voice_port, timeout=TIMEOUT_SECONDS)
    info = await teamspeak.get_info()
    clients = await teamspeak.get_clients()
    channels = await teamspeak.get_channels()
    return {"info": info, "clients": clients, "channels": channels}


QUERIES = {
    "samp": query_samp,
    "gamespy1": query_gamespy1,
    "a2s": query_a2s,
    "quake3": query_quake3,
    "gamespy2": query_gamespy2,
    "gamespy3": query_gamespy3,
    "gamespy4": query_gamespy4,
    "ase": query_ase,
    "doom3": query_doom3,
    "unreal2": query_unreal2,
    "battlefield": query_battlefield,
    "teamspeak3": query_teamspeak3,
}


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
