#!/usr/bin/env bash
# Seeds each fuzz target's corpus with the project's fixtures, and with the external vectors
# when QUERY_VECTORS (default ../shared/vectors beside the workspace) is there.
set -euo pipefail
cd "$(dirname "$0")"
fixtures=../specs/fixtures
vectors=${QUERY_VECTORS:-../../shared/vectors}

hex_to() { xxd -r -p <(tr -s ' \n' ' ' <"$1") >"$2"; }

mkdir -p corpus/sqp corpus/onequery corpus/samp corpus/gamespy1 corpus/responders corpus/a2s
# Every target gets the repository's fixtures, so seeding needs nothing outside it.
for f in "$fixtures"/sqp/*request.hex; do hex_to "$f" "corpus/sqp/$(basename "$f" .hex)"; done
# The SQP target reads the requested chunk bits from the first byte, then the packet.
for f in "$fixtures"/sqp/*response.hex; do
  { printf '\x1f'; xxd -r -p <(tr -s ' \n' ' ' <"$f"); } >"corpus/sqp/$(basename "$f" .hex)"
done
for f in "$fixtures"/onequery/*.hex; do hex_to "$f" "corpus/onequery/$(basename "$f" .hex)"; done
for f in "$fixtures"/samp/*.hex; do hex_to "$f" "corpus/samp/$(basename "$f" .hex)"; done
for f in "$fixtures"/gamespy1/*.hex; do hex_to "$f" "corpus/gamespy1/$(basename "$f" .hex)"; done
# The fixtures hold no GameSpy reply: a small two-part one, parts cut at 0xff as the target does.
printf '\\hostname\\seed\\numplayers\\1\\player_0\\a\\queryid\\7.2\\final\\\xff\\mapname\\m\\queryid\\7.1' \
  >corpus/gamespy1/reply_two_parts
# Doom 3 engine: ETQW's infoResponse (the captures join below when the vectors are there).
mkdir -p corpus/doom3
for f in "$fixtures"/doom3/*.hex; do hex_to "$f" "corpus/doom3/$(basename "$f" .hex)"; done
# The replay target reads a byte picking the protocol (its index in Protocol::ALL, the SQP
# chunks above it), then the reply datagrams, cut at 0xff bytes.
mkdir -p corpus/replay
unhex() { xxd -r -p <(tr -s ' \n' ' ' <"$1"); }
{ printf '\x7c'; unhex "$fixtures"/sqp/sqp_challenge_response.hex; printf '\xff'
  unhex "$fixtures"/sqp/sqp_query_response.hex; } >corpus/replay/sqp
{ printf '\x7d'; unhex "$fixtures"/onequery/onequery_challenge_response.hex; printf '\xff'
  unhex "$fixtures"/onequery/onequery_basic_response.hex; printf '\xff'
  unhex "$fixtures"/onequery/onequery_players_response.hex; } >corpus/replay/onequery
{ printf '\x7e'; unhex "$fixtures"/samp/samp_c_response.hex; printf '\xff'
  unhex "$fixtures"/samp/samp_o_response.hex; } >corpus/replay/samp
{ printf '\x7f'; cat corpus/gamespy1/reply_two_parts; } >corpus/replay/gamespy1
# The responders target reads a source byte, then a datagram: every request fixture.
for f in "$fixtures"/*/*request*.hex; do
  { printf '\x00'; xxd -r -p <(tr -s ' \n' ' ' <"$f"); } >"corpus/responders/$(basename "$f" .hex)"
