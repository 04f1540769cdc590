#!/usr/bin/env bash
# Installs the third-party code the interop tests run against gsq: gamedig, rcon-client,
# minecraft-server-util and minecraft-protocol (a Minecraft server gsq queries) from npm
# (pinned in package-lock.json) into node_modules/, and opengsq, mcstatus, rcon, mcrcon, rcon_server and ts3 from PyPI
# (pinned in requirements.txt) into the venv .venv/. Installs Node.js or Python first if they
# are missing. Any failure, a registry that does not answer included, exits non-zero: the
# interop tests must fail, never skip, in CI.
set -euo pipefail
cd "$(dirname "$0")"

apt_install() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    echo "installing $* with apt-get"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

node_ok() {
    command -v node >/dev/null && command -v npm >/dev/null &&
        node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'
}

python_ok() {
    command -v python3 >/dev/null &&
        python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' 2>/dev/null
}

if ! node_ok; then
    apt_install nodejs npm
    node_ok || { echo "error: Node.js >= 18 with npm is required" >&2; exit 1; }
fi
if ! python_ok; then
    apt_install python3 python3-venv
    python_ok || { echo "error: Python >= 3.9 with venv is required" >&2; exit 1; }
fi

echo "node $(node --version), npm $(npm --version), $(python3 --version)"

npm ci --no-audit --no-fund
node --input-type=module -e "import { GameDig } from 'gamedig'; if (!GameDig) process.exit(1)"
node --input-type=module -e "import util from 'minecraft-server-util'; import mc from 'minecraft-protocol'; if (!util.status || !mc.createServer) process.exit(1)"
node --input-type=module -e "import { Rcon } from 'rcon-client'; if (!Rcon) process.exit(1)"

# A venv left by another Python (or a broken one) is rebuilt.
if ! .venv/bin/python -c 'import sys' 2>/dev/null; then
    rm -rf .venv
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --disable-pip-version-check --quiet -r requirements.txt
.venv/bin/python -c "import opengsq.protocols, ts3.query; from opengsq.protocols import Battlefield, GameSpy1, Samp, Source, TeamSpeak3, Unreal2"
.venv/bin/python -c 'from mcstatus import BedrockServer, JavaServer, LegacyServer'
.venv/bin/python -c 'from rcon.source import Client; from rcon.battleye import Client'
.venv/bin/python -c 'from mcrcon import MCRcon, MCRconException'
.venv/bin/python -c 'from rcon_server.rcon_server import RCONServer'

version() { node -p "require('./node_modules/$1/package.json').version"; }
echo "gamedig $(version gamedig), minecraft-server-util $(version minecraft-server-util)," \
    "minecraft-protocol $(version minecraft-protocol), rcon-client $(version rcon-client)," \
    "opengsq $(.venv/bin/python -m pip show opengsq | sed -n 's/^Version: //p')," \
    "mcstatus $(.venv/bin/python -m pip show mcstatus | sed -n 's/^Version: //p')," \
    "rcon $(.venv/bin/python -m pip show rcon | sed -n 's/^Version: //p')," \
    "mcrcon $(.venv/bin/python -m pip show mcrcon | sed -n 's/^Version: //p')," \
    "rcon_server $(.venv/bin/python -m pip show rcon_server | sed -n 's/^Version: //p')"