done
# Minecraft Java Edition: a handshake, a status request, a ping, a status response.
mkdir -p corpus/minecraft_java corpus/battleye
printf '\x0f\x00\x2f\x09localhost\x63\xdd\x01' >corpus/minecraft_java/handshake
printf '\x01\x00' >corpus/minecraft_java/status_request
printf '\x09\x01\x00\x00\x01\x8b\x2f\x6a\x9c\x40' >corpus/minecraft_java/ping
printf '\x1e\x00\x1c{"description":{"text":"x"}}' >corpus/minecraft_java/status_response
# BattlEye: the first byte asks the target to fix the checksum up; login, command, keepalive,
# a server message and its acknowledgement, with their real checksums.
printf '\x00BE\xde\x26\x2d\x52\xff\x00password' >corpus/battleye/login
printf '\x00BE\xf9\x37\x94\xae\xff\x01\x00players' >corpus/battleye/command
printf '\x00BE\xbe\xdc\xc2\x58\xff\x01\x00' >corpus/battleye/keepalive
printf '\x01BE\x00\x00\x00\x00\xff\x02\x05RCon admin #0 logged in' >corpus/battleye/message
printf '\x00BE\xf2\x7b\x85\x03\xff\x02\x05' >corpus/battleye/ack
# Frostbite: a client's request, and the real servers' streams when the vectors are there.
mkdir -p corpus/frostbite
printf '\x07\x00\x00\x00\x24\x00\x00\x00\x02\x00\x00\x00\x0b\x00\x00\x00listPlayers\x00\x03\x00\x00\x00all\x00' \
  >corpus/frostbite/list_players
# The stream targets: pieces cut at 0xf7. A Frostbite client's request (for the responder),
# and a small ServerQuery exchange: banner, welcome, `use`, serverinfo, clientlist, channellist.
mkdir -p corpus/frostbite_stream corpus/teamspeak3_stream
cp corpus/frostbite/list_players corpus/frostbite_stream/list_players
printf 'TS3\n\rWelcome\n\rerror id=0 msg=ok\n\r\xf7virtualserver_name=A\\sB virtualserver_maxclients=8 virtualserver_clientsonline=2 virtualserver_queryclientsonline=1\n\rerror id=0 msg=ok\n\rclid=1 cid=1 client_database_id=1 client_nickname=Ann client_type=0|clid=2 cid=1 client_database_id=2 client_nickname=q client_type=1\n\rerror id=0 msg=ok\n\r\xf7cid=1 pid=0 channel_order=0 channel_name=Lobby channel_topic total_clients=2 channel_needed_subscribe_power=0\n\rerror id=0 msg=ok\n\r' \
  >corpus/teamspeak3_stream/exchange
printf 'use port=9987\nlogin serveradmin pw\nserverinfo\nclientlist\nchannellist\nquit\n' \
  >corpus/teamspeak3_stream/commands
# A2S requests have no fixture: INFO without and with a challenge, PLAYER and RULES.
printf '\x00\xff\xff\xff\xffTSource Engine Query\x00' >corpus/responders/a2s_info_request
printf '\x00\xff\xff\xff\xffTSource Engine Query\x00\x01\x02\x03\x04' \
  >corpus/responders/a2s_info_challenge_request
printf '\x00\xff\xff\xff\xffU\xff\xff\xff\xff' >corpus/responders/a2s_players_request
printf '\x00\xff\xff\xff\xffV\x01\x02\x03\x04' >corpus/responders/a2s_rules_request
# Unreal 2 requests have none either: UT2004's details, UT2003's (and qstat's) everything.
printf '\x00\x79\x00\x00\x00\x00' >corpus/responders/unreal2_details_request
printf '\x00\x78\x00\x00\x00\x03' >corpus/responders/unreal2_everything_request

# Quake 3 shapes real and hostile servers send (separator 0x01, then the body or parts, each
# given the statusResponse header by the target): three numbers before a name, a cut last
# line, an overflowing score, a line that is no player, blank lines, and many small parts.
mkdir -p corpus/quake3
q3=$'\xff\xff\xff\xffstatusResponse\n'
printf '\x01%s\\sv_hostname\\s\n1 2 "a"\n3 4 1 "team"\n5 6 7 8 "deaths" x\n' "$q3" >corpus/quake3/numbers
printf '\x01%s\\sv_hostname\\s\n1 2 "a"\n3 4 "cu' "$q3" >corpus/quake3/cut_last_line
printf '\x01%s\\sv_hostname\\s\n99999999999999999999 2 "big"\nnot a player\n\n7 8 "z"\n\n' "$q3" \
  >corpus/quake3/bad_lines
printf '\x01\\sv_hostname\\s\\pad\\%01100d\n0 1 "a"\n' 0 >corpus/quake3/long_first
{ printf '\x01\\sv_hostname\\s\n'; for i in $(seq 1 40); do printf '\x01%d 5 "p%d"\n' "$i" "$i"; done; } \
  >corpus/quake3/many_parts
printf '\x01\xff\xff\xff\xffgetinfo challenge\n' >corpus/quake3/getinfo_request
# Hostile shapes (the clients' regression tests on loopback, as seeds): GameSpy 3 count bytes
# past the values held and a missing middle part, A2S copies of part 0 beside other ids and a
# compressed reply with a bad CRC32 resent, and, through the replay, the GameSpy ones again
# and a GameSpy v1 reply missing a part.
mkdir -p corpus/gamespy3 corpus/a2s corpus/replay
python3 - <<'PY'
import bz2, struct, zlib

def write(path, data):
    open(path, "wb").write(data)

def cut_byte(parts):
    return next(b for b in range(1, 256) if all(bytes([b]) not in p for p in parts))

def gs3_part(number, body, sid=b"\x00\x00\x00\x05"):
    return b"\x00" + sid + b"splitnum\x00" + bytes([number]) + body

padding = gs3_part(0x80, b"\x00hostname\x00Evil\x00\x00\x01player_\x00\x00Ann\x00\x00"
                   + b"".join(b"c%d_\x00\xffv\x00\x00" % i for i in range(64)) + b"\x00")
middle = [gs3_part(0, b"\x00hostname\x00Fort\x00\x00\x01player_\x00\x00Ann\x00"),
          gs3_part(0x82, b"\x01player_\x00\x02Cy\x00\x00\x00")]
for name, parts in [("hostile_padding", [padding]), ("hostile_missing_middle", middle)]:
    cut = cut_byte(parts)
    write(f"corpus/gamespy3/{name}", bytes([cut]) + bytes([cut]).join(parts))

def a2s_part(reply_id, total, number, payload):
    return struct.pack("<IBBH", reply_id, total, number, 1248) + payload

players = b"\xff\xff\xff\xffD\x02" + b"".join(
    bytes([i]) + name + b"\x00" + struct.pack("<if", 7, 1.5) for i, name in enumerate([b"Ann", b"Bob"]))
copies = [a2s_part(77, 2, 0, players[:12])] * 70 + [
    a2s_part(1000 + i, 2, 0, players[:12]) for i in range(12)] + [a2s_part(77, 2, 1, players[12:])]
whole = players + bytes((i // 97) % 256 for i in range(4096))
compressed = struct.pack("<II", len(whole), zlib.crc32(whole) ^ 1) + bz2.compress(whole)
bad_crc = [a2s_part(0x80000005, 1, 0, compressed)] * 3
for name, parts in [("hostile_copies", copies), ("hostile_bad_crc", bad_crc)]:
    # The target cuts at its first byte, and reads The Ship when it is odd.
    cut = next(b for b in range(2, 256, 2) if all(bytes([b]) not in p for p in parts))
    write(f"corpus/a2s/{name}", bytes([cut]) + bytes([cut]).join(parts))

# The replay: protocol index (GameSpy v1 3, GameSpy 3 7), gap 0, a 2 s deadline, the default
# byte cap; then the replies cut at 0xff, which they must not hold.
write("corpus/replay/gamespy1_missing_part",
      b"\x03\x00\xc8\xff\\hostname\\Gap\\queryid\\4.1\xff\\player_1\\Bo\\queryid\\4.3\\final\\")
for name, parts in [("gamespy3_padding", [padding.replace(b"\xff", b"\xfe")]),
                    ("gamespy3_missing_middle", middle)]:
    write(f"corpus/replay/{name}", b"\x07\x00\xc8\xff" + b"\xff".join(parts))
PY

if [ -d "$vectors" ]; then
  for f in "$vectors"/sqp-reference/*response*; do
    { printf '\x1f'; cat "$f"; } >"corpus/sqp/ref_$(basename "$f")"
  done
  # Captures hold several datagrams joined by "\n||\n"; split them into one file each.
  for f in "$vectors"/captures/*_response.txt; do
    name=$(basename "$f" _response.txt)
    case "$name" in samp*) target=samp ;; *) target=gamespy1 ;; esac
    python3 - "$f" "corpus/$target/$name" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
for i, part in enumerate(p for p in data.split(b"\n||\n") if p):
    open(f"{sys.argv[2]}_{i}", "wb").write(part)
PY
  done
  # A2S replies of real servers: the selector byte 0x00 (not The Ship), then each datagram;
  # and a capture's split parts together after the selector 0x08, which also separates them.
  for f in "$vectors"/captures/gameq/a2s/*_response.txt; do
    python3 - "$f" "corpus/a2s/$(basename "$f" _response.txt)" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
parts = [p for p in data.split(b"\n||\n") if p]
for i, part in enumerate(parts):
    open(f"{sys.argv[2]}_{i}", "wb").write(b"\x00" + part)
split = [p[4:] for p in parts if p.startswith(b"\xfe\xff\xff\xff")]
if split:
    open(f"{sys.argv[2]}_split", "wb").write(b"\x08" + b"\x08".join(split))
PY
  done
  mkdir -p corpus/doom3
  for f in "$vectors"/captures/gameq/doom3/*_response.txt; do
    cp "$f" "corpus/doom3/$(basename "$f" _response.txt)"
  done
  # Unreal 2 replies: a capture's datagrams joined by 0xf7, the target's separator.
  mkdir -p corpus/unreal2
  for f in "$vectors"/captures/gameq/unreal2/*_response.txt; do
    python3 -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read().replace(b"\n||\n", b"\xf7"))' \
      "$f" "corpus/unreal2/$(basename "$f" _response.txt)"
  done
  mkdir -p corpus/ase
  for f in "$vectors"/captures/gameq/ase/*_response.txt; do
    cp "$f" "corpus/ase/$(basename "$f" _response.txt)"
  done
  for f in "$vectors"/captures/gameq/frostbite/*_response.txt; do
    python3 -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read().replace(b"\n||\n", b""))' \
      "$f" "corpus/frostbite/$(basename "$f" _response.txt)"
    python3 -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read().replace(b"\n||\n", b"\xf7"))' \
      "$f" "corpus/frostbite_stream/$(basename "$f" _response.txt)"
  done
  for f in "$vectors"/captures/gameq/teamspeak3/*_response.txt; do
    python3 -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read().replace(b"\n||\n", b"\xf7"))' \
      "$f" "corpus/teamspeak3_stream/$(basename "$f" _response.txt)"
  done
  # Quake 3 replies: the separator 0x01, then each datagram whole (for the decoders); and its
  # body without the header, cut into two parts between player lines (for the join).
  mkdir -p corpus/quake3
  for f in "$vectors"/captures/gameq/quake3/*_response.txt; do
    python3 - "$f" "corpus/quake3/$(basename "$f" _response.txt)" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
for i, part in enumerate(p for p in data.split(b"\n||\n") if p):
    open(f"{sys.argv[2]}_{i}", "wb").write(b"\x01" + part)
    body = part[len(b"\xff\xff\xff\xffstatusResponse\n"):]
    lines = body.split(b"\n")
    half = max(1, len(lines) // 2)
    joined = b"\n".join(lines[:half]) + b"\n\x01" + b"\n".join(lines[half:])
    open(f"{sys.argv[2]}_{i}_parts", "wb").write(b"\x01" + joined)
PY
  done
fi
# RCON: srcds's empty value and auth response, a two-part answer ended by the marker's
# echo and srcds's extra packet (for the client); an auth, two commands and an end marker
# (for the server's connection).
mkdir -p corpus/rcon
printf '\x0a\0\0\0\x01\0\0\0\0\0\0\0\0\0\x0a\0\0\0\x01\0\0\0\x02\0\0\0\0\0\xf7\x0c\0\0\0\x02\0\0\0\0\0\0\0ab\0\0\x0c\0\0\0\x02\0\0\0\0\0\0\0cd\0\0\x0a\0\0\0\x03\0\0\0\0\0\0\0\0\0\x0e\0\0\0\x03\0\0\0\0\0\0\0\0\x01\0\0\0\0' \
  >corpus/rcon/client_session
printf '\x0e\0\0\0\x01\0\0\0\x03\0\0\0fuzz\0\0\x10\0\0\0\x02\0\0\0\x02\0\0\0status\0\0\xf7\x0e\0\0\0\x03\0\0\0\x02\0\0\0echo\0\0\x0a\0\0\0\x04\0\0\0\0\0\0\0\0\0' \
  >corpus/rcon/server_connection
echo "corpus: $(ls corpus/* | wc -l) files"
